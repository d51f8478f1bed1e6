"""Preset lab configurations, each sized to a token budget."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from compactlens import reference_tokens, scaled_trigger, sized_config
from compactlens_inspector.lab.lab_config import CompactSettings, LabConfig
from compactlens_inspector.lab.stages import STAGE_TYPES, default_stage, trigger_dict


def nice_budget(total_tokens: int, fraction: float = 0.5) -> int:
    """A round token budget near ``fraction`` of ``total_tokens`` (at least 100)."""
    raw = max(100.0, total_tokens * fraction)
    magnitude = 10 ** max(0, int(math.log10(raw)) - 1)
    return max(100, int(round(raw / magnitude) * magnitude))


#: Each preset's name as the preset select shows it: short enough for the select's width
#: (a longer one was cut mid-word, "Context window: compact at 80% of the wi").
PRESETS: dict[str, str] = {
    "reference": "Reference pipeline (4 stages)",
    "compact": "One-shot compact: one summary",
    "context_window": "Context window: 80% → 50%",
    "truncation": "Truncation only",
    "sliding_window": "Sliding window only",
    "tool_collapse": "Tool-result collapse only",
}
#: What each preset does, in a sentence (the caption under the select).
PRESET_DETAILS: dict[str, str] = {
    "reference": "Tool-result collapse, summarization, sliding window and truncation, in that "
    "order; each starts above the budget and stops at it.",
    "compact": "One summary of the older messages when the history is over the budget; the "
    "newest 4 messages stay word for word.",
    "context_window": "The budget is the model's context window: compact when the history "
    "passes 80% of it, down to 50%.",
    "truncation": "Drop the oldest messages until the history is within the budget.",
    "sliding_window": "Drop the oldest turns until the history is within the budget.",
    "tool_collapse": "Collapse old tool results into short notes until the history is within "
    "the budget.",
}
#: The ``compact()`` preset keeps this many newest messages verbatim.
COMPACT_PRESET_KEEP = 4


def preset(name: str, budget: int) -> LabConfig:
    """A preset configuration sized to ``budget`` tokens.

    Every preset compacts when the history is over ``budget`` tokens (``tokens >
    budget``) and brings it down to ``budget`` (``tokens <= budget``), except
    ``context_window``, where ``budget`` is the model's context window: it compacts at
    80% of it, down to 50%.
    """
    budget = max(1, int(budget))
    exceed = trigger_dict("exceed", "tokens", budget)
    if name == "reference":
        return LabConfig(
            stages=(
                {
                    **default_stage("tool_result_collapse", budget),
                    "trigger": exceed,
                },
                {**default_stage("summarization", budget), "trigger": exceed},
                {
                    **default_stage("sliding_window", budget),
                    "trigger": exceed,
                    "minimum_preserved": 1,
                },
                {
                    **default_stage("truncation", budget),
                    "trigger": exceed,
                    "minimum_preserved": 2,
                },
            ),
            label="reference",
        )
    if name == "compact":
        settings = CompactSettings(budget, COMPACT_PRESET_KEEP, budget)
        return LabConfig(mode="compact", compact=settings, label="compact")
    if name == "context_window":
        high = max(1, int(budget * 0.8))
        low = max(1, int(budget * 0.5))
        trig = trigger_dict("exceed", "tokens", high)
        return LabConfig(
            stages=(
                {**default_stage("tool_result_collapse", high), "trigger": trig},
                {**default_stage("summarization", high), "trigger": trig},
                {**default_stage("truncation", high), "trigger": trig, "minimum_preserved": 2},
            ),
            target=trigger_dict("at_most", "tokens", low),
            label="context_window",
        )
    if name == "truncation":
        return LabConfig(
            stages=({**default_stage("truncation", budget), "minimum_preserved": 4},),
            label="truncation",
        )
    if name == "sliding_window":
        return LabConfig(stages=(default_stage("sliding_window", budget),), label="sliding_window")
    if name == "tool_collapse":
        return LabConfig(
            stages=(default_stage("tool_result_collapse", budget),), label="tool_collapse"
        )
    raise ValueError(f"unknown preset {name!r}; expected one of {sorted(PRESETS)}")


def sized(config: LabConfig, budget: int) -> LabConfig:
    """``config`` sized to ``budget`` tokens (for a transcript it was not made for).

    A preset (an unedited one, known by its label) is made again at ``budget``. An
    edited configuration keeps its shape: every token threshold (``tokens`` triggers
    and targets, a token-budget stage, the ``compact()`` target and trigger) is scaled
    by the same factor, so its first ``tokens >`` trigger (else its token target)
    becomes ``budget``. One without token thresholds is returned as it is.
    """
    budget = max(1, int(budget))
    # Pins name messages of the transcript the configuration was made for: not this one's.
    guards = {**config.guards, "pins": []} if config.guards is not None else None
    if config.label in PRESETS:
        return replace(preset(config.label, budget), guards=guards)
    if config.mode == "compact":
        return _sized_compact(config, budget, guards)
    # The library's sizing: the one `compactlens postmortem --config` uses.
    pipeline: dict[str, Any] = {"type": "pipeline", "strategies": [dict(s) for s in config.stages]}
    if config.target is not None:
        pipeline["target"] = dict(config.target)
    if not reference_tokens(pipeline):
        return config
    scaled = sized_config(pipeline, budget)
    target = scaled.get("target")
    return replace(config, stages=tuple(scaled["strategies"]), target=target, guards=guards)


def _sized_compact(config: LabConfig, budget: int, guards: Mapping[str, Any] | None) -> LabConfig:
    """A ``compact()`` configuration with its target and trigger scaled by one factor."""
    reference = config.compact.trigger_tokens or config.compact.target_tokens
    if not reference:
        return config

    def scale(n: int) -> int:
        return max(1, round(n * budget / reference))

    c = config.compact
    trigger = scale(c.trigger_tokens) if c.trigger_tokens is not None else None
    settings = CompactSettings(scale(c.target_tokens), c.keep_last_messages, trigger)
    return replace(config, compact=settings, guards=guards)


def with_budget(config: LabConfig, budget: int) -> LabConfig:
    """``config`` with one budget for every stage: each stage that takes a trigger starts
    above ``budget`` tokens (a combined trigger has each token threshold set to it) and
    stops at ``budget`` (its token target, else the trigger's opposite), a token-budget
    stage holds ``budget``, and so does the pipeline's own token target. A sliding window
    that keeps its last N turns instead of a trigger keeps them. In ``compact()`` mode the
    trigger and target both become ``budget``. The stages stay editable one by one.
    """
    budget = max(1, int(budget))
    if config.mode == "compact":
        c = config.compact
        return replace(config, compact=CompactSettings(budget, c.keep_last_messages, budget))

    def at_budget(n: int) -> int:
        return budget

    stages: list[dict[str, Any]] = []
    for stage in config.stages:
        out = dict(stage)
        kind = str(out.get("type"))
        if kind == "token_budget":
            out["token_budget"] = budget
        elif kind in STAGE_TYPES and STAGE_TYPES[kind].has_trigger:
            if not (kind == "sliding_window" and out.get("keep_last_turns")):
                trig = out.get("trigger")
                out["trigger"] = (
                    scaled_trigger(trig, at_budget)
                    if isinstance(trig, Mapping) and trig.get("op") in ("all", "any")
                    else trigger_dict("exceed", "tokens", budget)
                )
            if isinstance(out.get("target"), Mapping):
                out["target"] = scaled_trigger(out["target"], at_budget)
        stages.append(out)
    target = scaled_trigger(config.target, at_budget)
    return replace(config, stages=tuple(stages), target=target, label="")
