"""The configuration of a corpus run: one strategy or ``compact`` setup, a tokenizer, a
format and the analysis settings, validated once before any file is read (see
:mod:`compactlens.analysis.corpus` for its JSON form)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compactlens.analysis.cache import ModelPrices, prices_for
from compactlens.analysis.protocol import PROVIDERS
from compactlens.analysis.retrigger import DEFAULT_CONTEXT_WINDOW
from compactlens.model.errors import ConfigError
from compactlens.model.tokens import make_tokenizer
from compactlens.model.validation import check_int

_ANALYSIS_KEYS = frozenset(
    {
        "context_window",
        "further_turns",
        "model",
        "prices",
        "growth_per_turn",
        "max_fraction",
        "providers",
    }
)
_COMPACT_KEYS = frozenset({"target_tokens", "keep_last_messages", "instructions", "trigger_tokens"})
_CONFIG_KEYS = frozenset(
    {"strategy", "compact", "tokenizer", "format", "analysis", "name", "fix_search"}
)
#: Keys of the inspector's exported configuration (Export, "Configuration (JSON)") that a
#: run from the command line reads past, ``report --config`` as ``compact --config`` does:
#: ``inspector`` (the Lab's own form of the configuration; its ``strategy`` is what runs)
#: and ``summarizer`` (the command line summarizes with the offline extractive
#: summarizer, a model's settings included). The Export file works with both commands.
EXPORT_ONLY_KEYS = frozenset({"inspector", "summarizer"})


@dataclass(frozen=True, slots=True)
class CorpusConfig:
    """A validated corpus configuration (see the module docstring for its JSON form)."""

    strategy: Mapping[str, Any] | None = None
    compact: Mapping[str, Any] | None = None
    tokenizer: str = "estimate"
    format: str | None = None
    analysis: Mapping[str, Any] | None = None
    name: str | None = None
    #: Whether a row of a run that is not safe gets its next step from the fix search
    #: (as ``compactlens compact`` gives it); False keeps the verdict's own step.
    fix_search: bool = True

    def __post_init__(self) -> None:
        if (self.strategy is None) == (self.compact is None):
            raise ConfigError("a corpus config needs exactly one of 'strategy' or 'compact'")
        if self.compact is not None:
            unknown = set(self.compact) - _COMPACT_KEYS
            if unknown:
                raise ConfigError(f"compact: unknown keys {sorted(unknown)}")
            if "target_tokens" not in self.compact:
                raise ConfigError("compact: 'target_tokens' is required")
            for key in ("target_tokens", "keep_last_messages", "trigger_tokens"):
                if key in self.compact:
                    check_int(f"compact.{key}", self.compact[key])
        if self.analysis is not None:
            unknown = set(self.analysis) - _ANALYSIS_KEYS
            if unknown:
                raise ConfigError(f"analysis: unknown keys {sorted(unknown)}")
        # Fail now, not once per file.
        self.build_strategy()
        self.analysis_kwargs()
        make_tokenizer(self.tokenizer)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CorpusConfig:
        if not isinstance(data, Mapping):
            raise ConfigError(f"a corpus config must be an object, got {type(data).__name__}")
        unknown = set(data) - _CONFIG_KEYS - EXPORT_ONLY_KEYS
        if unknown:
            raise ConfigError(f"config: unknown keys {sorted(unknown)}")
        return cls(
            strategy=data.get("strategy"),
            compact=data.get("compact"),
            tokenizer=data.get("tokenizer") or "estimate",
            format=data.get("format"),
            analysis=data.get("analysis"),
            name=data.get("name"),
            fix_search=_flag("fix_search", data.get("fix_search", True)),
        )

    @classmethod
    def load(
        cls, source: str | os.PathLike[str] | Mapping[str, Any] | CorpusConfig
    ) -> CorpusConfig:
        """From a config object, a dict or a JSON file path."""
        if isinstance(source, CorpusConfig):
            return source
        if isinstance(source, Mapping):
            return cls.from_dict(source)
        path = Path(source)
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such configuration file") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the configuration: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: byte {exc.start}: not UTF-8 text") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: not valid JSON ({exc})") from None
        try:
            return cls.from_dict(data)
        except ValueError as exc:
            raise ConfigError(f"{path}: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tokenizer": self.tokenizer}
        if self.strategy is not None:
            out["strategy"] = dict(self.strategy)
        if self.compact is not None:
            out["compact"] = dict(self.compact)
        if self.format is not None:
            out["format"] = self.format
        if self.analysis is not None:
            out["analysis"] = dict(self.analysis)
        if self.name is not None:
            out["name"] = self.name
        if not self.fix_search:
            out["fix_search"] = False
        return out

    def build_strategy(self) -> Any:
        """The engine strategy (None for a ``compact`` setup)."""
        if self.strategy is None:
            return None
        from compactlens.engine.strategies.config import strategy_from_config

        return strategy_from_config(self.strategy, summarizer=_summarizer())

    def analysis_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`~compactlens.analysis.report.analyze`."""
        return analysis_kwargs(self.analysis)


def analysis_kwargs(analysis: Mapping[str, Any] | None) -> dict[str, Any]:
    """Keyword arguments for :func:`~compactlens.analysis.report.analyze` from a
    configuration's ``analysis`` object (``report --config`` and ``compact --config`` read
    the same one); a :class:`ConfigError` names an unknown key or a bad value. Without a
    ``context_window`` the run is judged against :data:`DEFAULT_CONTEXT_WINDOW`, as in the
    inspector and the notebook tools; 0 or null judges it against none."""
    if analysis is not None and not isinstance(analysis, Mapping):
        raise ConfigError("analysis must be an object")
    a = dict(analysis or {})
    unknown = set(a) - _ANALYSIS_KEYS
    if unknown:
        raise ConfigError(f"analysis: unknown keys {sorted(unknown)}")
    out: dict[str, Any] = {}
    for key in ("context_window", "further_turns", "model", "growth_per_turn", "max_fraction"):
        if a.get(key) is not None:
            out[key] = a[key]
    # The window every surface judges with when none is given; 0 (or null) is none.
    window = a.get("context_window", DEFAULT_CONTEXT_WINDOW)
    out.pop("context_window", None)
    if window:
        out["context_window"] = check_int("analysis.context_window", window)
    if isinstance(a.get("model"), str) and a.get("prices") is None:
        prices_for(a["model"])  # fail early on an unknown model
    prices = a.get("prices")
    if isinstance(prices, Mapping):
        out["prices"] = ModelPrices.from_dict(prices)
    elif isinstance(prices, str):
        prices_for(prices)
        out["prices"] = prices
    elif prices is not None:
        raise ConfigError("analysis.prices must be a model name or a price object")
    providers = a.get("providers")
    if providers is not None:
        bad = [p for p in providers if p not in PROVIDERS]
        if bad:
            raise ConfigError(f"analysis.providers: unknown {bad}; expected {PROVIDERS}")
        out["providers"] = tuple(providers)
    return out


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be true or false, got {value!r}")
    return value


def _summarizer() -> Any:
    from compactlens.summarizers.extractive import ExtractiveSummarizer

    return ExtractiveSummarizer()
