"""Plain data the pages read from a run: decisions with their projected messages, summary
ranges, rendered messages, timeline events, sweep points and transcript filters.
No Streamlit here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compactlens import CompactionResult, Message, MessageIndex
from compactlens.analysis import Verdict, group_counts
from compactlens.engine import GroupDecision
from compactlens.model import SUMMARY_PREFIX, message_text
from compactlens.viz import SweepPoint, groups_kept, nice_step
from compactlens_inspector.lab.runs import RunOutcome
from compactlens_inspector.views.message import call_names, printable

#: Bars of a decision map the app draws, at most (neighbouring groups are stacked above
#: it): about one bar per 2-3 pixels of the chart, and plotly redraws every bar on each
#: parameter change (1,500 bars cost ~0.15 s more browser CPU per change at 30,000 groups).
DECISION_MAP_BARS = 400


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


#: Decisions a run of which reads as one Diff row (every decision of a group that was not
#: inserted: consecutive groups kept, collapsed, summarized or dropped alike are one row).
FOLDED_ACTIONS = ("kept", "collapsed", "summarized", "excluded")


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One row of the Diff: a single decision, or a run of identical ones (consecutive
    groups kept, collapsed, summarized or dropped by the same stage for the same reason)
    folded together."""

    views: tuple[DecisionView, ...]

    @property
    def decision(self) -> GroupDecision:
        return self.views[0].decision

    @property
    def folded(self) -> bool:
        return len(self.views) > 1

    @property
    def tokens_before(self) -> int:
        return sum(v.decision.tokens_before for v in self.views)

    @property
    def tokens_after(self) -> int:
        return sum(v.decision.tokens_after for v in self.views)

    @property
    def message_span(self) -> tuple[int, int] | None:
        idx = [k for v in self.views for k in v.decision.message_indices]
        return (min(idx), max(idx)) if idx else None


def _same_run(a: GroupDecision, b: GroupDecision) -> bool:
    return (
        a.action in FOLDED_ACTIONS
        and (a.action, a.strategy, a.reason) == (b.action, b.strategy, b.reason)
        and a.group_id is not None
        and b.group_id is not None
    )


def diff_rows(views: list[DecisionView]) -> list[DiffRow]:
    """``views`` as Diff rows: each run of identical decisions (same action, stage and
    reason) is one row ("205 groups collapsed", "47 groups folded into the summary
    above"); an inserted summary is its own row."""
    rows: list[list[DecisionView]] = []
    for view in views:
        if rows and _same_run(rows[-1][-1].decision, view.decision):
            rows[-1].append(view)
        else:
            rows.append([view])
    return [DiffRow(tuple(r)) for r in rows]


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
        calls = call_names(index)
        original = "\n\n".join(
            render_message(index.messages[k], k, calls)
            for rd in replaced
            for k in rd.message_indices
        )
        out.append(SummaryRange(d, tuple(replaced), text, original))
    return out


def render_message(
    message: Message, index: int | None = None, calls: Mapping[str, str] | None = None
) -> str:
    """A message as plain text for diffs and reports: a header line, then its content. A
    tool result names the call it answers by ``calls`` (call id -> ``bash: git log``, as
    :func:`~compactlens_inspector.views.message.call_names` gives), else by its tool's
    name: never by the raw call id, which tells a reader nothing."""
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
            call = f"{part.name}({part.arguments})"  # type: ignore[union-attr]
            lines.append(f"-> {printable(call)}")
        elif kind == "tool_result":
            called = (calls or {}).get(part.call_id) or part.name  # type: ignore[union-attr]
            of = f"result of {called}" if called else "tool result"
            lines.append(f"<- {of}: {part.output}")  # type: ignore[union-attr]
        else:
            lines.append(f"({kind})")
    return "\n".join(lines)


# -- sweep and compare -------------------------------------------------------------------------


def sweep_values(start: int, stop: int, steps: int) -> list[int]:
    """Up to ``steps`` distinct integers from ``start`` to ``stop`` (inclusive): both ends
    and the round numbers between them (a step of 1, 2, 2.5 or 5 times a power of ten),
    so a sweep reads 12,500, 20,000, 30,000 rather than 12,500, 20,455, 28,409."""
    steps = max(2, min(int(steps), 60))
    if stop < start:
        start, stop = stop, start
    if stop == start:
        return [start]
    step = nice_step(stop - start, steps - 1)
    inner = range((start // step + 1) * step, stop, step)
    return [start, *inner, stop]


def sweep_plan(values: Sequence[int], asked: int) -> str:
    """The values a sweep runs, in words with separators (the number fields show none),
    and why there are fewer than ``asked``: ``10 runs: 12,000, 20,000, 30,000, …, 100,000
    (the two ends and every 10,000 between them, round values: fewer than the 12 asked).``"""
    if not values:
        return "No value to run."
    n = len(values)
    shown = [f"{v:,}" for v in values]
    if n > 6:
        shown = [*shown[:3], "…", *shown[-2:]]
    text = f"{n:,} run{'s' if n != 1 else ''}: {', '.join(shown)}"
    if n >= 4:
        step = values[2] - values[1]
        uneven = values[1] - values[0] != step or values[-1] - values[-2] != step
        if uneven or n < asked:
            text += f" (the two ends and every {step:,} between them"
            text += f", round values: fewer than the {asked:,} asked)" if n < asked else ")"
    elif n < asked:
        text += f" (fewer than the {asked:,} asked: no more whole numbers between the ends)"
    return text + "."


def sweep_point(
    value: int,
    outcome: RunOutcome,
    recall: float | None = None,
    *,
    verdict: Verdict | None = None,
) -> SweepPoint:
    """A swept run as the chart and table show it: with its verdict, the groups kept, the
    fact recall and the target are the verdict's (the numbers every page shows)."""
    r = outcome.result
    if r is None:
        return SweepPoint(value, "error", None, None, None, outcome.error)
    if verdict is None:
        return SweepPoint(
            value, r.status, r.tokens_after, groups_kept(r), r.messages_after, recall=recall
        )
    n = verdict.numbers
    missed = missed_target(r) if r.status == "cannot-fit" else None
    return SweepPoint(
        value,
        r.status,
        n.tokens_after,
        (n.groups or group_counts(r))["kept"],
        n.messages_after,
        recall=n.fact_recall if recall is None else recall,
        target_tokens=missed if missed is not None else n.target_tokens,
        level=verdict.level,
    )


_TOKEN_TARGET = re.compile(r"^tokens\s*<=\s*(\d+)$")


def missed_target(result: CompactionResult) -> int | None:
    """The token target a run that does not fit missed: the first stage that missed its
    own token target (a stage's trigger sets it, so it can be under the pipeline's), or
    None when no stage reports one."""
    for e in result.events:
        if e.event in ("target-missed", "failed"):
            found = _TOKEN_TARGET.match(e.target.strip())
            if found:
                return int(found.group(1))
    return None


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
