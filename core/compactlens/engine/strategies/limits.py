"""Bounds on a strategy configuration read from outside (a shared link, a JSON file, the
CLI's ``--config``), checked before anything is built.

A configuration is small: a pipeline of a few stages, each with a handful of numbers and
short texts. One that is not (thousands of stages unpacked from a short link, pipelines
nested hundreds deep, a megabyte prompt) would cost seconds to minutes of CPU to build and
run, so it is refused with a :class:`~compactlens.model.errors.ConfigError` naming where
the bound was passed. The walk stops at the first bound passed, so checking costs at most
the bounds themselves, whatever the input's size.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compactlens.model.errors import ConfigError


@dataclass(frozen=True, slots=True)
class ConfigLimits:
    """The bounds: strategies in the whole tree, pipeline nesting, JSON nesting, items in one
    list or object, and characters in one text."""

    max_strategies: int = 64
    max_pipeline_depth: int = 8
    max_depth: int = 24
    max_items: int = 1_000
    max_text: int = 100_000


DEFAULT_LIMITS = ConfigLimits()


def check_config_size(config: Any, where: str, limits: ConfigLimits = DEFAULT_LIMITS) -> None:
    """Raise :class:`ConfigError` naming the place where ``config`` passes a bound."""
    _Walk(limits).value(config, where, 0, 0)


class _Walk:
    """One walk over a configuration, counting strategies as it goes."""

    def __init__(self, limits: ConfigLimits) -> None:
        self.limits = limits
        self.strategies = 0

    def value(self, value: Any, where: str, depth: int, pipelines: int) -> None:
        limits = self.limits
        if depth > limits.max_depth:
            raise ConfigError(f"{where}: nested more than {limits.max_depth} levels deep")
        if isinstance(value, str):
            if len(value) > limits.max_text:
                raise ConfigError(
                    f"{where}: a text of {len(value):,} characters (at most {limits.max_text:,})"
                )
        elif isinstance(value, Mapping):
            self.mapping(value, where, depth, pipelines)
        elif isinstance(value, list | tuple):
            if len(value) > limits.max_items:
                raise ConfigError(f"{where}: {len(value):,} items (at most {limits.max_items:,})")
            for i, item in enumerate(value):
                self.value(item, f"{where}[{i}]", depth + 1, pipelines)

    def mapping(self, value: Mapping[Any, Any], where: str, depth: int, pipelines: int) -> None:
        limits = self.limits
        if len(value) > limits.max_items:
            raise ConfigError(f"{where}: {len(value):,} keys (at most {limits.max_items:,})")
        if "type" in value:
            self.strategies += 1
            if self.strategies > limits.max_strategies:
                raise ConfigError(
                    f"{where}: more than {limits.max_strategies} strategies in one configuration"
                )
        if "strategies" in value:
            stages = value["strategies"]
            if isinstance(stages, list | tuple) and len(stages) > limits.max_strategies:
                raise ConfigError(
                    f"{where}.strategies: {len(stages):,} strategies "
                    f"(at most {limits.max_strategies} in one configuration)"
                )
            pipelines += 1
            if pipelines > limits.max_pipeline_depth:
                raise ConfigError(
                    f"{where}.strategies: pipelines nested more than "
                    f"{limits.max_pipeline_depth} deep"
                )
        for key, item in value.items():
            self.value(key, f"{where} (a key)", depth + 1, pipelines)
            self.value(item, f"{where}.{key}", depth + 1, pipelines)


__all__ = ["DEFAULT_LIMITS", "ConfigLimits", "check_config_size"]
