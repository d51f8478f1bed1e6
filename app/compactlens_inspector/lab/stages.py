"""The stage types the strategy builder offers, their parameters, and trigger helpers.

Stages and triggers are plain dicts in the shape
:func:`compactlens.engine.strategies.config.strategy_from_config` and
``Trigger.to_dict()`` use. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from compactlens import Trigger
from compactlens_inspector.style.numbers import group_digits


@dataclass(frozen=True, slots=True)
class Param:
    """One editable parameter of a stage."""

    name: str
    label: str
    kind: Literal["int", "optional_int", "bool", "choice", "text"]
    default: Any
    minimum: int = 0
    choices: tuple[str, ...] = ()
    help: str = ""


@dataclass(frozen=True, slots=True)
class StageType:
    """A strategy the builder can add, with its parameters."""

    type: str
    label: str
    description: str
    params: tuple[Param, ...]
    has_trigger: bool = True


_MIN_PRESERVED = "minimum_preserved"

STAGE_TYPES: dict[str, StageType] = {
    "tool_result_collapse": StageType(
        "tool_result_collapse",
        "Tool-result collapse",
        "Replace older tool calls and their results by one short line each.",
        (
            Param(
                "keep_last_tool_call_groups",
                "Keep last tool-call groups verbatim",
                "int",
                1,
                help="The newest tool-call groups that are never collapsed.",
            ),
            Param(
                _MIN_PRESERVED,
                "Minimum preserved groups",
                "int",
                2,
                help="The newest non-system groups that are never touched.",
            ),
            Param(
                "formatter",
                "Collapsed line",
                "choice",
                "results",
                choices=("results", "names"),
                help="'results' keeps a short text of each result, 'names' only tool names.",
            ),
        ),
    ),
    "selective_tool_calls": StageType(
        "selective_tool_calls",
        "Selective tool-call removal",
        "Remove older tool-call groups entirely (call and results together).",
        (
            Param("keep_last_tool_call_groups", "Keep last tool-call groups", "int", 1),
            Param(_MIN_PRESERVED, "Minimum preserved groups", "int", 0),
        ),
    ),
    "summarization": StageType(
        "summarization",
        "Summarization",
        "Replace older groups by one summary message (extractive offline by default).",
        (
            Param(
                _MIN_PRESERVED,
                "Minimum preserved groups",
                "int",
                4,
                help="The newest non-system groups that are never summarized.",
            ),
            Param(
                "max_input_tokens",
                "Max input tokens",
                "int",
                8000,
                minimum=1,
                help="The summarizer's input is capped at this many tokens, oldest groups first.",
            ),
            Param("max_summary_tokens", "Max summary tokens", "int", 2048, minimum=1),
        ),
    ),
    "sliding_window": StageType(
        "sliding_window",
        "Sliding window",
        "Drop whole user turns, oldest first.",
        (
            Param(
                _MIN_PRESERVED,
                "Minimum preserved turns",
                "int",
                1,
                help="The newest turns that are never dropped.",
            ),
            Param(
                "keep_last_turns",
                "Keep last N turns (instead of a trigger)",
                "optional_int",
                None,
                minimum=1,
            ),
            Param("preserve_system", "Preserve system messages", "bool", True),
        ),
    ),
    "truncation": StageType(
        "truncation",
        "Truncation",
        "Drop the oldest groups one at a time until the target holds.",
        (
            Param(
                _MIN_PRESERVED,
                "Minimum preserved groups",
                "int",
                32,
                help="The newest non-system groups that are never dropped.",
            ),
            Param("preserve_system", "Preserve system messages", "bool", True),
            Param("preserve_first_user_group", "Preserve the first user message", "bool", False),
        ),
    ),
    "clamp": StageType(
        "clamp",
        "Clamp oversized content",
        "Cut every text or tool output above a token limit to its head and tail.",
        (
            Param(
                "max_tokens",
                "Limit per text or tool output (tokens)",
                "int",
                2000,
                minimum=1,
                help="Longer content keeps its head and tail, with a marker of what was cut.",
            ),
            Param(
                _MIN_PRESERVED,
                "Minimum preserved groups",
                "int",
                0,
                help="The newest non-system groups that are never clamped (with a trigger).",
            ),
        ),
    ),
    "token_budget": StageType(
        "token_budget",
        "Token-budget fallback",
        "If still over the budget, drop the oldest groups (system kept unless allowed).",
        (
            Param("token_budget", "Token budget", "int", 8000, minimum=1),
            Param(_MIN_PRESERVED, "Minimum preserved groups", "int", 1, minimum=1),
            Param("drop_system_if_needed", "Drop system messages if needed", "bool", False),
        ),
        has_trigger=False,
    ),
}

# -- triggers ---------------------------------------------------------------------------

#: Trigger choices of the builder: label -> (op, metric) (metric "" for op-only triggers).
TRIGGER_CHOICES: dict[str, tuple[str, str]] = {
    "none": ("", ""),
    "tokens >": ("exceed", "tokens"),
    "messages >": ("exceed", "messages"),
    "turns >": ("exceed", "turns"),
    "groups >": ("exceed", "groups"),
    "has tool calls": ("has_tool_calls", ""),
    "always": ("always", ""),
}

#: Target choices: label -> (op, metric); "default" is the negation of the trigger.
TARGET_CHOICES: dict[str, tuple[str, str]] = {
    "default (opposite of trigger)": ("", ""),
    "tokens <=": ("at_most", "tokens"),
    "tokens <": ("below", "tokens"),
    "messages <=": ("at_most", "messages"),
    "groups <=": ("at_most", "groups"),
    "turns <=": ("at_most", "turns"),
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
    """``tokens > 8000`` for a trigger dict, ``(none)`` for None."""
    if data is None:
        return "(none)"
    try:
        return group_digits(Trigger.from_dict(dict(data)).describe())
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
    """``Truncation (tokens > 8000 -> tokens <= 8000)`` for a stage."""
    kind = str(stage.get("type"))
    label = STAGE_TYPES[kind].label if kind in STAGE_TYPES else kind
    if kind == "token_budget":
        return group_digits(f"{label} (budget {stage.get('token_budget')})")
    if kind == "sliding_window" and stage.get("keep_last_turns"):
        return group_digits(f"{label} (keep last {stage.get('keep_last_turns')} turns)")
    trig = stage.get("trigger")
    target = stage.get("target")
    if target is None and trig is not None:
        try:
            target = Trigger.from_dict(dict(trig)).negate().to_dict()
        except ValueError:
            target = None
    return f"{label} ({describe_trigger(trig)} -> {describe_trigger(target)})"
