"""``compact()`` mode's fixes, each the Lab configuration it gives and judged as that run.

The engine's fix search re-plans strategies; ``compact()`` is no strategy, so its fixes are
the few changes of its three settings that can help: fewer newest messages kept (the
largest smaller value that fits, which its explanation found by re-running), the smallest
target that fits, larger targets for more of the facts, and a trigger that leaves room for
the next turn. A larger target moves the trigger with it when the trigger would otherwise
fire again at once. Each candidate is judged by the caller (the verdict the page shows
once it is applied), and the list is what improves on the run (the library's
:func:`~compactlens.analysis.verdict_improves`), ranked by those verdicts. No Streamlit here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from compactlens import MessageIndex
from compactlens.analysis import Verdict, growth_from_index, verdict_improves
from compactlens.engine import Suggestion
from compactlens_inspector.lab.lab_config import CompactSettings, LabConfig
from compactlens_inspector.lab.runs import RunOutcome
from compactlens_inspector.style.wording import change_words

#: How many typical turns of room a moved trigger leaves above the target (the engine's
#: larger-target fix leaves the same).
ROOM_TURNS = 4

#: Larger targets tried for more of the facts, as multiples of the smallest that fits.
LADDER = (1.1, 1.25, 1.5, 2.0, 3.0)


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


def _with(config: LabConfig, target: int, keep: int, trigger: int | None) -> LabConfig:
    return replace(
        config,
        compact=CompactSettings(
            target_tokens=target, keep_last_messages=keep, trigger_tokens=trigger
        ),
        label="",
    )


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


def candidates(
    config: LabConfig,
    suggestions: Sequence[Suggestion],
    *,
    total_tokens: int,
    turn_tokens: float,
    smallest_target: int | None,
    fires_again: bool,
) -> list[CompactFix]:
    """The changes worth re-running for the ``compact()`` configuration ``config`` over a
    history of ``total_tokens`` that grows by ``turn_tokens`` a turn: the explanation's
    ``suggestions`` (a smaller "newest messages kept verbatim"; its target suggestion is
    replaced by ``smallest_target``, the one number every surface names), the smallest
    target that fits and larger ones (:data:`LADDER`), each with the trigger it needs,
    and, when the run ``fires_again`` on the next turn, the trigger raised a few turns
    above the target. Not judged; without repeats or the configuration itself."""
    c = config.compact
    target, keep, trigger = c.target_tokens, c.keep_last_messages, c.trigger_tokens
    out: dict[tuple[int, int, int | None], CompactFix] = {}

    def add(words: str, t: int, k: int, g: int | None) -> None:
        key = (t, k, g)
        if g == -1 or key == (target, keep, trigger) or key in out:
            return
        out[key] = CompactFix(words=words, config=_with(config, t, k, g))

    for s in suggestions:
        if s.parameter == "keep_last_messages" and isinstance(s.value, int):
            add(change_words("keep_last_messages", s.value), target, s.value, trigger)
            moved = _moved_trigger(trigger, target, total_tokens, turn_tokens)
            if moved != trigger and moved is not None:
                add(
                    f"{change_words('keep_last_messages', s.value)} and raise the trigger "
                    f"to {moved:,} tokens",
                    target,
                    s.value,
                    moved,
                )
    base = smallest_target if smallest_target is not None else target
    for t in (base, *(math.ceil(base * f) for f in LADDER)):
        if t <= target and smallest_target is None:
            continue
        if t >= total_tokens:
            # The whole history fits the target: nothing needs compacting, so the
            # trigger goes to the target too (compact() would only add its summary).
            add(
                f"raise the target and the trigger to {t:,} tokens (the whole history fits it)",
                t,
                keep,
                t,
            )
            break
        g = _moved_trigger(trigger, t, total_tokens, turn_tokens)
        add(_target_words(t, trigger, g), t, keep, g)
    if fires_again and trigger is not None:
        g = _moved_trigger(trigger, target, total_tokens, turn_tokens)
        if g is not None and g != trigger:
            add(
                f"raise the trigger to {g:,} tokens, keeping the target at {target:,}",
                target,
                keep,
                g,
            )
    return list(out.values())


def judge_all(
    found: Sequence[CompactFix], judge: Callable[[LabConfig], Verdict | None]
) -> list[CompactFix]:
    """``found`` with each fix's verdict: ``judge`` of its configuration."""
    return [replace(f, verdict=judge(f.config)) for f in found]


#: How many halvings narrow the smallest larger target whose run is safe.
BISECTIONS = 4


def smallest_safe_target(
    judged: Sequence[CompactFix],
    config: LabConfig,
    *,
    total_tokens: int,
    turn_tokens: float,
    judge: Callable[[LabConfig], Verdict | None],
) -> list[CompactFix]:
    """More judged fixes between the largest target of ``judged`` whose run is not safe
    and the smallest whose run is (the keep setting as it is), :data:`BISECTIONS` halvings
    apart: the ladder's steps are coarse, and a user should not be told to double the
    target when a third more is as safe. Empty when no target of ``judged`` is safe."""
    c = config.compact
    raised = sorted(
        (f for f in judged if f.verdict is not None and _raises_target_only(f, c)),
        key=lambda f: f.settings.target_tokens,
    )
    safe = [f for f in raised if f.verdict is not None and f.verdict.level == "safe"]
    if not safe:
        return []
    hi = safe[0].settings.target_tokens
    below = [f.settings.target_tokens for f in raised if f.settings.target_tokens < hi]
    lo = max(below) if below else c.target_tokens
    out: list[CompactFix] = []
    for _ in range(BISECTIONS):
        mid = (lo + hi) // 2
        if mid <= lo:
            break
        g = _moved_trigger(c.trigger_tokens, mid, total_tokens, turn_tokens)
        if g == -1:
            break
        fix = CompactFix(
            words=_target_words(mid, c.trigger_tokens, g),
            config=_with(config, mid, c.keep_last_messages, g),
        )
        fix = replace(fix, verdict=judge(fix.config))
        out.append(fix)
        if fix.verdict is not None and fix.verdict.level == "safe":
            hi = mid
        else:
            lo = mid
    return out


def _raises_target_only(fix: CompactFix, base: CompactSettings) -> bool:
    s = fix.settings
    return s.keep_last_messages == base.keep_last_messages and s.target_tokens > base.target_tokens


def listed(found: Sequence[CompactFix], current: Verdict, base: LabConfig) -> list[CompactFix]:
    """The judged fixes that improve on the run ``current`` judges (none when it fits
    and is safe), ranked by their verdicts: safe first, then the fewest costs (the prompt
    cache's aside: not every surface prices it), then the most facts kept; among equals
    the one that keeps the target, then the trigger. Of the fixes that give the same
    verdict level and costs with the same "newest messages kept", only the one that
    changes least (the smallest target, then the trigger kept): a larger target than
    needed is not listed beside the smaller one that does as well. A target or trigger
    past the context window ``current`` was judged with is never listed."""
    if current.level == "safe":
        return []
    window = current.numbers.context_window  # the Analysis page's: no fix goes past it
    better = [
        f
        for f in found
        if f.verdict is not None
        and verdict_improves(f.verdict, current)
        and (
            window is None
            or max(f.settings.target_tokens, f.settings.trigger_tokens or 0) <= window
        )
    ]
    c = base.compact
    chosen: dict[tuple[str, tuple[str, ...], int], CompactFix] = {}
    for f in better:
        v = f.verdict
        assert v is not None
        s = f.settings
        kind = (v.level, tuple(sorted(r.code for r in v.costs)), s.keep_last_messages)
        least = (s.target_tokens, s.trigger_tokens != c.trigger_tokens)
        held = chosen.get(kind)
        if held is None or least < (
            held.settings.target_tokens,
            held.settings.trigger_tokens != c.trigger_tokens,
        ):
            chosen[kind] = f

    def order(f: CompactFix) -> tuple[bool, int, float, bool, bool, int]:
        v = f.verdict
        assert v is not None
        s = f.settings
        return (
            v.level != "safe",
            len([r for r in v.costs if r.code != "cache"]),
            -round(v.numbers.fact_recall or 0.0, 2),
            s.target_tokens != c.target_tokens,
            s.trigger_tokens != c.trigger_tokens,
            s.target_tokens,
        )

    return sorted(chosen.values(), key=order)


def search(
    outcome: RunOutcome,
    index: MessageIndex,
    current: Verdict,
    judge: Callable[[LabConfig], Verdict | None],
) -> tuple[list[CompactFix], int]:
    """The fixes of the ``compact()`` run ``outcome`` (planned with its explanation, which
    holds the smaller "newest messages kept" that fits) over ``index``, whose verdict is
    ``current``: :func:`candidates`, each judged by ``judge`` (the verdict of the run its
    configuration gives), with :func:`smallest_safe_target`; those :func:`listed`, and
    how many were re-run."""
    config = outcome.config
    result = outcome.result
    suggestions = result.explanation.suggestions if result is not None else ()
    turn = growth_from_index(index).tokens
    again = current.numbers.turns_until_next_compaction
    found = candidates(
        config,
        suggestions,
        total_tokens=index.total_tokens,
        turn_tokens=turn,
        smallest_target=outcome.compact.smallest_target if outcome.compact is not None else None,
        fires_again=again is not None and again <= 1,
    )
    judged = judge_all(found, judge)
    judged += smallest_safe_target(
        judged, config, total_tokens=index.total_tokens, turn_tokens=turn, judge=judge
    )
    return listed(judged, current, config), len(judged)


def next_step(current: Verdict, ranked: Sequence[CompactFix], tried: int) -> str:
    """The run's one next step in ``compact()`` mode, worded as the engine's
    (:func:`compactlens.analysis.next_step`): nothing to fix when the run is safe; the
    best listed fix with the verdict of the run it gives; else, for a run that fits
    with costs, keeping it (``tried`` changes re-run, none better); else the verdict's
    own step."""
    if current.level == "safe":
        return current.next_step
    if ranked:
        best = ranked[0]
        gives = f" ({best.verdict.summary})" if best.verdict is not None else ""
        return f"Apply: {best.words}{gives}."
    if current.level == "costs" and tried:
        return (
            "Keep the run as it is: no change the fix search re-ran removes a cost without "
            f"adding another (it tried {tried:,}: fewer newest messages kept verbatim, a "
            "larger target with the trigger above it, a larger trigger)."
        )
    return current.next_step


__all__ = [
    "BISECTIONS",
    "LADDER",
    "ROOM_TURNS",
    "CompactFix",
    "candidates",
    "judge_all",
    "listed",
    "next_step",
    "search",
    "smallest_safe_target",
]
