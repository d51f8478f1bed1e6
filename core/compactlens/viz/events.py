"""Plain data behind the figures, with no plotly: the events of a run in reading order, a
sweep point, groups kept, and the protocols the session-replay and side-by-side charts read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from compactlens.analysis import group_counts
from compactlens.engine import (
    CompactionResult,
    GroupDecision,
    StageEvent,
    event_words,
    stage_words,
    start_words,
    stop_words,
)
from compactlens.viz.words import group_digits, num

# -- timeline ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """A lifecycle or stage event of a run, with the messages it affected.

    ``total`` marks a pipeline's own event: what its stages did together.
    """

    seq: int
    kind: str
    strategy: str
    label: str
    tokens_before: int
    tokens_after: int
    trigger: str = ""
    trigger_values: Mapping[str, int] = field(default_factory=dict)
    target: str = ""
    detail: str = ""
    depth: int = 0
    group_ids: tuple[int, ...] = ()
    message_range: tuple[int, int] | None = None
    duration_ms: float = 0.0
    groups_changed: int = 0
    inserted: int = 0
    redecided: tuple[int, ...] = ()
    total: bool = False


def timeline_events(result: CompactionResult) -> list[TimelineEvent]:
    """``started``, one event per stage (skipped / applied / target-missed / failed), then
    ``completed`` or ``failed``.

    A pipeline's own event (its total) comes after the events of its stages, so tokens
    read in order from left to right (the engine logs it before them). Each stage
    carries the groups it changed, in the order it changed them, as the engine logged
    them (a pipeline's event includes its stages'), the message range they span, how
    many groups it inserted, and which of its groups a later stage changed again (their
    final decision belongs to that later stage). Bare numbers in triggers, targets and
    details are written with thousands separators.
    """
    decided = decisions_by_group(result)
    out = [
        TimelineEvent(
            0,
            "started",
            result.strategy,
            "started",
            result.tokens_before,
            result.tokens_before,
            detail=f"{num(result.messages_before)} messages, {num(result.tokens_before)} tokens",
        )
    ]
    events = list(result.events)
    for i in _stages_first(events):
        e = events[i]
        end = _subtree_end(events, i)
        later = {g for ev in events[end:] for g in ev.group_ids}
        gids = tuple(dict.fromkeys(e.group_ids))
        idx = [k for g in gids if g in decided for k in decided[g].message_indices]
        total = end > i + 1
        out.append(
            TimelineEvent(
                len(out),
                e.event,
                e.strategy,
                f"{stage_words(e.strategy)} total: {event_words(e.event)}"
                if total
                else f"{stage_words(e.strategy)}: {event_words(e.event)}",
                e.tokens_before,
                e.tokens_after,
                start_words(e.trigger, e.strategy),
                dict(e.trigger_values),
                stop_words(e.target),
                group_digits(e.detail),
                e.depth,
                gids,
                (min(idx), max(idx)) if idx else None,
                e.duration_ms,
                e.groups_changed,
                e.inserted,
                tuple(g for g in gids if g in later),
                total=total,
            )
        )
    final = {"unchanged": "completed", "compacted": "completed"}.get(result.status, "failed")
    detail = result.reason or result.explanation.summary
    out.append(
        TimelineEvent(
            len(out),
            final,
            result.strategy,
            f"{final} ({result.status})",
            result.tokens_before,
            result.tokens_after,
            detail=group_digits(detail),
            # The run's own totals, as the verdict counts them: groups changed (inserted
            # ones apart); a "completed" row read "groups 0" under the pipeline's 205.
            groups_changed=sum(1 for d in result.decisions if d.action not in ("kept", "inserted")),
            inserted=sum(1 for d in result.decisions if d.action == "inserted"),
        )
    )
    return out


def _subtree_end(events: Sequence[StageEvent], i: int) -> int:
    """The index after the last event nested under ``events[i]`` (a pipeline's stages
    follow it, one level deeper)."""
    end = i + 1
    while end < len(events) and events[end].depth > events[i].depth:
        end += 1
    return end


def _stages_first(events: Sequence[StageEvent]) -> list[int]:
    """Indices of ``events`` with every pipeline event moved after its stages (post-order)."""
    order: list[int] = []
    open_: list[int] = []  # pipelines whose stages are still being read
    for i, e in enumerate(events):
        while open_ and events[open_[-1]].depth >= e.depth:
            order.append(open_.pop())
        if _subtree_end(events, i) > i + 1:
            open_.append(i)
        else:
            order.append(i)
    order.extend(reversed(open_))
    return order


# -- sweep and compare -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One value of a swept parameter and what the run gave (``recall``: the fact recall
    of the run's analysis, 0 to 1, when it was measured; ``target_tokens``: the target
    the run was judged against, which a swept stage trigger can move)."""

    value: int
    status: str
    tokens_after: int | None
    groups_kept: int | None
    messages_after: int | None
    error: str | None = None
    recall: float | None = None
    target_tokens: int | None = None
    level: str | None = None
    """The run's verdict level (``safe``, ``costs``, ``no-fit``) when it was judged: the
    marker's colour and name (a run that fits with costs is not a green point)."""


def groups_kept(result: CompactionResult) -> int:
    """Groups kept as they were, as the verdict counts them (:func:`group_counts`):
    collapsed groups and inserted summaries are not "kept"."""
    return group_counts(result)["kept"]


def decisions_by_group(result: CompactionResult | None) -> dict[int, GroupDecision]:
    if result is None:
        return {}
    return {d.group_id: d for d in result.decisions if d.group_id is not None}


class ReplayPoint(Protocol):
    """One evaluation of a session replayed turn by turn (what ``replay_chart`` reads)."""

    @property
    def turn(self) -> int: ...
    @property
    def tokens_in(self) -> int: ...
    @property
    def tokens_out(self) -> int: ...
    @property
    def fired(self) -> bool: ...
    @property
    def status(self) -> str: ...


class RunLike(Protocol):
    """A configuration's run, or its error (what ``compare_chart`` reads)."""

    @property
    def result(self) -> CompactionResult | None: ...
    @property
    def status(self) -> str: ...
