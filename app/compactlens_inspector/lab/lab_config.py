"""The lab configuration: a single strategy or a pipeline of stages, or ``compact()``.

A :class:`LabConfig` is what the strategy builder edits. It is plain data (JSON-able
dicts in the shape :func:`compactlens.engine.strategies.config.strategy_from_config` reads), so
the same value keys the result cache, goes into the URL, the exported JSON, the Python
snippet and the HTML report. No Streamlit here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from compactlens import Guards, Trigger
from compactlens.engine import check_config_size, get_profile, profile_guards
from compactlens_inspector.lab.stages import STAGE_TYPES, clean_stage, token_limit, trigger_tokens

Mode = Literal["pipeline", "compact"]

#: The builder's choice for "the provider of the transcript's format".
AUTO_PROVIDER = "auto"


def parse_pins(text: str, messages: int | None) -> tuple[list[int], str]:
    """Message indices from ``"0, 12 17"``, and a sentence about what was left out."""
    pins: list[int] = []
    bad: list[str] = []
    for token in text.replace(",", " ").split():
        if token.isdigit() and (messages is None or int(token) < messages):
            pins.append(int(token))
        else:
            bad.append(token)
    problem = ""
    if bad:
        limit = f" (0 to {messages - 1:,})" if messages else ""
        problem = f"not message indices{limit}: {', '.join(bad[:5])}"
    return sorted(set(pins)), problem


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
    #: What every strategy keeps (``Guards.to_dict()`` keys; None: the profile's defaults).
    guards: Mapping[str, Any] | None = None
    #: The system whose defaults the stages take (``maf``, ``deepagents``; None: ours).
    profile: str | None = None

    def guard_set(self, format_name: str | None = None) -> Guards:
        """The run's :class:`Guards` (the profile's unless set); an unset provider follows
        ``format_name`` (when given)."""
        if self.guards is not None:
            guards = Guards.from_dict(self.guards)
        else:
            guards = profile_guards(self.profile)
        return guards.for_format(format_name) if format_name is not None else guards

    @property
    def grouping(self) -> str:
        """How the index groups messages under the profile (``maf`` groups reasoning its way)."""
        return get_profile(self.profile).grouping

    def strategy_config(self) -> dict[str, Any]:
        """The compactlens strategy configuration (one stage alone, else a pipeline)."""
        stages = [clean_stage(s) for s in self.stages]
        if not stages:
            raise ValueError("add at least one stage")
        if len(stages) == 1 and self.target is None:
            out = stages[0]
        else:
            out = {"type": "pipeline", "strategies": stages}
            if self.target is not None:
                out["target"] = dict(self.target)
        if self.profile is not None:
            out["profile"] = self.profile
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
        if self.guards is not None:
            out["guards"] = dict(self.guards)
        if self.profile is not None:
            out["profile"] = self.profile
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabConfig:
        if not isinstance(data, Mapping):
            raise ValueError("a configuration must be a JSON object")
        check_config_size(data, "configuration")
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
        guards = data.get("guards")
        if guards is not None:
            if not isinstance(guards, Mapping):
                raise ValueError("guards must be an object")
            try:
                guards = Guards.from_dict(guards).to_dict()
            except (TypeError, ValueError) as exc:
                raise ValueError(f"guards: {exc}") from None
        profile = data.get("profile")
        if profile is not None:
            get_profile(profile)  # a ValueError naming the profiles
        return cls(
            stages=tuple(dict(s) for s in stages_raw),
            target=target,
            mode=mode,
            compact=CompactSettings.from_dict(compact_raw),
            label=label if isinstance(label, str) else "",
            guards=guards,
            profile=profile,
        )

    def key(self) -> str:
        """A canonical JSON string of the configuration (a cache key)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
