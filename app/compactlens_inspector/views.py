"""Plain data the pages read from a run: decisions with their projected messages, summary
ranges, rendered messages, timeline events, sweep points and transcript filters.
No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from compactlens import CompactionResult, Message, MessageIndex
from compactlens.engine import GroupDecision, StageEvent
from compactlens.model import SUMMARY_PREFIX, message_text
from compactlens_inspector.numbers import group_digits, num
from compactlens_inspector.runs import RunOutcome


@dataclass(frozen=True, slots=True)
class DecisionView:
    """A decision and the projection messages it became (empty for dropped groups)."""

    decision: GroupDecision
    projection: tuple[int, ...]


def decision_views(result: CompactionResult) -> list[DecisionView]:
    """Decisions in order with the projection indices each one produced.

    Kept groups map to their messages, a collapsed group to its one replacement line,
    an inserted group to its new message; excluded and summarized groups to nothing.
    """
    out: list[DecisionView] = []
    cursor = 0
    total = len(result.projection)
    for d in result.decisions:
        if d.action == "kept":
            n = len(d.message_indices)
        elif d.action in ("collapsed", "inserted"):
            n = 1
        else:
            n = 0
        n = max(0, min(n, total - cursor))
        out.append(DecisionView(d, tuple(range(cursor, cursor + n))))
        cursor += n
    return out


@dataclass(frozen=True, slots=True)
class SummaryRange:
    """An inserted summary and the groups it replaced."""

    inserted: GroupDecision
    replaced: tuple[GroupDecision, ...]
    summary_text: str
    original_text: str

    @property
    def message_range(self) -> tuple[int, int] | None:
        idx = [k for d in self.replaced for k in d.message_indices]
        return (min(idx), max(idx)) if idx else None


def summary_ranges(result: CompactionResult, index: MessageIndex) -> list[SummaryRange]:
    """Every inserted summary with the summarized groups that follow it in decision order."""
    views = decision_views(result)
    out: list[SummaryRange] = []
    for i, view in enumerate(views):
        d = view.decision
        if d.action != "inserted":
            continue
        replaced: list[GroupDecision] = []
        for later in views[i + 1 :]:
            if later.decision.action == "inserted":
                break
            if later.decision.action == "summarized":
                replaced.append(later.decision)
        text = ""
        if view.projection:
            msg = result.projection[view.projection[0]]
            text = msg.text
            if text.startswith(SUMMARY_PREFIX):
                text = text[len(SUMMARY_PREFIX) :]
        original = "\n\n".join(
            render_message(index.messages[k], k) for rd in replaced for k in rd.message_indices
        )
        out.append(SummaryRange(d, tuple(replaced), text, original))
    return out


def render_message(message: Message, index: int | None = None) -> str:
    """A message as plain text for diffs and reports: a header line, then its content."""
    head = f"[{index}] {message.role}" if index is not None else message.role
    if message.name:
        head += f" ({message.name})"
    lines = [head]
    for part in message.parts:
        kind = part.kind
        if kind == "text":
            lines.append(part.text)  # type: ignore[union-attr]
        elif kind == "reasoning":
            lines.append("(reasoning) " + part.text)  # type: ignore[union-attr]
        elif kind == "tool_call":
            lines.append(f"-> {part.name}({part.arguments})")  # type: ignore[union-attr]
        elif kind == "tool_result":
            lines.append(f"<- {part.call_id}: {part.output}")  # type: ignore[union-attr]
        else:
            lines.append(f"({kind})")
    return "\n".join(lines)


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
                f"{e.strategy} total: {e.event}" if total else f"{e.strategy}: {e.event}",
                e.tokens_before,
                e.tokens_after,
                group_digits(e.trigger),
                dict(e.trigger_values),
                group_digits(e.target),
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
    of the run's analysis, 0 to 1, when it was measured)."""

    value: int
    status: str
    tokens_after: int | None
    groups_kept: int | None
    messages_after: int | None
    error: str | None = None
    recall: float | None = None


def groups_kept(result: CompactionResult) -> int:
    return sum(1 for d in result.decisions if d.action in ("kept", "collapsed", "inserted"))


def sweep_values(start: int, stop: int, steps: int) -> list[int]:
    """Up to ``steps`` distinct integers from ``start`` to ``stop`` (inclusive), evenly spread."""
    steps = max(2, min(int(steps), 60))
    if stop < start:
        start, stop = stop, start
    if stop == start:
        return [start]
    values = sorted({round(start + (stop - start) * i / (steps - 1)) for i in range(steps)})
    return [int(v) for v in values]


def sweep_point(value: int, outcome: RunOutcome, recall: float | None = None) -> SweepPoint:
    r = outcome.result
    if r is None:
        return SweepPoint(value, "error", None, None, None, outcome.error)
    return SweepPoint(
        value, r.status, r.tokens_after, groups_kept(r), r.messages_after, recall=recall
    )


# -- filters for the transcript page -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroupFilter:
    """Filters of the transcript view (empty means no filter)."""

    roles: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    text: str = ""
    flags: tuple[str, ...] = ()


def filter_groups(index: MessageIndex, flt: GroupFilter) -> list[int]:
    """Ids of the groups that pass every filter (text is case-insensitive)."""
    needle = flt.text.strip().lower()
    roles = set(flt.roles)
    kinds = set(flt.kinds)
    tools = set(flt.tools)
    flags = set(flt.flags)
    out: list[int] = []
    for g in index.groups:
        if kinds and g.kind.value not in kinds:
            continue
        if tools and not tools.intersection(g.tool_names):
            continue
        if flags and not flags.intersection(g.flags):
            continue
        if roles and not any(index.messages[k].role in roles for k in g.indices):
            continue
        if needle and not any(needle in message_text(index.messages[k]).lower() for k in g.indices):
            continue
        out.append(g.id)
    return out


def tool_names(index: MessageIndex) -> list[str]:
    return sorted({name for g in index.groups for name in g.tool_names})


def decisions_by_group(result: CompactionResult | None) -> dict[int, GroupDecision]:
    if result is None:
        return {}
    return {d.group_id: d for d in result.decisions if d.group_id is not None}
