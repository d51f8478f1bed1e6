"""Figures of one transcript: tokens per group, cumulative tokens, composition, and the
estimate against exact counts."""

from __future__ import annotations

from html import escape

import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from compactlens.engine import CompactionResult, MessageIndex
from compactlens.model.errors import ConfigError
from compactlens.viz._style import (
    _LEGEND_ROW_PX,
    KIND_COLORS,
    KIND_LABELS,
    KINDS,
    ROLE_COLORS,
    WEBGL_POINTS,
    _buckets,
    _layout,
    _trigger_target,
    legend_rows,
)
from compactlens.viz.words import num, plural, share


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
                    f"groups {num(start)}–{num(stop - 1)}<br>"
                    f"{plural(len(chunk), KIND_LABELS[kind] + ' group')}"
                    f"<br>{num(tokens)} tokens"
                )
            else:
                g = chunk[0]
                turn = "—" if g.turn is None else str(g.turn)
                tools = escape(", ".join(g.tool_names[:4]))
                hover.append(
                    f"group {g.id} · {KIND_LABELS[kind]}<br>turn {turn} · "
                    f"{plural(g.message_count, 'message')}<br>{num(g.tokens)} tokens"
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
    return _layout(fig, f"Tokens per group ({num(index.total_groups)} groups, stacked by kind)")


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
    return _layout(fig, f"Cumulative tokens ({num(index.total_tokens)} in total)")


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
            text=_shares([by_role[r] for r in roles]),
            texttemplate="%{text}",
            textposition="inside",
            insidetextorientation="horizontal",
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
            text=_shares([by_kind[k] for k in kinds]),
            texttemplate="%{text}",
            textposition="inside",
            insidetextorientation="horizontal",
            marker={"colors": [KIND_COLORS[k] for k in kinds]},
            hole=0.5,
            sort=False,
            name="kind",
            hovertemplate="%{label}: %{value:,} tokens (%{percent})<extra></extra>",
        ),
        1,
        2,
    )
    fig = _layout(fig, "Composition of the tokens", height=340)
    # The legend goes under the donuts, where plotly makes room for as many rows as the
    # width needs: in the band above them, a legend that wrapped to more rows than
    # foreseen ran over the donuts' titles.
    top = fig.layout.margin.t - legend_rows(fig) * _LEGEND_ROW_PX
    fig.update_layout(
        legend={"yref": "paper", "y": -0.04, "yanchor": "top"}, margin={"t": top, "b": 12}
    )
    return fig


#: A slice under this share of its donut is labelled on hover only (its label would not
#: fit: it ran into the donut's title).
_LABELLED_SHARE = 0.04


def _shares(values: list[int]) -> list[str]:
    """Each slice's label: its share of the total in whole percents (:func:`share`: "8%"),
    so a donut never shows "8.37%" next to "32%"; empty for a slice too thin to hold it."""
    total = sum(values)
    return [share(v / total) if total and v / total >= _LABELLED_SHARE else "" for v in values]


def estimate_vs_exact(estimate: MessageIndex, exact: MessageIndex) -> go.Figure:
    """Per-message estimated vs exact token counts, with the y = x line."""
    if estimate.total_messages != exact.total_messages:
        raise ConfigError("both indexes must be built over the same messages")
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
        f"Estimate vs exact per message: {num(estimate.total_tokens)} vs {num(exact.total_tokens)} "
        f"tokens (x{ratio:.2f})"
    )
    return _layout(fig, title)
