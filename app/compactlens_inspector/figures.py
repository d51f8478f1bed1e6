"""Plotly figure builders: plain functions from compactlens values to ``go.Figure``.

They import no Streamlit, so a notebook can use them directly::

    from compactlens_inspector.figures import tokens_per_group, decision_map
    tokens_per_group(index).show()

Colours are the same everywhere: one per decision (kept, excluded, collapsed,
summarized, inserted), one per group kind, one per status and per event. Large
transcripts are aggregated into buckets or drawn with WebGL so a figure stays light.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from compactlens.analysis import CostEstimate
from compactlens.index import MessageIndex
from compactlens.result import CompactionResult
from compactlens_inspector.config import ACTIONS, KINDS
from compactlens_inspector.runs import (
    BudgetPart,
    ReplayStep,
    RunOutcome,
    SweepPoint,
    TimelineEvent,
    groups_kept,
)

DECISION_COLORS: dict[str, str] = {
    "kept": "#8DA0B6",
    "excluded": "#E4572E",
    "collapsed": "#F2A541",
    "summarized": "#7B61FF",
    "inserted": "#2BB673",
}
KIND_COLORS: dict[str, str] = {
    "system": "#5C677D",
    "user": "#1F77B4",
    "assistant_text": "#17BECF",
    "tool_call": "#FF7F0E",
    "summary": "#9467BD",
}
KIND_LABELS: dict[str, str] = {
    "system": "system",
    "user": "user",
    "assistant_text": "assistant text",
    "tool_call": "tool call + results",
    "summary": "summary",
}
ROLE_COLORS: dict[str, str] = {
    "system": "#5C677D",
    "developer": "#7D8597",
    "user": "#1F77B4",
    "assistant": "#17BECF",
    "tool": "#FF7F0E",
}
STATUS_COLORS: dict[str, str] = {
    "unchanged": "#6C757D",
    "compacted": "#2BB673",
    "cannot-fit": "#E4572E",
    "error": "#B00020",
}
EVENT_COLORS: dict[str, str] = {
    "started": "#1F77B4",
    "applied": "#2BB673",
    "skipped": "#ADB5BD",
    "target-missed": "#F2A541",
    "failed": "#E4572E",
    "completed": "#2BB673",
    "restored": "#7B61FF",
}
TARGET_COLOR = "#E4572E"
TRIGGER_COLOR = "#F2A541"

#: Above this many points, line charts use WebGL.
WEBGL_POINTS = 2000


def _layout(fig: go.Figure, title: str, *, height: int = 360, **extra: Any) -> go.Figure:
    settings: dict[str, Any] = {
        "title": {"text": title, "x": 0.0, "xanchor": "left", "font": {"size": 16}},
        "template": "plotly_white",
        "height": height,
        "margin": {"l": 60, "r": 20, "t": 56, "b": 48},
        "legend": {
            "orientation": "h",
            "yanchor": "bottom",
            "y": 1.0,
            "xanchor": "right",
            "x": 1.0,
        },
        "hoverlabel": {"align": "left"},
        "font": {"family": "Inter, Segoe UI, Helvetica, Arial, sans-serif", "size": 12},
    }
    settings.update(extra)
    fig.update_layout(**settings)
    return fig


def _hline(fig: go.Figure, y: float | None, label: str, color: str, dash: str = "dash") -> None:
    if y is None:
        return
    fig.add_hline(
        y=y,
        line={"color": color, "dash": dash, "width": 2},
        annotation_text=f"{label}: {y:,.0f}",
        annotation_position="top left",
        annotation_font_color=color,
    )


def _trigger_target(fig: go.Figure, trigger: int | None, target: int | None) -> None:
    """The trigger and target lines (one line when they are the same number)."""
    if trigger is not None and trigger == target:
        _hline(fig, target, "trigger = target", TARGET_COLOR, "dot")
        return
    _hline(fig, trigger, "trigger", TRIGGER_COLOR)
    _hline(fig, target, "target", TARGET_COLOR, "dot")


def _buckets(n: int, max_bars: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into at most ``max_bars`` contiguous (start, stop) buckets."""
    if n <= max_bars:
        return [(i, i + 1) for i in range(n)]
    size = -(-n // max_bars)
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def tokens_per_group(index: MessageIndex, *, max_bars: int = 500) -> go.Figure:
    """Tokens of every group, stacked by kind (groups are bucketed above ``max_bars``)."""
    groups = index.groups
    buckets = _buckets(len(groups), max_bars)
    bucketed = len(buckets) < len(groups)
    fig = go.Figure()
    for kind in KINDS:
        xs: list[int] = []
        ys: list[int] = []
        hover: list[str] = []
        for start, stop in buckets:
            chunk = [g for g in groups[start:stop] if g.kind.value == kind]
            if not chunk:
                continue
            tokens = sum(g.tokens for g in chunk)
            xs.append(start)
            ys.append(tokens)
            if bucketed:
                hover.append(
                    f"groups {start}–{stop - 1}<br>{len(chunk)} {KIND_LABELS[kind]} groups"
                    f"<br>{tokens:,} tokens"
                )
            else:
                g = chunk[0]
                turn = "—" if g.turn is None else str(g.turn)
                tools = escape(", ".join(g.tool_names[:4]))
                hover.append(
                    f"group {g.id} · {KIND_LABELS[kind]}<br>turn {turn} · "
                    f"{g.message_count} messages<br>{g.tokens:,} tokens"
                    + (f"<br>tools: {tools}" if tools else "")
                )
        if xs:
            fig.add_bar(
                x=xs,
                y=ys,
                name=KIND_LABELS[kind],
                marker_color=KIND_COLORS[kind],
                hovertext=hover,
                hoverinfo="text",
            )
    fig.update_layout(barmode="stack", bargap=0.05 if not bucketed else 0.0)
    xlabel = "group (bucketed)" if bucketed else "group"
    fig.update_xaxes(title=xlabel)
    fig.update_yaxes(title="tokens")
    return _layout(fig, f"Tokens per group ({index.total_groups:,} groups, stacked by kind)")


def cumulative_tokens(
    index: MessageIndex,
    *,
    trigger_tokens: int | None = None,
    target_tokens: int | None = None,
    result: CompactionResult | None = None,
) -> go.Figure:
    """Cumulative tokens over the messages, with the trigger and target lines.

    With ``result``, a second line shows the cumulative tokens that remain after
    compaction, placed at the original positions.
    """
    counts = index.message_tokens
    xs = list(range(len(counts)))
    ys: list[int] = []
    running = 0
    for c in counts:
        running += c
        ys.append(running)
    scatter = go.Scattergl if len(xs) > WEBGL_POINTS else go.Scatter
    fig = go.Figure()
    fig.add_trace(
        scatter(
            x=xs,
            y=ys,
            mode="lines",
            name="original",
            line={"color": "#1F77B4", "width": 2},
            hovertemplate="message %{x}<br>%{y:,} tokens so far<extra>original</extra>",
        )
    )
    if result is not None and result.status != "unchanged":
        after_x: list[int] = []
        after_y: list[int] = []
        running = 0
        for d in result.decisions:
            running += d.tokens_after
            after_x.append(d.message_indices[-1] if d.message_indices else d.position)
            after_y.append(running)
        fig.add_trace(
            scatter(
                x=after_x,
                y=after_y,
                mode="lines",
                name="after compaction",
                line={"color": "#2BB673", "width": 2, "shape": "hv"},
                hovertemplate="up to message %{x}<br>%{y:,} tokens kept<extra>after</extra>",
            )
        )
    _trigger_target(fig, trigger_tokens, target_tokens)
    fig.update_xaxes(title="message")
    fig.update_yaxes(title="cumulative tokens", rangemode="tozero")
    return _layout(fig, f"Cumulative tokens ({index.total_tokens:,} in total)")


def composition(index: MessageIndex) -> go.Figure:
    """Token share by role and by group kind (two donuts)."""
    by_role: dict[str, int] = {}
    for m, t in zip(index.messages, index.message_tokens, strict=True):
        by_role[m.role] = by_role.get(m.role, 0) + t
    by_kind: dict[str, int] = {}
    for g in index.groups:
        by_kind[g.kind.value] = by_kind.get(g.kind.value, 0) + g.tokens
    fig = make_subplots(
        rows=1,
        cols=2,
        specs=[[{"type": "domain"}, {"type": "domain"}]],
        subplot_titles=("by role", "by group kind"),
    )
    roles = [r for r in ROLE_COLORS if r in by_role]
    fig.add_trace(
        go.Pie(
            labels=roles,
            values=[by_role[r] for r in roles],
            marker={"colors": [ROLE_COLORS[r] for r in roles]},
            hole=0.5,
            sort=False,
            name="role",
            hovertemplate="%{label}: %{value:,} tokens (%{percent})<extra></extra>",
        ),
        1,
        1,
    )
    kinds = [k for k in KINDS if k in by_kind]
    fig.add_trace(
        go.Pie(
            labels=[KIND_LABELS[k] for k in kinds],
            values=[by_kind[k] for k in kinds],
            marker={"colors": [KIND_COLORS[k] for k in kinds]},
            hole=0.5,
            sort=False,
            name="kind",
            hovertemplate="%{label}: %{value:,} tokens (%{percent})<extra></extra>",
        ),
        1,
        2,
    )
    return _layout(fig, "Composition of the tokens", height=340)


def estimate_vs_exact(estimate: MessageIndex, exact: MessageIndex) -> go.Figure:
    """Per-message estimated vs exact token counts, with the y = x line."""
    if estimate.total_messages != exact.total_messages:
        raise ValueError("both indexes must be built over the same messages")
    xs = list(exact.message_tokens)
    ys = list(estimate.message_tokens)
    roles = [m.role for m in exact.messages]
    scatter = go.Scattergl if len(xs) > WEBGL_POINTS else go.Scatter
    fig = go.Figure()
    for role, color in ROLE_COLORS.items():
        pts = [
            (i, x, y) for i, (x, y, r) in enumerate(zip(xs, ys, roles, strict=True)) if r == role
        ]
        if not pts:
            continue
        fig.add_trace(
            scatter(
                x=[p[1] for p in pts],
                y=[p[2] for p in pts],
                mode="markers",
                name=role,
                marker={"color": color, "size": 6, "opacity": 0.7},
                customdata=[p[0] for p in pts],
                hovertemplate="message %{customdata}<br>exact %{x:,}<br>estimate %{y:,}"
                "<extra>" + role + "</extra>",
            )
        )
    top = max([*xs, *ys, 1])
    fig.add_trace(
        go.Scatter(
            x=[0, top],
            y=[0, top],
            mode="lines",
            name="estimate = exact",
            line={"color": "#6C757D", "dash": "dot"},
            hoverinfo="skip",
        )
    )
    ratio = estimate.total_tokens / exact.total_tokens if exact.total_tokens else 1.0
    fig.update_xaxes(title=f"exact ({exact.tokenizer_name})")
    fig.update_yaxes(title=f"estimate ({estimate.tokenizer_name})")
    title = (
        f"Estimate vs exact per message: {estimate.total_tokens:,} vs {exact.total_tokens:,} "
        f"tokens (x{ratio:.2f})"
    )
    return _layout(fig, title)


def decision_map(result: CompactionResult, *, max_bars: int = 1500) -> go.Figure:
    """Every group in order, its height its original tokens, coloured by its decision.

    Hovering a bar shows the decision, the strategy and the reason. Above ``max_bars``
    decisions, neighbours are bucketed and stacked by decision.
    """
    decisions = result.decisions
    buckets = _buckets(len(decisions), max_bars)
    bucketed = len(buckets) < len(decisions)
    fig = go.Figure()
    for action in ACTIONS:
        xs: list[int] = []
        ys: list[int] = []
        hover: list[str] = []
        custom: list[int] = []
        for start, stop in buckets:
            chunk = [d for d in decisions[start:stop] if d.action == action]
            if not chunk:
                continue
            if bucketed:
                tokens = sum(d.tokens_before or d.tokens_after for d in chunk)
                xs.append(start)
                ys.append(tokens)
                custom.append(start)
                hover.append(f"decisions {start}–{stop - 1}<br>{len(chunk)} {action}")
                continue
            d = chunk[0]
            xs.append(start)
            ys.append(d.tokens_before if d.action != "inserted" else d.tokens_after)
            custom.append(d.group_id if d.group_id is not None else -1)
            label = f"group {d.group_id}" if d.group_id is not None else "new group"
            turn = "—" if d.turn is None else str(d.turn)
            by = f" by {d.strategy}" if d.strategy else ""
            hover.append(
                f"<b>{action}</b>{by}<br>{label} · {KIND_LABELS.get(d.kind, d.kind)} · "
                f"turn {turn}<br>{d.tokens_before:,} → {d.tokens_after:,} tokens"
                f"<br>{_wrap(d.reason)}"
            )
        if xs:
            fig.add_bar(
                x=xs,
                y=ys,
                name=action,
                marker_color=DECISION_COLORS[action],
                hovertext=hover,
                hoverinfo="text",
                customdata=custom,
            )
    fig.update_layout(barmode="stack", bargap=0.0 if bucketed else 0.08)
    fig.update_xaxes(
        title="group, in order (new summaries in place)",
        dtick=1 if len(decisions) <= 20 else None,
    )
    fig.update_yaxes(title="tokens before")
    title = (
        f"Decisions: {result.tokens_before:,} → {result.tokens_after:,} tokens ({result.status})"
    )
    return _layout(fig, title, height=320)


def _wrap(text: str, width: int = 70) -> str:
    words = escape(text).split()
    lines: list[str] = []
    line = ""
    for w in words:
        if len(line) + len(w) + 1 > width and line:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    if line:
        lines.append(line)
    return "<br>".join(lines[:6])


def budget_bar(
    tokens_before: int,
    tokens_after: int,
    target_tokens: int | None = None,
    trigger_tokens: int | None = None,
) -> go.Figure:
    """Before and after as two horizontal bars against the target and trigger lines."""
    over = target_tokens is not None and tokens_after > target_tokens
    after_color = "#E4572E" if over else "#2BB673"
    fig = go.Figure()
    fig.add_bar(
        y=["after", "before"],
        x=[tokens_after, tokens_before],
        orientation="h",
        marker_color=[after_color, "#8DA0B6"],
        text=[f"{tokens_after:,}", f"{tokens_before:,}"],
        textposition="auto",
        hovertemplate="%{y}: %{x:,} tokens<extra></extra>",
        showlegend=False,
    )
    lines = [
        (target_tokens, "target", TARGET_COLOR, "dot"),
        (trigger_tokens, "trigger", TRIGGER_COLOR, "dash"),
    ]
    if target_tokens is not None and target_tokens == trigger_tokens:
        lines = [(target_tokens, "trigger = target", TARGET_COLOR, "dot")]
    for value, label, color, dash in lines:
        if value is not None:
            fig.add_vline(
                x=value,
                line={"color": color, "dash": dash, "width": 2},
                annotation_text=f"{label} {value:,}",
                annotation_position="top",
                annotation_font_color=color,
            )
    fig.update_xaxes(title="tokens", rangemode="tozero")
    return _layout(fig, "Budget", height=200, margin={"l": 60, "r": 20, "t": 56, "b": 40})


def budget_waterfall(
    parts: Sequence[BudgetPart],
    target_tokens: int | None,
    *,
    title: str = "What the history still costs, against the target",
) -> go.Figure:
    """A waterfall of what the compacted history costs, a total, and the target line.

    The last bar is the room left under the target (green) or the overflow (red).
    """
    labels = [p.label for p in parts]
    values = [p.tokens for p in parts]
    total = sum(values)
    measures = ["relative"] * len(parts) + ["total"]
    labels.append("total")
    values.append(total)
    texts = [f"{v:,}" for v in values]
    hover = [f"{p.label}: {p.tokens:,} tokens<br>{_wrap(p.detail)}" for p in parts]
    hover.append(f"total: {total:,} tokens")
    fig = go.Figure(
        go.Waterfall(
            x=labels,
            y=values,
            measure=measures,
            text=texts,
            textposition="outside",
            hovertext=hover,
            hoverinfo="text",
            connector={"line": {"color": "#ADB5BD"}},
            increasing={"marker": {"color": "#8DA0B6"}},
            totals={"marker": {"color": "#1F77B4"}},
            showlegend=False,
        )
    )
    if target_tokens is not None:
        room = target_tokens - total
        fig.add_bar(
            x=["room under target" if room >= 0 else "over the target"],
            y=[abs(room)],
            base=[total if room >= 0 else target_tokens],
            marker_color="#2BB673" if room >= 0 else "#E4572E",
            text=[f"{room:+,}"],
            textposition="outside",
            hovertemplate=("%{x}: " + f"{room:+,} tokens<extra></extra>"),
            showlegend=False,
        )
        _hline(fig, target_tokens, "target", TARGET_COLOR, "dot")
    fig.update_yaxes(title="tokens", rangemode="tozero")
    return _layout(fig, title, height=420)


def event_timeline(
    events: Sequence[TimelineEvent], *, target_tokens: int | None = None
) -> go.Figure:
    """Lifecycle and stage events in order: a bar from tokens before to after per event.

    Each bar's ``customdata`` is the event's sequence number (for click-to-jump).
    """
    fig = go.Figure()
    labels = [f"{e.seq}. {e.label}" for e in events]
    top = max([1, *(max(e.tokens_before, e.tokens_after) for e in events)])
    if target_tokens is not None:
        top = max(top, target_tokens)
    sliver = top * 0.015
    for kind in dict.fromkeys(e.kind for e in events):
        sel = [(i, e) for i, e in enumerate(events) if e.kind == kind]
        lows = [min(e.tokens_before, e.tokens_after) for _, e in sel]
        highs = [max(e.tokens_before, e.tokens_after) for _, e in sel]
        heights = [max(h - lo, sliver) for lo, h in zip(lows, highs, strict=True)]
        hover = []
        for _, e in sel:
            values = ", ".join(f"{k}={v:,}" for k, v in e.trigger_values.items())
            rng = f"messages {e.message_range[0]}–{e.message_range[1]}" if e.message_range else ""
            hover.append(
                f"<b>{e.label}</b><br>{e.tokens_before:,} → {e.tokens_after:,} tokens"
                + (f"<br>trigger: {_wrap(e.trigger)}" if e.trigger else "")
                + (f" ({values})" if values else "")
                + (f"<br>target: {_wrap(e.target)}" if e.target else "")
                + (f"<br>{rng}" if rng else "")
                + (f"<br>{_wrap(e.detail)}" if e.detail else "")
            )
        fig.add_bar(
            x=[labels[i] for i, _ in sel],
            y=heights,
            base=lows,
            name=kind,
            marker_color=EVENT_COLORS.get(kind, "#6C757D"),
            hovertext=hover,
            hoverinfo="text",
            customdata=[e.seq for _, e in sel],
        )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=[e.tokens_after for e in events],
            mode="lines+markers",
            name="tokens after",
            line={"color": "#343A40", "width": 1, "dash": "dot"},
            marker={"size": 7},
            customdata=[e.seq for e in events],
            hovertemplate="%{x}<br>%{y:,} tokens after<extra></extra>",
        )
    )
    _hline(fig, target_tokens, "target", TARGET_COLOR, "dot")
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(title="event", categoryorder="array", categoryarray=labels)
    fig.update_yaxes(title="tokens", range=[0, top * 1.08])
    return _layout(fig, "Event timeline (bars span tokens before → after)", height=400)


def replay_chart(
    steps: Sequence[ReplayStep],
    *,
    trigger_tokens: int | None = None,
    target_tokens: int | None = None,
) -> go.Figure:
    """A session replayed turn by turn: tokens sent before and after each evaluation."""
    fig = go.Figure()
    xs = [s.turn for s in steps]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[s.tokens_in for s in steps],
            mode="lines+markers",
            name="prepared history (before compaction)",
            line={"color": "#1F77B4"},
            hovertemplate="evaluation %{x}<br>%{y:,} tokens before compaction<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[s.tokens_out for s in steps],
            mode="lines",
            name="sent to the model",
            line={"color": "#2BB673", "shape": "hv"},
            hovertemplate="evaluation %{x}<br>%{y:,} tokens sent<extra></extra>",
        )
    )
    fired = [s for s in steps if s.fired]
    if fired:
        fig.add_trace(
            go.Scatter(
                x=[s.turn for s in fired],
                y=[s.tokens_in for s in fired],
                mode="markers",
                name="trigger fired",
                marker={
                    "size": 12,
                    "symbol": "star",
                    "color": [STATUS_COLORS.get(s.status, "#6C757D") for s in fired],
                },
                customdata=[s.status for s in fired],
                hovertemplate="evaluation %{x}: %{customdata}<extra></extra>",
            )
        )
    _trigger_target(fig, trigger_tokens, target_tokens)
    fig.update_xaxes(title="evaluation (end of a turn)")
    fig.update_yaxes(title="tokens", rangemode="tozero")
    return _layout(fig, "Session replay: when each trigger fires", height=380)


def sweep_chart(
    points: Sequence[SweepPoint], parameter: str, *, target_tokens: int | None = None
) -> go.Figure:
    """Tokens after, groups kept and status against the swept parameter."""
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        row_heights=[0.65, 0.35],
        vertical_spacing=0.08,
        subplot_titles=("tokens after", "groups kept"),
    )
    ok = [p for p in points if p.tokens_after is not None]
    fig.add_trace(
        go.Scatter(
            x=[p.value for p in ok],
            y=[p.tokens_after for p in ok],
            mode="lines",
            line={"color": "#8DA0B6"},
            showlegend=False,
            hoverinfo="skip",
        ),
        1,
        1,
    )
    for status, color in STATUS_COLORS.items():
        sel = [p for p in ok if p.status == status]
        if sel:
            fig.add_trace(
                go.Scatter(
                    x=[p.value for p in sel],
                    y=[p.tokens_after for p in sel],
                    mode="markers",
                    name=status,
                    marker={"color": color, "size": 10},
                    hovertemplate=f"{parameter}=%{{x}}<br>%{{y:,}} tokens<br>{status}"
                    "<extra></extra>",
                ),
                1,
                1,
            )
    fig.add_trace(
        go.Bar(
            x=[p.value for p in ok],
            y=[p.groups_kept for p in ok],
            marker_color="#1F77B4",
            name="groups kept",
            showlegend=False,
            hovertemplate=f"{parameter}=%{{x}}<br>%{{y}} groups kept<extra></extra>",
        ),
        2,
        1,
    )
    if target_tokens is not None:
        fig.add_hline(
            y=target_tokens,
            line={"color": TARGET_COLOR, "dash": "dot", "width": 2},
            annotation_text=f"target {target_tokens:,}",
            annotation_font_color=TARGET_COLOR,
            row=1,
            col=1,
        )
    fig.update_xaxes(title=parameter, row=2, col=1)
    return _layout(fig, f"Sweep of {parameter}", height=460)


def compare_chart(outcomes: Mapping[str, RunOutcome]) -> go.Figure:
    """Tokens before and after per configuration, coloured by status."""
    names = list(outcomes)
    before = [o.result.tokens_before if o.result else 0 for o in outcomes.values()]
    after = [o.result.tokens_after if o.result else 0 for o in outcomes.values()]
    statuses = [o.status for o in outcomes.values()]
    kept = [groups_kept(o.result) if o.result else 0 for o in outcomes.values()]
    fig = go.Figure()
    fig.add_bar(x=names, y=before, name="before", marker_color="#8DA0B6")
    fig.add_bar(
        x=names,
        y=after,
        name="after",
        marker_color=[STATUS_COLORS.get(s, "#6C757D") for s in statuses],
        text=[f"{a:,} · {s}" for a, s in zip(after, statuses, strict=True)],
        textposition="outside",
        customdata=kept,
        hovertemplate="%{x}<br>%{y:,} tokens after<br>%{customdata} groups kept<extra></extra>",
    )
    fig.update_layout(barmode="group")
    fig.update_yaxes(title="tokens", rangemode="tozero")
    return _layout(fig, "Configurations side by side", height=380)


def usd(value: float) -> str:
    """Dollars with enough digits for small per-turn costs."""
    if value == 0:
        return "$0"
    digits = 2 if abs(value) >= 10 else 4 if abs(value) >= 0.01 else 6
    return f"${value:,.{digits}f}"


def cumulative_costs(cost: CostEstimate) -> tuple[list[float], list[float]]:
    """Cumulative cost after 0..N further turns, without and with the compaction (USD).

    The compaction's own cost (the summarizer call) is paid at turn 0.
    """
    without = [0.0]
    with_ = [cost.compaction_cost]
    for w, c in zip(cost.per_turn_without, cost.per_turn_with, strict=True):
        without.append(without[-1] + w)
        with_.append(with_[-1] + c)
    return without, with_


def cost_chart(cost: CostEstimate) -> go.Figure:
    """Cumulative input cost of the next turns, with and without the compaction.

    The break-even turn (when the compaction has paid for rewriting the prompt cache)
    is marked; the title says when it never breaks even.
    """
    without, with_ = cumulative_costs(cost)
    turns = list(range(len(without)))
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=turns,
            y=without,
            mode="lines+markers",
            name="without compaction",
            line={"color": "#8DA0B6", "width": 2},
            customdata=[usd(v) for v in without],
            hovertemplate="after turn %{x}: %{customdata}<extra>without</extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=turns,
            y=with_,
            mode="lines+markers",
            name="with compaction",
            line={"color": "#2BB673", "width": 2},
            customdata=[usd(v) for v in with_],
            hovertemplate="after turn %{x}: %{customdata}<extra>with</extra>",
        )
    )
    turn = cost.break_even_turn
    if turn is not None and turn <= cost.further_turns:
        fig.add_vline(
            x=turn,
            line={"color": TRIGGER_COLOR, "dash": "dash", "width": 2},
            annotation_text=f"break-even: turn {turn}",
            annotation_position="top left",
            annotation_font_color=TRIGGER_COLOR,
        )
        fig.add_trace(
            go.Scatter(
                x=[turn],
                y=[with_[turn]],
                mode="markers",
                name="break-even",
                marker={"color": TRIGGER_COLOR, "size": 13, "symbol": "star"},
                hovertemplate=f"break-even after turn {turn}<extra></extra>",
            )
        )
    if turn is None:
        verdict = "never breaks even at these prices"
    elif turn > cost.further_turns:
        verdict = f"breaks even after turn {turn}"
    else:
        verdict = f"saves {usd(cost.savings)}" if cost.savings >= 0 else "costs more"
    model = f" · {cost.model}" if cost.model else ""
    fig.update_xaxes(title="further turns", dtick=1 if cost.further_turns <= 20 else None)
    fig.update_yaxes(title="cumulative input cost (USD)", rangemode="tozero", tickprefix="$")
    title = f"Cost of the next {cost.further_turns} turns{model}: {verdict}"
    return _layout(fig, title, height=360)


__all__ = [
    "DECISION_COLORS",
    "EVENT_COLORS",
    "KIND_COLORS",
    "STATUS_COLORS",
    "budget_bar",
    "budget_waterfall",
    "compare_chart",
    "composition",
    "cost_chart",
    "cumulative_costs",
    "cumulative_tokens",
    "decision_map",
    "estimate_vs_exact",
    "event_timeline",
    "replay_chart",
    "sweep_chart",
    "tokens_per_group",
    "usd",
]
