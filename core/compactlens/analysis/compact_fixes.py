"""The fixes of a ``compact()`` call that could not fit or fits with costs, each the
settings it gives and judged as that run.

The engine's fix search (:mod:`compactlens.analysis.fixes`) re-plans strategies;
``compact()`` is no strategy, so its fixes are the few changes of its three settings
(``target_tokens``, ``keep_last_messages``, ``trigger_tokens``) that can help: fewer
newest messages kept (the largest smaller value that fits, which its explanation found
by re-running), the smallest target that fits, larger targets for more of the facts, and
a trigger that leaves room for the next turn. A larger target moves the trigger with it
when the trigger would otherwise fire again at once. Each candidate is judged by the
caller's ``judge`` (so each surface judges with its own analysis settings), and the list
is what improves on the run (:func:`verdict_improves`), ranked by those verdicts.

The inspector's ``compact()`` debugger and ``compactlens report`` both read this search,
so they give the same next step for the same file and settings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compactlens.analysis.facts import Fact
from compactlens.analysis.fix_verdicts import verdict_improves
from compactlens.analysis.report import analyze
from compactlens.analysis.retrigger import growth_from_index
from compactlens.analysis.verdict import Verdict, apply_step, verdict
from compactlens.compact.explain import CompactRun, compact_over_index
from compactlens.engine import Suggestion, change_words
from compactlens.engine.index import MessageIndex
from compactlens.engine.result import CompactionResult
from compactlens.engine.triggers import tokens_exceed
from compactlens.model.errors import ConfigError
from compactlens.summarizers.base import Summarizer
from compactlens.summarizers.extractive import ExtractiveSummarizer

#: How many typical turns of room a moved trigger leaves above the target (the engine's
#: larger-target fix leaves the same).
ROOM_TURNS = 4

#: Larger targets tried for more of the facts, as multiples of the smallest that fits.
LADDER = (1.1, 1.25, 1.5, 2.0, 3.0)

#: How many halvings narrow the smallest larger target whose run is safe.
BISECTIONS = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactFix:
    """One set of ``compact()`` settings: the call's own (``words`` empty) or a change of
    them, ``words`` saying the change in the vocabulary's words; ``verdict`` that run's
    (None: not judged, as with a model summarizer, where judging would call the model
    once per fix)."""

    words: str = ""
    #: The token budget the compacted history must fit (``compact(target_tokens=...)``).
    target_tokens: int
    #: How many newest messages stay verbatim (``compact(keep_last_messages=...)``).
    keep_last_messages: int
    #: Compact only when the history is over this many tokens (None: on every call).
    trigger_tokens: int | None = None
    verdict: Verdict | None = None

    @property
    def key(self) -> tuple[int, int, int | None]:
        """The three settings, as one comparable value."""
        return (self.target_tokens, self.keep_last_messages, self.trigger_tokens)


#: A judge: the verdict of the run a fix's settings give (None: not judged).
Judge = Callable[[CompactFix], Verdict | None]


def _moved_trigger(trigger: int | None, target: int, total: int, turn: float) -> int | None:
    """The trigger a target of ``target`` needs: as it is when it leaves a typical turn of
    room above the target (or there is none: compaction on every call), else
    :data:`ROOM_TURNS` turns above the target, below the history at hand so that it still
    compacts (-1: no such trigger)."""
    if trigger is None or trigger >= target + max(turn, 1.0):
        return trigger
    moved = min(total - 1, target + math.ceil(ROOM_TURNS * max(turn, 1.0)))
    return moved if moved > target else -1


def _target_words(target: int, old_trigger: int | None, trigger: int | None) -> str:
    if trigger != old_trigger and trigger is not None:
        return f"raise the target to {target:,} tokens and the trigger to {trigger:,}"
    return f"raise the target to {target:,} tokens"


class _Found:
    """Candidates gathered without repeats or the call's own settings."""

    def __init__(self, base: CompactFix) -> None:
        self.base = base
        self.out: dict[tuple[int, int, int | None], CompactFix] = {}

    def add(self, words: str, target: int, keep: int, trigger: int | None) -> None:
        key = (target, keep, trigger)
        if trigger == -1 or key == self.base.key or key in self.out:
            return
        self.out[key] = CompactFix(
            words=words, target_tokens=target, keep_last_messages=keep, trigger_tokens=trigger
        )


def _keep_candidates(
    found: _Found, suggestions: Sequence[Suggestion], total: int, turn: float
) -> None:
    """The explanation's smaller "newest messages kept", alone and with the trigger it
    needs."""
    b = found.base
    for s in suggestions:
        if s.parameter != "keep_last_messages" or not isinstance(s.value, int):
            continue
        said = change_words("keep_last_messages", s.value)
        found.add(said, b.target_tokens, s.value, b.trigger_tokens)
        moved = _moved_trigger(b.trigger_tokens, b.target_tokens, total, turn)
        if moved != b.trigger_tokens and moved is not None:
            words = f"{said} and raise the trigger to {moved:,} tokens"
            found.add(words, b.target_tokens, s.value, moved)


def _target_candidates(found: _Found, smallest_target: int | None, total: int, turn: float) -> None:
    """The smallest target that fits and the :data:`LADDER` above it, each with the
    trigger it needs."""
    b = found.base
    base = smallest_target if smallest_target is not None else b.target_tokens
    for t in (base, *(math.ceil(base * f) for f in LADDER)):
        if t <= b.target_tokens and smallest_target is None:
            continue
        if t >= total:
            # The whole history fits the target: nothing needs compacting, so the
            # trigger goes to the target too (compact() would only add its summary).
            words = f"raise the target and the trigger to {t:,} tokens (the whole history fits it)"
            found.add(words, t, b.keep_last_messages, t)
            break
        g = _moved_trigger(b.trigger_tokens, t, total, turn)
        found.add(_target_words(t, b.trigger_tokens, g), t, b.keep_last_messages, g)


def compact_candidates(
    base: CompactFix,
    suggestions: Sequence[Suggestion],
    *,
    total_tokens: int,
    turn_tokens: float,
    smallest_target: int | None,
    fires_again: bool,
) -> list[CompactFix]:
    """The changes worth re-running for the ``compact()`` settings ``base`` over a history
    of ``total_tokens`` that grows by ``turn_tokens`` a turn: the explanation's
    ``suggestions`` (a smaller "newest messages kept verbatim"; its target suggestion is
    replaced by ``smallest_target``, the one number every surface names), the smallest
    target that fits and larger ones (:data:`LADDER`), each with the trigger it needs,
    and, when the run ``fires_again`` on the next turn, the trigger raised a few turns
    above the target. Not judged; without repeats or ``base`` itself."""
    found = _Found(base)
    _keep_candidates(found, suggestions, total_tokens, turn_tokens)
    _target_candidates(found, smallest_target, total_tokens, turn_tokens)
    trigger, target = base.trigger_tokens, base.target_tokens
    if fires_again and trigger is not None:
        g = _moved_trigger(trigger, target, total_tokens, turn_tokens)
        if g is not None and g != trigger:
            words = f"raise the trigger to {g:,} tokens, keeping the target at {target:,}"
            found.add(words, target, base.keep_last_messages, g)
    return list(found.out.values())


def judge_compact_fixes(found: Sequence[CompactFix], judge: Judge) -> list[CompactFix]:
    """``found`` with each fix's verdict: ``judge`` of its settings."""
    return [replace(f, verdict=judge(f)) for f in found]


def _safe(fix: CompactFix) -> bool:
    return fix.verdict is not None and fix.verdict.level == "safe"


def smallest_safe_target(
    judged: Sequence[CompactFix],
    base: CompactFix,
    *,
    total_tokens: int,
    turn_tokens: float,
    judge: Judge,
) -> list[CompactFix]:
    """More judged fixes between the largest target of ``judged`` whose run is not safe
    and the smallest whose run is (the keep setting of ``base`` as it is),
    :data:`BISECTIONS` halvings apart: the ladder's steps are coarse, and a user should
    not be told to double the target when a third more is as safe. Empty when no target
    of ``judged`` is safe."""
    raised = sorted(
        (
            f
            for f in judged
            if f.verdict is not None
            and f.keep_last_messages == base.keep_last_messages
            and f.target_tokens > base.target_tokens
        ),
        key=lambda f: f.target_tokens,
    )
    safe = [f for f in raised if _safe(f)]
    if not safe:
        return []
    hi = safe[0].target_tokens
    below = [f.target_tokens for f in raised if f.target_tokens < hi]
    lo = max(below) if below else base.target_tokens
    out: list[CompactFix] = []
    for _ in range(BISECTIONS):
        mid = (lo + hi) // 2
        g = _moved_trigger(base.trigger_tokens, mid, total_tokens, turn_tokens)
        if mid <= lo or g == -1:
            break
        fix = CompactFix(
            words=_target_words(mid, base.trigger_tokens, g),
            target_tokens=mid,
            keep_last_messages=base.keep_last_messages,
            trigger_tokens=g,
        )
        fix = replace(fix, verdict=judge(fix))
        out.append(fix)
        hi, lo = (mid, lo) if _safe(fix) else (hi, mid)
    return out


def _least_change(found: Sequence[CompactFix], base: CompactFix) -> list[CompactFix]:
    """Of the fixes that give the same verdict level and costs with the same "newest
    messages kept", only the one that changes least (the smallest target, then the
    trigger kept)."""
    chosen: dict[tuple[str, tuple[str, ...], int], CompactFix] = {}

    def least(f: CompactFix) -> tuple[int, bool]:
        return (f.target_tokens, f.trigger_tokens != base.trigger_tokens)

    for f in found:
        v = f.verdict
        assert v is not None
        kind = (v.level, tuple(sorted(r.code for r in v.costs)), f.keep_last_messages)
        held = chosen.get(kind)
        if held is None or least(f) < least(held):
            chosen[kind] = f
    return list(chosen.values())


def listed_compact_fixes(
    found: Sequence[CompactFix], current: Verdict, base: CompactFix
) -> list[CompactFix]:
    """The judged fixes that improve on the run ``current`` judges (none when it fits
    and is safe), ranked by their verdicts: safe first, then the fewest costs (the prompt
    cache's aside: not every surface prices it), then the most facts kept; among equals
    the one that keeps the target, then the trigger. Of the fixes that give the same
    verdict level and costs with the same "newest messages kept", only the one that
    changes least: a larger target than needed is not listed beside the smaller one that
    does as well. A target or trigger past the context window ``current`` was judged
    with is never listed."""
    if current.level == "safe":
        return []
    window = current.numbers.context_window  # the caller's analysis setting: no fix past it
    better = [
        f
        for f in found
        if f.verdict is not None
        and verdict_improves(f.verdict, current)
        and (window is None or max(f.target_tokens, f.trigger_tokens or 0) <= window)
    ]

    def order(f: CompactFix) -> tuple[bool, int, float, bool, bool, int]:
        v = f.verdict
        assert v is not None
        return (
            v.level != "safe",
            len([r for r in v.costs if r.code != "cache"]),
            -round(v.numbers.fact_recall or 0.0, 2),
            f.target_tokens != base.target_tokens,
            f.trigger_tokens != base.trigger_tokens,
            f.target_tokens,
        )

    return sorted(_least_change(better, base), key=order)


def search_compact_fixes(
    index: MessageIndex,
    result: CompactionResult | None,
    base: CompactFix,
    current: Verdict,
    judge: Judge,
) -> tuple[list[CompactFix], int]:
    """The fixes of the ``compact()`` call with settings ``base`` over ``index``: its
    ``result`` as :func:`compactlens.compact.compact_over_index` gives it with
    ``find_fixes`` (its explanation holds the smaller "newest messages kept" that fits and
    the smallest target), whose verdict is ``current``. :func:`compact_candidates`, each
    judged by ``judge`` (the verdict of the run its settings give), with
    :func:`smallest_safe_target`; those :func:`listed_compact_fixes`, and how many were
    re-run."""
    ex = result.explanation if result is not None else None
    turn = growth_from_index(index).tokens
    again = current.numbers.turns_until_next_compaction
    found = compact_candidates(
        base,
        ex.suggestions if ex is not None else (),
        total_tokens=index.total_tokens,
        turn_tokens=turn,
        smallest_target=_smallest_target(result),
        fires_again=again is not None and again <= 1,
    )
    judged = judge_compact_fixes(found, judge)
    judged += smallest_safe_target(
        judged, base, total_tokens=index.total_tokens, turn_tokens=turn, judge=judge
    )
    return listed_compact_fixes(judged, current, base), len(judged)


def _smallest_target(result: CompactionResult | None) -> int | None:
    """The smallest target of a ``compact()`` run that could not fit (its explanation's:
    the one number every surface names), else None."""
    if result is None or result.status != "cannot-fit":
        return None
    return result.explanation.smallest_target


def compact_next_step(current: Verdict, ranked: Sequence[CompactFix], tried: int) -> str:
    """The run's one next step for a ``compact()`` call, worded as the engine's
    (:func:`compactlens.analysis.next_step`): nothing to fix when the run is safe; the
    best listed fix with the verdict of the run it gives; else, for a run that fits
    with costs, keeping it (``tried`` changes re-run, none better); else the verdict's
    own step."""
    if current.level == "safe":
        return current.next_step
    if ranked:
        best = ranked[0]
        # The engine's words: "Apply, at a cost (…)" for a fix whose run fits with costs.
        return apply_step(best.words, best.verdict)
    if current.level == "costs" and tried:
        return (
            "Keep the run as it is: no change the fix search re-ran removes a cost without "
            f"adding another (it tried {tried:,}: fewer newest messages kept verbatim, a "
            "larger target with the trigger above it, a larger trigger)."
        )
    return current.next_step


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactAdvice:
    """A ``compact()`` call judged, with its one next step and the fixes behind it."""

    #: The call's own settings.
    settings: CompactFix
    #: Its run over the index (None: the summarizer failed before a result).
    result: CompactionResult | None
    #: Its verdict, whose next step is :func:`compact_next_step`'s.
    verdict: Verdict
    #: The listed fixes, the best first, each with the verdict of the run it gives.
    fixes: tuple[CompactFix, ...]
    #: How many changes the search re-ran.
    tried: int


@dataclass(frozen=True, slots=True, kw_only=True)
class _CompactRuns:
    """How every ``compact()`` run over ``index`` is run and judged: its settings run by
    :func:`~compactlens.compact.compact_over_index`, analyzed with ``analysis``
    (:func:`analyze`'s settings: the context window...) and the settings' trigger, judged
    for ``provider``, the facts extracted once into ``facts``."""

    index: MessageIndex
    summarizer: Summarizer
    analysis: Mapping[str, Any]
    provider: str | None
    facts: dict[int, list[Fact]]

    def run(self, fix: CompactFix, explain: bool = False) -> CompactionResult | None:
        """The run of ``fix``'s settings (explained: with the fixes its explanation finds);
        None when the settings were refused."""
        return self.call(fix, explain).result

    def call(self, fix: CompactFix, explain: bool = False) -> CompactRun:
        """:func:`~compactlens.compact.compact_over_index` with ``fix``'s settings."""
        return compact_over_index(
            self.index,
            target_tokens=fix.target_tokens,
            keep_last_messages=fix.keep_last_messages,
            summarizer=self.summarizer,
            trigger_tokens=fix.trigger_tokens,
            find_fixes=explain,
        )

    def judge(self, fix: CompactFix, result: CompactionResult | None = None) -> Verdict | None:
        """The verdict of ``fix``'s run (``result``, when it was run already)."""
        if result is None:
            result = self.run(fix)
            if result is None:
                return None
        kw = dict(self.analysis)
        if fix.trigger_tokens is not None:
            kw["triggers"] = tokens_exceed(fix.trigger_tokens)
        ix = self.index
        report = analyze(ix.messages, result, tokenizer=ix.tokenizer, fact_cache=self.facts, **kw)
        return verdict(result, report, provider=self.provider)


def advise_compact(
    index: MessageIndex,
    settings: CompactFix,
    *,
    summarizer: Summarizer | None = None,
    analysis: Mapping[str, Any] | None = None,
    provider: str | None = None,
    facts: dict[int, list[Fact]] | None = None,
    current: Verdict | None = None,
) -> CompactAdvice:
    """The ``compact()`` call with ``settings`` over ``index`` (``summarizer``: default
    the extractive one), judged with the ``analysis`` settings (:func:`analyze`'s: the
    context window...) for ``provider`` (``current``: its verdict, when the caller has
    it), with its fixes (:func:`search_compact_fixes`, each run judged the same way, the
    facts extracted once into ``facts``) and its one next step
    (:func:`compact_next_step`): what ``compactlens report``, the inspector's
    ``compact()`` debugger and the notebook's ``debug_compact()`` give."""
    runs = _CompactRuns(
        index=index,
        summarizer=summarizer if summarizer is not None else ExtractiveSummarizer(),
        analysis=dict(analysis or {}),
        provider=provider,
        facts=facts if facts is not None else {},
    )
    explained = runs.call(settings, explain=True)
    result = explained.result
    if result is None:
        raise ConfigError(explained.error or f"compact() refused the settings {settings.key}")
    judged = current if current is not None else runs.judge(settings, result)
    assert judged is not None  # a run is always judged
    ranked: list[CompactFix] = []
    tried = 0
    if judged.level != "safe":  # nothing is listed for a call that fits and is safe
        ranked, tried = search_compact_fixes(index, result, settings, judged, runs.judge)
    return CompactAdvice(
        settings=settings,
        result=result,
        verdict=replace(judged, next_step=compact_next_step(judged, ranked, tried)),
        fixes=tuple(ranked),
        tried=tried,
    )


__all__ = [
    "BISECTIONS",
    "LADDER",
    "ROOM_TURNS",
    "CompactAdvice",
    "CompactFix",
    "advise_compact",
    "compact_candidates",
    "compact_next_step",
    "judge_compact_fixes",
    "listed_compact_fixes",
    "search_compact_fixes",
    "smallest_safe_target",
]
