"""What the tuner edits, as plain values: a strategy configuration (the dict ``to_dict()``
writes), a trigger and a target in tokens, a profile and a provider. No widgets here, so
every change a user can make is a function from settings to settings, testable as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

from compactlens.engine import (
    PROFILE_NAMES,
    PROVIDERS,
    Guards,
    MessageIndex,
    Strategy,
    get_profile,
    profile_guards,
    strategy_from_config,
)
from compactlens.engine.profiles import profile_tokenizer, run_guards
from compactlens.model import Message, Tokenizer
from compactlens.model.errors import ConfigError
from compactlens.summarizers import ExtractiveSummarizer, Summarizer

#: The provider choice that follows the transcript's format.
AUTO_PROVIDER = "auto"
#: Provider choices of the tuner: ``auto`` and every provider the engine knows.
PROVIDER_CHOICES: tuple[str, ...] = (AUTO_PROVIDER, *PROVIDERS)
#: Profile choices of the tuner.
PROFILE_CHOICES: tuple[str, ...] = tuple(PROFILE_NAMES)
#: Keys of a stage that are not parameters a user edits in place.
STRUCTURE_KEYS = frozenset({"type", "trigger", "target", "strategies", "summarizer", "profile"})


@dataclass(frozen=True, slots=True, kw_only=True)
class TuneSettings:
    """One configuration of the tuner."""

    config: Mapping[str, Any]
    """The strategy as ``Strategy.to_dict()`` writes it (a pipeline or one stage)."""

    trigger_tokens: int
    """Every stage's ``tokens >`` trigger is set to this."""

    target_tokens: int | None = None
    """The run stops once the history is at most this many tokens (None: no target)."""

    profile: str = "compactlens"
    provider: str = AUTO_PROVIDER
    """A provider name, or ``auto`` for the provider of the transcript's format."""

    unset: frozenset[tuple[int, str]] = frozenset()
    """(stage, name) of the parameters nobody set: they follow the profile's defaults
    (``config`` shows the default of the profile the strategy was written under)."""

    linked: bool = True
    """The trigger and the target move together: changing one sets the other (a target
    of none leaves the trigger). Unlinked, each moves alone."""

    def changed(self, **changes: Any) -> TuneSettings:
        """These settings with ``changes`` applied; when linked, a new trigger is the new
        target too and a new target the new trigger (unless both are given)."""
        out = replace(self, **changes)
        if not out.linked or ("trigger_tokens" in changes and "target_tokens" in changes):
            return out
        if "target_tokens" in changes and out.target_tokens is not None:
            return replace(out, trigger_tokens=out.target_tokens)
        if "trigger_tokens" in changes or "linked" in changes:
            return replace(out, target_tokens=out.trigger_tokens)
        return out

    def stages(self) -> list[Mapping[str, Any]]:
        """The stages in order (a single strategy is one stage)."""
        children = self.config.get("strategies")
        return list(children) if isinstance(children, list) else [self.config]

    def parameters(self) -> list[tuple[int, str, Any]]:
        """Every editable parameter as (stage number, name, value), stage by stage."""
        return [
            (i, name, value)
            for i, stage in enumerate(self.stages())
            for name, value in stage.items()
            if name not in STRUCTURE_KEYS
        ]

    def parameters_of(self, stage: int) -> list[tuple[str, Any]]:
        """The editable parameters of stage ``stage`` as (name, value)."""
        return [(name, value) for i, name, value in self.parameters() if i == stage]

    def with_parameter(self, stage: int, name: str, value: Any) -> TuneSettings:
        """These settings with parameter ``name`` of stage ``stage`` set to ``value``."""
        stages = [dict(s) for s in self.stages()]
        if not 0 <= stage < len(stages) or name in STRUCTURE_KEYS:
            raise ConfigError(f"stage {stage} has no editable parameter {name!r}")
        stages[stage][name] = value
        unset = self.unset - {(stage, name)}
        if "strategies" in self.config:
            return replace(self, config={**self.config, "strategies": stages}, unset=unset)
        return replace(self, config=stages[0], unset=unset)

    def strategy_config(self) -> dict[str, Any]:
        """The configuration with the trigger and target applied, without the parameters
        nobody set (so the profile gives them)."""
        config = _with_trigger(_without(self.config, self.unset), self.trigger_tokens)
        if self.target_tokens is not None:
            config["target"] = {"op": "at_most", "metric": "tokens", "n": self.target_tokens}
        else:
            config["target"] = None
        return config


def _without(config: Mapping[str, Any], unset: frozenset[tuple[int, str]]) -> dict[str, Any]:
    children = config.get("strategies")
    if isinstance(children, list):
        kept = [{k: v for k, v in c.items() if (i, k) not in unset} for i, c in enumerate(children)]
        return {**config, "strategies": kept}
    return {k: v for k, v in config.items() if (0, k) not in unset}


def unset_parameters(strategy: Strategy) -> frozenset[tuple[int, str]]:
    """(stage, name) of the parameters ``strategy`` leaves to its profile: None on the
    stage object, a default in what ``to_dict()`` writes."""
    children = getattr(strategy, "strategies", None)
    stages: tuple[Strategy, ...] = (
        tuple(children) if isinstance(children, tuple | list) else (strategy,)
    )
    out: set[tuple[int, str]] = set()
    for i, stage in enumerate(stages):
        written = stage.to_dict()
        if not is_dataclass(stage):
            continue
        for f in fields(stage):
            if f.name in STRUCTURE_KEYS or written.get(f.name) is None:
                continue
            if getattr(stage, f.name) is None:
                out.add((i, f.name))
    return frozenset(out)


def _with_trigger(config: Mapping[str, Any], tokens: int) -> dict[str, Any]:
    """``config`` with every ``tokens >`` trigger (nested ones too) set to ``tokens``; a
    stage without a trigger gets one."""
    out = dict(config)
    if "strategies" in out:
        out["strategies"] = [_with_trigger(s, tokens) for s in out["strategies"]]
        return out
    trigger = out.get("trigger")
    out["trigger"] = (
        _set_tokens(trigger, tokens)
        if isinstance(trigger, Mapping)
        else {"op": "exceed", "metric": "tokens", "n": tokens}
    )
    return out


def _set_tokens(trigger: Mapping[str, Any], tokens: int) -> dict[str, Any]:
    out = dict(trigger)
    if out.get("op") == "exceed" and out.get("metric") == "tokens":
        out["n"] = tokens
    if isinstance(out.get("children"), list):
        out["children"] = [
            _set_tokens(c, tokens) if isinstance(c, Mapping) else c for c in out["children"]
        ]
    return out


def first_trigger_tokens(config: Mapping[str, Any]) -> int | None:
    """The first ``tokens >`` threshold in ``config`` (stages in order), if any."""
    for key in ("trigger", "strategies", "children"):
        value = config.get(key)
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, Mapping):
                continue
            if item.get("op") == "exceed" and item.get("metric") == "tokens":
                return int(item["n"])
            found = first_trigger_tokens(item)
            if found is not None:
                return found
    return None


def target_tokens_of(config: Mapping[str, Any]) -> int | None:
    """The token target of ``config`` (``tokens <= n`` on the pipeline, else on its last
    stage that has one), if any."""
    target = config.get("target")
    if isinstance(target, Mapping) and target.get("metric") == "tokens":
        return int(target["n"])
    children = config.get("strategies")
    if isinstance(children, list):
        found = [t for c in children if isinstance(c, Mapping) and (t := target_tokens_of(c))]
        return found[-1] if found else None
    return None


def settings_for(
    strategy: Strategy, *, profile: str, provider: str, budget: int | None = None
) -> TuneSettings:
    """Settings that reproduce ``strategy``: its first ``tokens >`` trigger and its token
    target (``budget`` for either when it has none)."""
    config = strategy.to_dict()
    trigger = first_trigger_tokens(config) or budget
    if trigger is None:
        raise ConfigError("give a budget: the strategy has no tokens trigger")
    target = target_tokens_of(config) or budget
    return TuneSettings(
        config=config,
        trigger_tokens=trigger,
        target_tokens=target,
        profile=profile,
        provider=provider,
        unset=unset_parameters(strategy),
        linked=trigger == target,
    )


@dataclass(slots=True)
class Workbench:
    """The cached inputs of a tuner: one index per profile (built on first use),
    the summarizer, and the transcript's format for the ``auto`` provider."""

    messages: tuple[Message, ...]
    format: str | None = None
    tokenizer: Tokenizer | None = None
    summarizer: Summarizer = field(default_factory=ExtractiveSummarizer)
    _indexes: dict[str, MessageIndex] = field(default_factory=dict)

    def index(self, profile: str) -> MessageIndex:
        """The index under ``profile``'s grouping and estimator (built once per profile)."""
        found = self._indexes.get(profile)
        if found is None:
            counter = self.tokenizer or profile_tokenizer(profile)
            grouping = get_profile(profile).grouping
            found = MessageIndex.build(self.messages, counter, grouping=grouping)
            self._indexes[profile] = found
        return found

    def strategy(self, settings: TuneSettings) -> Strategy:
        return strategy_from_config(
            settings.strategy_config(), summarizer=self.summarizer, profile=settings.profile
        )

    def guards(self, settings: TuneSettings) -> Guards:
        guards = profile_guards(settings.profile)
        if settings.provider == AUTO_PROVIDER:
            return run_guards(self.format, guards)
        provider = next((p for p in PROVIDERS if p == settings.provider), None)
        if provider is None:
            choices = ", ".join(PROVIDER_CHOICES)
            raise ConfigError(f"provider: {settings.provider!r} is not one of {choices}")
        return replace(guards, provider=provider)
