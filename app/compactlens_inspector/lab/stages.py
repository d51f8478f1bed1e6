"""The stage types the strategy builder offers, their parameters, and trigger helpers.

The stage types are read from the library's strategy registry, where each strategy's
label, explanation and parameters are declared once.

Stages and triggers are plain dicts in the shape
:func:`compactlens.engine.strategies.config.strategy_from_config` and
``Trigger.to_dict()`` use. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compactlens import Trigger
from compactlens.engine import StrategyParam, builder_strategies
from compactlens_inspector.style.numbers import group_digits
from compactlens_inspector.style.wording import condition_words

#: One editable parameter of a stage: the strategy registry's own type.
Param = StrategyParam


@dataclass(frozen=True, slots=True)
class StageType:
    """A strategy the builder can add, with its parameters."""

    type: str
    label: str
    description: str
    params: tuple[Param, ...]
    has_trigger: bool = True


#: The builder's stage types, in its menu's order: labels, parameters, defaults and bounds
#: all come from the library's strategy registry (compactlens.engine.STRATEGY_REGISTRY).
STAGE_TYPES: dict[str, StageType] = {
    info.name: StageType(info.name, info.label, info.description, info.params, info.takes_trigger)
    for info in builder_strategies()
}

# -- triggers ---------------------------------------------------------------------------

#: Trigger choices of the builder: label -> (op, metric) (metric "" for op-only triggers).
TRIGGER_CHOICES: dict[str, tuple[str, str]] = {
    "none": ("", ""),
    "more than N tokens": ("exceed", "tokens"),
    "more than N messages": ("exceed", "messages"),
    "more than N turns": ("exceed", "turns"),
    "more than N groups": ("exceed", "groups"),
    "has tool calls": ("has_tool_calls", ""),
    "always": ("always", ""),
}

#: Target choices: label -> (op, metric); "default" is the negation of the trigger.
TARGET_CHOICES: dict[str, tuple[str, str]] = {
    "default (opposite of trigger)": ("", ""),
    "at most N tokens": ("at_most", "tokens"),
    "fewer than N tokens": ("below", "tokens"),
    "at most N messages": ("at_most", "messages"),
    "at most N groups": ("at_most", "groups"),
    "at most N turns": ("at_most", "turns"),
}

CUSTOM = "custom (from configuration)"


def trigger_dict(op: str, metric: str = "", n: int = 0) -> dict[str, Any] | None:
    """A trigger as ``Trigger.to_dict()`` writes it, or None for an empty op."""
    if not op:
        return None
    if metric:
        return {"op": op, "metric": metric, "n": int(n)}
    return {"op": op}


def trigger_choice(
    data: Mapping[str, Any] | None, choices: Mapping[str, tuple[str, str]]
) -> tuple[str, int | None]:
    """The builder choice and threshold for a trigger dict (``CUSTOM`` when it has none)."""
    if data is None:
        return next(iter(choices)), None
    op = str(data.get("op", ""))
    metric = str(data.get("metric", ""))
    for label, (c_op, c_metric) in choices.items():
        if c_op == op and c_metric == metric and c_op:
            n = data.get("n")
            return label, int(n) if isinstance(n, int) else None
    return CUSTOM, None


def describe_trigger(data: Mapping[str, Any] | None) -> str:
    """``more than 8,000 tokens`` for a trigger dict, ``none`` for None (prose: the
    vocabulary's words, never ``tokens > 8000``)."""
    if data is None:
        return "none"
    try:
        return condition_words(Trigger.from_dict(dict(data)).describe())
    except ValueError as exc:
        return f"invalid trigger: {exc}"


def token_limit(data: Mapping[str, Any] | None) -> int | None:
    """The token ceiling of a target dict (``tokens <= n`` gives n), else None."""
    if data is None:
        return None
    try:
        return Trigger.from_dict(dict(data)).token_limit
    except ValueError:
        return None


def trigger_tokens(data: Mapping[str, Any] | None) -> int | None:
    """The token threshold of a ``tokens > n`` trigger, else None."""
    if data is None:
        return None
    if data.get("op") == "exceed" and data.get("metric") == "tokens":
        n = data.get("n")
        return int(n) if isinstance(n, int) else None
    if data.get("op") in ("all", "any"):
        for child in data.get("children", []):
            found = trigger_tokens(child)
            if found is not None:
                return found
    return None


# -- stages ------------------------------------------------------------------------------


def default_stage(kind: str, budget: int) -> dict[str, Any]:
    """A new stage of ``kind`` with default parameters and a ``tokens > budget`` trigger."""
    spec = STAGE_TYPES[kind]
    stage: dict[str, Any] = {"type": kind}
    if spec.has_trigger:
        stage["trigger"] = trigger_dict("exceed", "tokens", budget)
    for p in spec.params:
        stage[p.name] = p.default
    if kind == "token_budget":
        stage["token_budget"] = budget
    return stage


def clean_stage(stage: Mapping[str, Any]) -> dict[str, Any]:
    """The stage as ``strategy_from_config`` wants it: no None triggers or parameters.

    Sliding window's ``keep_last_turns`` replaces its trigger (the engine refuses both).
    """
    out: dict[str, Any] = {}
    for key, value in stage.items():
        if value is None:
            continue
        if isinstance(value, str) and key == "instructions" and not value.strip():
            continue
        out[key] = value
    if out.get("type") == "sliding_window" and out.get("keep_last_turns") is not None:
        out.pop("trigger", None)
    return out


def stage_summary(stage: Mapping[str, Any]) -> str:
    """``Truncation (from more than 8,000 tokens to at most 8,000 tokens)`` for a stage."""
    kind = str(stage.get("type"))
    label = STAGE_TYPES[kind].label if kind in STAGE_TYPES else kind
    if kind == "token_budget":
        return group_digits(f"{label} (budget {stage.get('token_budget')} tokens)")
    if kind == "sliding_window" and stage.get("keep_last_turns"):
        return group_digits(f"{label} (newest {stage.get('keep_last_turns')} turns kept)")
    trig = stage.get("trigger")
    target = stage.get("target")
    if target is None and trig is not None:
        try:
            target = Trigger.from_dict(dict(trig)).negate().to_dict()
        except ValueError:
            target = None
    if trig is None and target is None:
        return label
    if trig is None:
        return f"{label} (down to {describe_trigger(target)})"
    return f"{label} (from {describe_trigger(trig)} to {describe_trigger(target)})"
