"""The lab configuration: stages, triggers, presets, and how they travel in a URL.

A :class:`LabConfig` is what the strategy builder edits. It is plain data (JSON-able
dicts in the shape :func:`compactlens.strategies.config.strategy_from_config` reads), so
the same value keys the result cache, goes into the URL, the exported JSON, the Python
snippet and the HTML report. No Streamlit here.
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from compactlens.triggers import Trigger

Mode = Literal["pipeline", "compact"]

#: What a group or decision may be; the figures colour them consistently.
ACTIONS = ("kept", "excluded", "collapsed", "summarized", "inserted")
KINDS = ("system", "user", "assistant_text", "tool_call", "summary")

#: The token counters the app offers (the name is the URL value too).
TOKENIZERS: dict[str, str] = {
    "estimate": "estimate (characters / 4)",
    "o200k_base": "tiktoken o200k_base (GPT-4o, o-series)",
    "cl100k_base": "tiktoken cl100k_base (GPT-4, GPT-3.5)",
}

EXTRACTIVE_LABEL = "extractive (offline)"


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
        return Trigger.from_dict(dict(data)).describe()
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


# -- stages and the lab configuration ------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class CompactSettings:
    """The ``compact()`` one-shot configuration."""

    target_tokens: int = 20000
    keep_last_messages: int = 4
    trigger_tokens: int | None = 60000

    def to_dict(self) -> dict[str, Any]:
        return {
            "target_tokens": self.target_tokens,
            "keep_last_messages": self.keep_last_messages,
            "trigger_tokens": self.trigger_tokens,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CompactSettings:
        def as_int(key: str, default: int | None, minimum: int = 1) -> int | None:
            value = data.get(key, default)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"compact.{key} must be an integer >= {minimum}, got {value!r}")
            return value

        target = as_int("target_tokens", 20000)
        keep = as_int("keep_last_messages", 4)
        assert target is not None and keep is not None
        return cls(target, keep, as_int("trigger_tokens", 60000))


@dataclass(frozen=True, slots=True)
class LabConfig:
    """A single strategy or a pipeline of stages, or a ``compact()`` one-shot."""

    stages: tuple[Mapping[str, Any], ...] = ()
    target: Mapping[str, Any] | None = None
    mode: Mode = "pipeline"
    compact: CompactSettings = field(default_factory=CompactSettings)
    label: str = ""

    def strategy_config(self) -> dict[str, Any]:
        """The compactlens strategy configuration (one stage alone, else a pipeline)."""
        stages = [clean_stage(s) for s in self.stages]
        if not stages:
            raise ValueError("add at least one stage")
        if len(stages) == 1 and self.target is None:
            return stages[0]
        out: dict[str, Any] = {"type": "pipeline", "strategies": stages}
        if self.target is not None:
            out["target"] = dict(self.target)
        return out

    @property
    def uses_summarizer(self) -> bool:
        return self.mode == "compact" or any(s.get("type") == "summarization" for s in self.stages)

    @property
    def target_tokens(self) -> int | None:
        """The token target the figures draw (the pipeline's, else the last stage's)."""
        if self.mode == "compact":
            return self.compact.target_tokens
        if self.target is not None:
            return token_limit(self.target)
        for stage in reversed(self.stages):
            if stage.get("type") == "token_budget":
                budget = stage.get("token_budget")
                return int(budget) if isinstance(budget, int) else None
            target = stage.get("target")
            limit = token_limit(target) if target else None
            if limit is None and target is None:
                trig = stage.get("trigger")
                if trig is not None and trig.get("op") == "exceed":
                    limit = token_limit(Trigger.from_dict(dict(trig)).negate().to_dict())
            if limit is not None:
                return limit
        return None

    @property
    def trigger_tokens(self) -> int | None:
        """The first ``tokens > n`` threshold of the configuration, for the charts."""
        if self.mode == "compact":
            return self.compact.trigger_tokens
        for stage in self.stages:
            found = trigger_tokens(stage.get("trigger"))
            if found is not None:
                return found
        return None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.mode}
        if self.mode == "compact":
            out["compact"] = self.compact.to_dict()
        else:
            out["stages"] = [clean_stage(s) for s in self.stages]
            if self.target is not None:
                out["target"] = dict(self.target)
        if self.label:
            out["label"] = self.label
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabConfig:
        if not isinstance(data, Mapping):
            raise ValueError("a configuration must be a JSON object")
        mode = data.get("mode", "pipeline")
        if mode not in ("pipeline", "compact"):
            raise ValueError(f"unknown mode {mode!r}; expected 'pipeline' or 'compact'")
        stages_raw = data.get("stages", [])
        if not isinstance(stages_raw, list) or not all(isinstance(s, dict) for s in stages_raw):
            raise ValueError("stages must be a list of objects")
        for i, s in enumerate(stages_raw):
            if s.get("type") not in STAGE_TYPES:
                raise ValueError(f"stages[{i}].type: unknown strategy {s.get('type')!r}")
        target = data.get("target")
        if target is not None and not isinstance(target, dict):
            raise ValueError("target must be an object")
        compact_raw = data.get("compact", {})
        if not isinstance(compact_raw, Mapping):
            raise ValueError("compact must be an object")
        label = data.get("label", "")
        return cls(
            stages=tuple(dict(s) for s in stages_raw),
            target=target,
            mode=mode,
            compact=CompactSettings.from_dict(compact_raw),
            label=label if isinstance(label, str) else "",
        )

    def key(self) -> str:
        """A canonical JSON string of the configuration (a cache key)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))


# -- presets --------------------------------------------------------------------------------


def nice_budget(total_tokens: int, fraction: float = 0.5) -> int:
    """A round token budget near ``fraction`` of ``total_tokens`` (at least 100)."""
    raw = max(100.0, total_tokens * fraction)
    magnitude = 10 ** max(0, int(math.log10(raw)) - 1)
    return max(100, int(round(raw / magnitude) * magnitude))


PRESETS: dict[str, str] = {
    "reference": "Reference pipeline: tool-result collapse, summarization, sliding window, "
    "truncation",
    "compact": "compact(): one summary when over the budget, keep the last 4 messages",
    "context_window": "Context window: compact at 80% of the window, down to 50%",
    "truncation": "Truncation only",
    "sliding_window": "Sliding window: drop the oldest turns",
    "tool_collapse": "Tool-result collapse only",
}

#: The ``compact()`` preset keeps this many newest messages verbatim.
COMPACT_PRESET_KEEP = 4


def preset(name: str, budget: int, *, compact_available: bool = True) -> LabConfig:
    """A preset configuration sized to ``budget`` tokens.

    Every preset compacts when the history is over ``budget`` tokens (``tokens >
    budget``) and brings it down to ``budget`` (``tokens <= budget``), except
    ``context_window``, where ``budget`` is the model's context window: it compacts at
    80% of it, down to 50%. Without ``compact()`` (``compact_available=False``) the
    compact preset is approximated by a summarization stage with the same trigger,
    target and keep.
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
        if compact_available:
            return LabConfig(mode="compact", compact=settings, label="compact")
        return LabConfig(
            stages=(
                {
                    **default_stage("summarization", budget),
                    "target": trigger_dict("at_most", "tokens", budget),
                    "minimum_preserved": COMPACT_PRESET_KEEP,
                },
            ),
            label="compact",
        )
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
        return LabConfig(stages=(default_stage("tool_result_collapse", budget),), label="tool")
    raise ValueError(f"unknown preset {name!r}; expected one of {sorted(PRESETS)}")


# -- URL encoding ----------------------------------------------------------------------------


def encode_config(config: LabConfig) -> str:
    """A short URL-safe text for a configuration (zlib + base64url of its JSON)."""
    raw = json.dumps(config.to_dict(), separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def decode_config(text: str) -> LabConfig:
    """Inverse of :func:`encode_config`; ``ValueError`` on anything malformed."""
    if len(text) > 8000:
        raise ValueError("configuration text is too long")
    try:
        padded = text + "=" * (-len(text) % 4)
        raw = zlib.decompress(base64.urlsafe_b64decode(padded.encode()), bufsize=65536)
        data = json.loads(raw)
    except Exception as exc:  # any decoding problem is a bad link
        raise ValueError(f"the configuration in the link cannot be read ({exc})") from None
    return LabConfig.from_dict(data)


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
        where = self.base_url or "api.openai.com"
        return f"OpenAI-compatible: {self.model} at {where}"


def sweepable_parameters(config: LabConfig) -> list[tuple[str, str]]:
    """(path, label) of every numeric parameter a sweep can vary.

    Paths are ``stages.<i>.<name>``, ``stages.<i>.trigger.n``, ``stages.<i>.target.n``,
    ``target.n`` or ``compact.<name>``.
    """
    out: list[tuple[str, str]] = []
    if config.mode == "compact":
        out.append(("compact.target_tokens", "compact(): target_tokens"))
        out.append(("compact.keep_last_messages", "compact(): keep_last_messages"))
        return out
    for i, stage in enumerate(config.stages):
        kind = str(stage.get("type"))
        label = STAGE_TYPES[kind].label if kind in STAGE_TYPES else kind
        for key in ("trigger", "target"):
            t = stage.get(key)
            if isinstance(t, Mapping) and isinstance(t.get("n"), int):
                out.append((f"stages.{i}.{key}.n", f"{i + 1}. {label}: {key} ({t.get('metric')})"))
        spec = STAGE_TYPES.get(kind)
        for p in spec.params if spec else ():
            if p.kind == "int" or (p.kind == "optional_int" and stage.get(p.name) is not None):
                out.append((f"stages.{i}.{p.name}", f"{i + 1}. {label}: {p.name}"))
    if config.target is not None and isinstance(config.target.get("n"), int):
        out.append(("target.n", f"pipeline target ({config.target.get('metric')})"))
    return out


def get_path(config: LabConfig, path: str) -> Any:
    """The value at a sweep path (see :func:`sweepable_parameters`)."""
    data: Any = config.to_dict()
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, list) else data.get(part)
        if data is None:
            return None
    return data


def with_value(config: LabConfig, path: str, value: Any) -> LabConfig:
    """A copy of ``config`` with the value at ``path`` replaced (nothing is mutated)."""
    data = json.loads(json.dumps(config.to_dict()))
    parts = path.split(".")
    node: Any = data
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return LabConfig.from_dict(data)


def stage_summary(stage: Mapping[str, Any]) -> str:
    """``Truncation (tokens > 8000 -> tokens <= 8000)`` for a stage."""
    kind = str(stage.get("type"))
    label = STAGE_TYPES[kind].label if kind in STAGE_TYPES else kind
    if kind == "token_budget":
        return f"{label} (budget {stage.get('token_budget')})"
    if kind == "sliding_window" and stage.get("keep_last_turns"):
        return f"{label} (keep last {stage.get('keep_last_turns')} turns)"
    trig = stage.get("trigger")
    target = stage.get("target")
    if target is None and trig is not None:
        try:
            target = Trigger.from_dict(dict(trig)).negate().to_dict()
        except ValueError:
            target = None
    return f"{label} ({describe_trigger(trig)} -> {describe_trigger(target)})"


def config_title(config: LabConfig) -> str:
    """A one-line description of a configuration."""
    if config.mode == "compact":
        c = config.compact
        trig = f"tokens > {c.trigger_tokens:,}, " if c.trigger_tokens else ""
        return f"compact() ({trig}target {c.target_tokens:,}, keep {c.keep_last_messages})"
    parts = [stage_summary(s) for s in config.stages]
    if len(parts) == 1 and config.target is None:
        return parts[0]
    target = f" -> {describe_trigger(config.target)}" if config.target is not None else ""
    return "Pipeline: " + "; ".join(parts) + target


def stages_of(data: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], ...]:
    return tuple(dict(s) for s in data)


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
        return LabConfig(tuple(stages), config.target, config.mode, config.compact)
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
        return LabConfig(lowered.stages, lowered.target, lowered.mode, lowered.compact)
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
    return LabConfig(changed.stages, changed.target, changed.mode, changed.compact)
