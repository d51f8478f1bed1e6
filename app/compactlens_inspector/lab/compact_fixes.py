"""``compact()`` mode's fixes, each the Lab configuration it gives and judged as that run.

The search is the library's (:mod:`compactlens.analysis.compact_fixes`: the candidates,
the smallest safe target, the ranking and the next step), the one ``compactlens report``
runs too, so the debugger and the command line give the same next step. This module only
turns the Lab's configuration into the library's settings and back. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from compactlens import MessageIndex
from compactlens.analysis import (
    CompactFix as Settings,
)
from compactlens.analysis import (
    Verdict,
    compact_next_step,
    search_compact_fixes,
)
from compactlens_inspector.lab.lab_config import CompactSettings, LabConfig
from compactlens_inspector.lab.runs import RunOutcome


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactFix:
    """One change of the ``compact()`` settings: ``words`` in the vocabulary's words,
    ``config`` the configuration it gives, ``verdict`` that run's (None: not judged, as
    with a model summarizer, where judging would call the model once per fix)."""

    words: str
    config: LabConfig
    verdict: Verdict | None = None

    @property
    def settings(self) -> CompactSettings:
        return self.config.compact


def settings_of(config: LabConfig) -> Settings:
    """The library's ``compact()`` settings of a Lab configuration."""
    c = config.compact
    return Settings(
        target_tokens=c.target_tokens,
        keep_last_messages=c.keep_last_messages,
        trigger_tokens=c.trigger_tokens,
    )


def config_of(base: LabConfig, settings: Settings) -> LabConfig:
    """``base`` with the library's ``compact()`` settings (unlabelled: it is a change)."""
    compact = CompactSettings(
        target_tokens=settings.target_tokens,
        keep_last_messages=settings.keep_last_messages,
        trigger_tokens=settings.trigger_tokens,
    )
    return replace(base, compact=compact, label="")


def _lab_fix(base: LabConfig, found: Settings) -> CompactFix:
    return CompactFix(words=found.words, config=config_of(base, found), verdict=found.verdict)


def search(
    outcome: RunOutcome,
    index: MessageIndex,
    current: Verdict,
    judge: Callable[[LabConfig], Verdict | None],
) -> tuple[list[CompactFix], int]:
    """The fixes of the ``compact()`` run ``outcome`` (planned with its explanation, which
    holds the smaller "newest messages kept" that fits) over ``index``, whose verdict is
    ``current``: the library's :func:`~compactlens.analysis.search_compact_fixes`, each
    fix judged by ``judge`` of the configuration it gives; the listed fixes, and how many
    were re-run."""
    config = outcome.config
    ranked, tried = search_compact_fixes(
        index,
        outcome.result,
        settings_of(config),
        current,
        lambda s: judge(config_of(config, s)),
    )
    return [_lab_fix(config, f) for f in ranked], tried


def next_step(current: Verdict, ranked: Sequence[CompactFix], tried: int) -> str:
    """The run's one next step in ``compact()`` mode: the library's
    :func:`~compactlens.analysis.compact_next_step` over the listed fixes."""
    found = [replace(settings_of(f.config), words=f.words, verdict=f.verdict) for f in ranked]
    return compact_next_step(current, found, tried)


__all__ = ["CompactFix", "config_of", "next_step", "search", "settings_of"]
