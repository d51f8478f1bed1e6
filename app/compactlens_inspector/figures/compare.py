"""Figures across configurations: a parameter sweep and configurations side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from compactlens_inspector.figures._style import STATUS_COLORS, TARGET_COLOR, _layout
from compactlens_inspector.runs import RunOutcome
from compactlens_inspector.views import SweepPoint, groups_kept


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
        hovertemplate="%{x}<br>%{y:,} tokens after<br>%{customdata:,} groups kept<extra></extra>",
    )
    fig.update_layout(barmode="group")
    fig.update_yaxes(title="tokens", rangemode="tozero")
    return _layout(fig, "Configurations side by side", height=380)
