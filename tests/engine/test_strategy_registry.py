"""The strategy registry lists every strategy once: no strategy class outside it, every
entry builds from its config and round-trips through to_dict, its parameters are fields
of its class, and every place that lists strategies agrees with it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import fields, is_dataclass
from typing import Any

import pytest

import compactlens
import compactlens.engine as engine
import compactlens.engine.strategies as strategies_package
from compactlens.analysis import strategy_triggers
from compactlens.engine import (
    STRATEGY_REGISTRY,
    STRATEGY_TYPES,
    StrategyInfo,
    Trigger,
    builder_strategies,
    simple_strategy_names,
    strategy_from_config,
    strategy_info,
    tokens_exceed,
)
from compactlens.summarizers import ExtractiveSummarizer

#: The members of the Strategy protocol a class must have to count as a strategy.
PROTOCOL = ("name", "run", "protections", "variants", "to_dict")


def _strategy_classes() -> set[type]:
    """Every class defined in a compactlens.engine.strategies module that implements the
    Strategy protocol."""
    found: set[type] = set()
    for module_info in pkgutil.iter_modules(strategies_package.__path__):
        module = importlib.import_module(f"{strategies_package.__name__}.{module_info.name}")
        for _name, obj in inspect.getmembers(module, inspect.isclass):
            if getattr(obj, "_is_protocol", False) or obj.__module__ != module.__name__:
                continue  # the Strategy protocol itself, or a class imported from elsewhere
            if all(hasattr(obj, m) for m in PROTOCOL):
                found.add(obj)
    return found


def test_every_strategy_class_is_in_the_registry() -> None:
    listed = {info.cls for info in STRATEGY_REGISTRY}
    missing = sorted(c.__name__ for c in _strategy_classes() - listed)
    assert missing == [], "add these strategies to engine/strategies/registry.py"
    assert len(listed) == len(STRATEGY_REGISTRY)


def test_names_are_unique_and_are_the_config_types() -> None:
    names = [info.name for info in STRATEGY_REGISTRY]
    assert len(set(names)) == len(names)
    assert tuple(names) == STRATEGY_TYPES
    assert simple_strategy_names() == tuple(i.name for i in STRATEGY_REGISTRY if not i.composite)
    for info in STRATEGY_REGISTRY:
        assert strategy_info(info.name) is info
    assert strategy_info("no-such-strategy") is None


@pytest.mark.parametrize("info", STRATEGY_REGISTRY, ids=lambda i: i.name)
def test_every_strategy_is_exported_everywhere_strategies_are(info: StrategyInfo) -> None:
    name = info.cls.__name__
    for module in (compactlens, engine, strategies_package):
        assert getattr(module, name) is info.cls, module.__name__
        assert name in module.__all__, module.__name__


def _example_config(info: StrategyInfo) -> dict[str, Any]:
    """A config of ``info``'s type with the builder's defaults (and a trigger or stages)."""
    config: dict[str, Any] = {"type": info.name}
    config.update({p.name: p.default for p in info.params if p.default is not None})
    if info.takes_trigger:
        config["trigger"] = tokens_exceed(4000).to_dict()
    if info.composite:
        config["strategies"] = [
            {"type": "truncation", "trigger": tokens_exceed(4000).to_dict()},
            {"type": "clamp", "max_tokens": 500},
        ]
    return config


@pytest.mark.parametrize("info", STRATEGY_REGISTRY, ids=lambda i: i.name)
def test_every_entry_round_trips_through_its_config(info: StrategyInfo) -> None:
    summarizer = ExtractiveSummarizer()
    built = strategy_from_config(_example_config(info), summarizer=summarizer)
    assert type(built) is info.cls
    config = built.to_dict()
    assert config["type"] == info.name
    again = strategy_from_config(config, summarizer=summarizer)
    assert type(again) is info.cls
    assert again.to_dict() == config


@pytest.mark.parametrize("info", STRATEGY_REGISTRY, ids=lambda i: i.name)
def test_parameters_are_fields_with_valid_defaults(info: StrategyInfo) -> None:
    assert info.label and info.description and info.starts_on
    names = {f.name for f in fields(info.cls)} if is_dataclass(info.cls) else set()
    for p in info.params:
        assert p.name in names, f"{info.name}.{p.name} is not a field of {info.cls.__name__}"
        assert p.label
        if p.kind == "choice":
            assert p.default in p.choices
        if p.kind == "int":
            assert isinstance(p.default, int) and p.default >= p.minimum
        if p.kind == "bool":
            assert isinstance(p.default, bool)
    if info.needs_summarizer:
        with pytest.raises(ValueError, match="needs a summarizer"):
            strategy_from_config(_example_config(info))


def test_the_builder_offers_every_non_pipeline_strategy_once() -> None:
    offered = [info.name for info in builder_strategies()]
    assert len(set(offered)) == len(offered)
    assert set(offered) == {i.name for i in STRATEGY_REGISTRY if i.builder_rank is not None}
    assert "pipeline" not in offered  # the builder's list of stages is the pipeline


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"type": "truncation", "max_n": 900}, [Trigger("exceed", "tokens", 900)]),
        ({"type": "sliding_window", "keep_last_turns": 3}, [Trigger("exceed", "turns", 3)]),
        ({"type": "sliding_window", "keep_last_groups": 7}, [Trigger("exceed", "groups", 7)]),
        (
            {"type": "summarization", "target_count": 4, "threshold": 2},
            [Trigger("exceed", "messages", 6)],
        ),
        (
            {
                "type": "token_budget",
                "token_budget": 5000,
                "strategies": [{"type": "clamp", "trigger": tokens_exceed(100).to_dict()}],
            },
            [Trigger("exceed", "tokens", 5000), Trigger("exceed", "tokens", 100)],
        ),
        ({"type": "clamp", "max_tokens": 10}, []),
    ],
)
def test_retrigger_reads_each_types_shorthand_from_the_registry(
    config: dict[str, Any], expected: list[Trigger]
) -> None:
    assert list(strategy_triggers(config)) == expected
