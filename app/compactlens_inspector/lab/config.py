"""The lab configuration: stages, triggers, presets, and how they travel in a URL.

A :class:`LabConfig` is what the strategy builder edits. It is plain data (JSON-able
dicts in the shape :func:`compactlens.engine.strategies.config.strategy_from_config` reads), so
the same value keys the result cache, goes into the URL, the exported JSON, the Python
snippet and the HTML report. No Streamlit here.

This module is the one to import from. It defines the app-wide constants, the summarizer
settings, titles and suggested fixes, and re-exports the rest: stage types and triggers
(:mod:`~compactlens_inspector.lab.stages`), :class:`LabConfig`
(:mod:`~compactlens_inspector.lab.lab_config`), presets (:mod:`~compactlens_inspector.lab.presets`),
URL encoding (:mod:`~compactlens_inspector.lab.config_url`) and sweep paths
(:mod:`~compactlens_inspector.lab.sweep_paths`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from compactlens_inspector.lab.config_url import decode_config, encode_config
from compactlens_inspector.lab.lab_config import (
    AUTO_PROVIDER,
    CompactSettings,
    LabConfig,
    Mode,
    parse_pins,
)
from compactlens_inspector.lab.presets import (
    COMPACT_PRESET_KEEP,
    PRESET_DETAILS,
    PRESETS,
    nice_budget,
    preset,
    sized,
    with_budget,
)
from compactlens_inspector.lab.stages import (
    CUSTOM,
    STAGE_TYPES,
    TARGET_CHOICES,
    TRIGGER_CHOICES,
    Param,
    StageType,
    clean_stage,
    default_stage,
    describe_trigger,
    stage_summary,
    token_limit,
    trigger_choice,
    trigger_dict,
    trigger_tokens,
)
from compactlens_inspector.lab.sweep_paths import get_path, sweepable_parameters, with_value
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.wording import plural

#: What a group or decision may be; the figures colour them consistently.
ACTIONS = ("kept", "excluded", "collapsed", "summarized", "inserted")
KINDS = ("system", "user", "assistant_text", "tool_call", "summary")

#: The token counters the app offers (the name is the URL value too).
TOKENIZERS: dict[str, str] = {
    "estimate": "estimate (characters / 4)",
    "calibrated": "calibrated estimate (per kind of content)",
    "o200k_base": "tiktoken o200k_base (GPT-4o, o-series)",
    "cl100k_base": "tiktoken cl100k_base (GPT-4, GPT-3.5)",
}

EXTRACTIVE_LABEL = "extractive (offline)"


def safe_base_url(url: str) -> str:
    """``url`` without any user name or password in it (for labels, exports, snippets)."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(frozen=True, slots=True)
class SummarizerSettings:
    """Which summarizer to use. The API key is never part of it."""

    kind: Literal["extractive", "openai"] = "extractive"
    base_url: str = ""
    model: str = "gpt-4o-mini"

    def to_dict(self) -> dict[str, str]:
        if self.kind == "extractive":
            return {"kind": "extractive"}
        return {"kind": self.kind, "base_url": self.base_url, "model": self.model}

    def key(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @property
    def label(self) -> str:
        if self.kind == "extractive":
            return EXTRACTIVE_LABEL
        try:
            where = safe_base_url(self.base_url) or "api.openai.com"
        except ValueError:
            where = "an invalid URL"
        return f"OpenAI-compatible: {self.model} at {where}"


def config_title(config: LabConfig) -> str:
    """A one-line description of a configuration."""
    if config.mode == "compact":
        c = config.compact
        trig = f"starts above {num(c.trigger_tokens)} tokens, " if c.trigger_tokens else ""
        return (
            f"One-shot compact ({trig}target {num(c.target_tokens)} tokens, "
            f"newest {plural(c.keep_last_messages, 'message')} kept)"
        )
    parts = [stage_summary(s) for s in config.stages]
    if len(parts) == 1 and config.target is None:
        return parts[0]
    shared = _shared_condition(parts)
    if shared:
        names = " → ".join(p[: -len(shared)].rstrip() for p in parts)
        overall = (
            f", overall {describe_trigger(config.target)}" if config.target is not None else ""
        )
        return f"Pipeline {shared[1:-1]}{overall}: {names}"
    target = f", overall {describe_trigger(config.target)}" if config.target is not None else ""
    return "Pipeline: " + "; ".join(parts) + target


def _shared_condition(parts: list[str]) -> str:
    """The ``(from ... to ...)`` every stage summary ends with, else empty."""
    if len(parts) < 2 or not parts[0].endswith(")") or "(" not in parts[0]:
        return ""
    tail = parts[0][parts[0].rindex("(") :]
    return tail if all(p.endswith(" " + tail) for p in parts) else ""


def apply_suggestion(config: LabConfig, parameter: str, value: Any) -> LabConfig | None:
    """``config`` with a suggested change applied, or None when it cannot be mapped.

    ``parameter`` is what the engine reports: ``minimum_preserved`` (a single strategy),
    ``<stage label>.<name>`` (a pipeline child, matched by its type or label),
    ``target_tokens`` (the token target), or ``keep_last_messages`` (compact mode).
    """
    if config.mode == "compact":
        if parameter in ("keep_last_messages", "target_tokens") and isinstance(value, int):
            return with_value(config, f"compact.{parameter}", value)
        return None
    if parameter == "target_tokens" and isinstance(value, int):
        if config.target is not None:
            return with_value(config, "target.n", value)
        if not config.stages:
            return None
        last = len(config.stages) - 1
        stage = config.stages[last]
        if stage.get("type") == "token_budget":
            return with_value(config, f"stages.{last}.token_budget", value)
        stages = [dict(s) for s in config.stages]
        stages[last]["target"] = trigger_dict("at_most", "tokens", value)
        return replace(config, stages=tuple(stages), label="")
    stage_name, _, name = parameter.rpartition(".")
    for i, stage in enumerate(config.stages):
        matches = not stage_name and len(config.stages) == 1
        matches = matches or stage_name in (stage.get("type"), stage.get("label"))
        if matches and (name in stage or name in _param_names(stage)):
            return with_value(config, f"stages.{i}.{name}", value)
    return None


def _param_names(stage: Mapping[str, Any]) -> set[str]:
    spec = STAGE_TYPES.get(str(stage.get("type")))
    return {p.name for p in spec.params} if spec else set()


def lower_token_triggers(config: LabConfig, tokens: int) -> LabConfig | None:
    """``config`` with every ``tokens > n`` trigger above ``tokens`` lowered to ``tokens``.

    The fix for a history that is over the target while no trigger fires: a trigger at
    the target fires whenever the history does not fit. None when there is no token
    trigger above ``tokens`` to lower (nothing is mutated).
    """
    if config.mode == "compact":
        current = config.compact.trigger_tokens
        if current is None or current <= tokens:
            return None
        lowered = with_value(config, "compact.trigger_tokens", tokens)
        return replace(lowered, label="")
    changed = config
    for i, stage in enumerate(config.stages):
        trig = stage.get("trigger")
        if not isinstance(trig, Mapping) or trig.get("op") != "exceed":
            continue  # combined triggers are left alone
        n = trigger_tokens(trig)
        if n is not None and n > tokens:
            changed = with_value(changed, f"stages.{i}.trigger.n", tokens)
    if changed is config:
        return None
    return replace(changed, label="")


__all__ = [
    "ACTIONS",
    "AUTO_PROVIDER",
    "COMPACT_PRESET_KEEP",
    "CUSTOM",
    "EXTRACTIVE_LABEL",
    "KINDS",
    "PRESETS",
    "PRESET_DETAILS",
    "STAGE_TYPES",
    "TARGET_CHOICES",
    "TOKENIZERS",
    "TRIGGER_CHOICES",
    "CompactSettings",
    "LabConfig",
    "Mode",
    "Param",
    "StageType",
    "SummarizerSettings",
    "apply_suggestion",
    "clean_stage",
    "config_title",
    "decode_config",
    "default_stage",
    "describe_trigger",
    "encode_config",
    "get_path",
    "lower_token_triggers",
    "nice_budget",
    "parse_pins",
    "preset",
    "sized",
    "stage_summary",
    "sweepable_parameters",
    "token_limit",
    "trigger_choice",
    "trigger_dict",
    "trigger_tokens",
    "with_budget",
    "with_value",
]
