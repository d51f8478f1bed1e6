"""Figures of one compaction: the decision map, the budget bar and the budget waterfall."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import plotly.graph_objects as go  # type: ignore[import-untyped]

from compactlens.analysis import BudgetPart
from compactlens.analysis.verdict import LEVEL_COLORS
from compactlens.engine import (
    CompactionResult,
    GroupDecision,
    decision_words,
    reason_words,
    stage_words,
)
from compactlens.viz._style import (
    ACTIONS,
    DECISION_COLORS,
    KIND_LABELS,
    TARGET_COLOR,
    TRIGGER_COLOR,
    _buckets,
    _hline,
    _layout,
    _line,
    _wrap,
)
from compactlens.viz.words import num, part_words


def decision_map(result: CompactionResult, *, max_bars: int = 1500) -> go.Figure:
    """Every group in order, its height its original tokens, coloured by its decision.

    Hovering a bar shows the decision, the strategy and the reason. Above ``max_bars``
    decisions, neighbours are bucketed and stacked by decision.
    """
    decisions = result.decisions
    buckets = _buckets(len(decisions), max_bars)
    bucketed = len(buckets) < len(decisions)
    # One pass over the decisions: per action, its bars (x, y, hover, customdata).
    bars: dict[str, tuple[list[int], list[int], list[str], list[int]]] = {}
    for start, stop in buckets:
        chunks: dict[str, list[GroupDecision]] = {}
        for d in decisions[start:stop]:
            chunks.setdefault(d.action, []).append(d)
        for action, chunk in chunks.items():
            xs, ys, hover, custom = bars.setdefault(action, ([], [], [], []))
            xs.append(start)
            if bucketed:
                ys.append(sum(d.tokens_before or d.tokens_after for d in chunk))
                custom.append(start)
                hover.append(
                    f"decisions {num(start)}–{num(stop - 1)}<br>"
                    f"{num(len(chunk))} {decision_words(action)}"
                )
            else:
                d = chunk[0]
                ys.append(d.tokens_before if d.action != "inserted" else d.tokens_after)
                custom.append(d.group_id if d.group_id is not None else -1)
                hover.append(_decision_hover(d))
    fig = go.Figure()
    for action in ACTIONS:
        if action in bars:
            xs, ys, hover, custom = bars[action]
            fig.add_bar(
                x=xs,
                y=ys,
                name=decision_words(action),
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
    before, after = num(result.tokens_before), num(result.tokens_after)
    title = f"Decisions: {before} → {after} tokens ({result.status})"
    return _layout(fig, title, height=320)


def _decision_hover(d: GroupDecision) -> str:
    label = f"group {d.group_id}" if d.group_id is not None else "new group"
    turn = "—" if d.turn is None else str(d.turn)
    by = f" by {stage_words(d.strategy)}" if d.strategy else ""
    return (
        f"<b>{decision_words(d.action)}</b>{by}<br>{label} · {KIND_LABELS.get(d.kind, d.kind)} · "
        f"turn {turn}<br>{num(d.tokens_before)} → {num(d.tokens_after)} tokens"
        f"<br>{_wrap(reason_words(d.reason))}"
    )


#: The "after" bar within the target when no verdict colours it.
AFTER_NEUTRAL = "#4C6A92"


def budget_bar(
    tokens_before: int,
    tokens_after: int,
    target_tokens: int | None = None,
    trigger_tokens: int | None = None,
    *,
    level: str | None = None,
) -> go.Figure:
    """Before and after as two horizontal bars against the target and trigger lines. The
    "after" bar is red over the target; within it, the colour of the run's verdict
    ``level`` when given, else a neutral blue-grey (a met target alone is not "safe": the
    bar was green under an amber verdict)."""
    over = target_tokens is not None and tokens_after > target_tokens
    within = LEVEL_COLORS.get(level, AFTER_NEUTRAL) if level else AFTER_NEUTRAL  # type: ignore[call-overload]
    after_color = "#E4572E" if over else within
    fig = go.Figure()
    fig.add_bar(
        y=["after", "before"],
        x=[tokens_after, tokens_before],
        orientation="h",
        marker_color=[after_color, "#8DA0B6"],
        text=[num(tokens_after), num(tokens_before)],
        textposition="auto",
        hovertemplate="%{y}: %{x:,} tokens<extra></extra>",
        showlegend=False,
    )
    lines = [
        (target_tokens, "target", TARGET_COLOR, "dot"),
        (trigger_tokens, "trigger", TRIGGER_COLOR, "dash"),
    ]
    if target_tokens is not None and target_tokens == trigger_tokens:
        lines = [(target_tokens, "trigger and target", TARGET_COLOR, "dot")]
    for value, label, color, dash in lines:
        if value is not None:
            _line(
                fig, x=value, text=f"{label} {num(value)}", color=color, dash=dash, position="top"
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
    labels = [part_words(p.label) for p in parts]
    values = [p.tokens for p in parts]
    total = sum(values)
    measures = ["relative"] * len(parts) + ["total"]
    labels.append("total")
    values.append(total)
    texts = [num(v) for v in values]
    hover = [
        f"{escape(part_words(p.label))}: {num(p.tokens)} tokens"
        + (f" ({escape(p.label)})" if part_words(p.label) != p.label else "")
        + f"<br>{_wrap(p.detail)}"
        for p in parts
    ]
    hover.append(f"total: {num(total)} tokens")
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
            # The bar's name says which way (as the page's "Over the target" card does):
            # the number is the same one, without a sign.
            text=[num(abs(room))],
            textposition="outside",
            hovertemplate=("%{x}: " + f"{num(abs(room))} tokens<extra></extra>"),
            showlegend=False,
        )
        _hline(fig, target_tokens, "target", TARGET_COLOR, "dot")
    fig.update_yaxes(title="tokens", rangemode="tozero")
    return _layout(fig, title, height=420)
