"""Build strategies from plain JSON configuration (the CLI, the inspector and reports use it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass, replace
from typing import Any, cast

from compactlens.engine.profiles import check_profile, get_profile
from compactlens.engine.strategies.base import Strategy
from compactlens.engine.strategies.limits import check_config_size
from compactlens.engine.strategies.pipeline import PipelineStrategy, TokenBudgetComposedStrategy
from compactlens.engine.strategies.registry import strategy_info, strategy_type_names
from compactlens.engine.triggers import Trigger
from compactlens.model.errors import ConfigError
from compactlens.summarizers.base import Summarizer

#: Every config ``type``, in the registry's order.
STRATEGY_TYPES = strategy_type_names()


def _trigger(value: Any, where: str) -> Trigger | None:
    if value is None:
        return None
    try:
        return Trigger.from_dict(value)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def with_profile(strategy: Strategy, profile: str | None) -> Strategy:
    """``strategy`` (and every stage of a pipeline) under ``profile``.

    Stages whose ``profile`` is unset take it (their unset parameters then take its
    defaults); a token-budget composition takes the profile's ``drop_system_if_needed``
    when the profile allows dropping system groups (MAF's strict fallback). None
    leaves the strategy as it is.
    """
    if profile is None:
        return strategy
    name = check_profile(profile)
    if isinstance(strategy, PipelineStrategy):
        children = tuple(with_profile(c, name) for c in strategy.strategies)
        return PipelineStrategy(*children, target=strategy.target, label=strategy.label)
    if isinstance(strategy, TokenBudgetComposedStrategy):
        children = tuple(with_profile(c, name) for c in strategy.strategies)
        drop = strategy.drop_system_if_needed or get_profile(name).drop_system_if_needed
        return replace(strategy, strategies=children, drop_system_if_needed=drop)
    has_profile = is_dataclass(strategy) and any(f.name == "profile" for f in fields(strategy))
    if has_profile and getattr(strategy, "profile", None) is None:
        changed: Strategy = replace(cast(Any, strategy), profile=name)
        return changed
    return strategy


def strategy_from_config(
    config: Mapping[str, Any],
    *,
    summarizer: Summarizer | None = None,
    where: str = "strategy",
    profile: str | None = None,
) -> Strategy:
    """Build a strategy from a dict such as ``{"type": "truncation", "max_n": 32000, ...}``.

    Triggers are dicts as produced by ``Trigger.to_dict()``. Unknown keys are an error
    naming ``where`` (for example ``strategy.strategies[1].keep_last``). A ``"profile"``
    key (``compactlens``, ``maf``, ``deepagents``), or ``profile``, sets the defaults of
    the strategy and of its stages (see :func:`with_profile`). A configuration over the
    bounds of :mod:`~compactlens.engine.strategies.limits` (64 strategies, pipelines 8
    deep, texts of 100,000 characters...) is refused before anything is built.
    """
    check_config_size(config, where)
    return _from_config(config, summarizer=summarizer, where=where, profile=profile)


def _from_config(
    config: Mapping[str, Any],
    *,
    summarizer: Summarizer | None,
    where: str,
    profile: str | None = None,
) -> Strategy:
    """:func:`strategy_from_config` without the size check (done once, at the top)."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"{where}: expected an object, got {type(config).__name__}")
    if "profile" in config:
        try:
            own = check_profile(config["profile"])
        except ValueError as exc:
            raise ConfigError(f"{where}.{exc}") from None
        config = {k: v for k, v in config.items() if k != "profile"}
        built = _from_config(config, summarizer=summarizer, where=where)
        return with_profile(built, own)
    if profile is not None:
        built = _from_config(config, summarizer=summarizer, where=where)
        return with_profile(built, profile)
    kind = config.get("type")
    info = strategy_info(kind) if isinstance(kind, str) else None
    if info is None:
        raise ConfigError(
            f"{where}.type: unknown strategy {kind!r}; expected one of {STRATEGY_TYPES}"
        )
    params = {k: v for k, v in config.items() if k != "type"}
    for key in ("trigger", "target"):
        if key in params:
            params[key] = _trigger(params[key], f"{where}.{key}")
    if info.composite:
        children_cfg = params.pop("strategies", [])
        if not isinstance(children_cfg, list):
            raise ConfigError(f"{where}.strategies: expected a list")
        children = [
            _from_config(c, summarizer=summarizer, where=f"{where}.strategies[{i}]")
            for i, c in enumerate(children_cfg)
        ]
        if info.cls is PipelineStrategy:
            unknown = set(params) - {"target", "label"}
            if unknown:
                raise ConfigError(f"{where}: unknown keys {sorted(unknown)}")
            return PipelineStrategy(*children, **params)
        params["strategies"] = tuple(children)
    elif info.needs_summarizer:
        if summarizer is None:
            raise ConfigError(f"{where}: a {kind} stage needs a summarizer")
        params.pop("summarizer", None)
        params["summarizer"] = summarizer
    cls: Any = info.cls
    fields = set(getattr(cls, "__dataclass_fields__", {}))
    unknown = set(params) - fields
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)} for {kind}")
    try:
        strategy: Strategy = cls(**params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return strategy
