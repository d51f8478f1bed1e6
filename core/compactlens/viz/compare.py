"""Figures across configurations: a parameter sweep and configurations side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import cast

import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from compactlens.analysis import Verdict
from compactlens.analysis.verdict import HEADLINES, LEVEL_COLORS, Level
from compactlens.viz._style import STATUS_COLORS, TARGET_COLOR, _layout, _line
from compactlens.viz.events import RunLike, SweepPoint, groups_kept
from compactlens.viz.words import nice_step, num, param_words, share

#: The colours of a sweep point's status when it has no verdict: failures in theirs, the
#: others in two greys (a status does not know the run's costs: "compacted" is not green).
_STATUS_MARKERS = {
    **{name: STATUS_COLORS[name] for name in ("unchanged", "cannot-fit", "error")},
    "compacted": "#8DA0B6",
}

#: The colour of fact recall in these figures (the sweep's line, the compare bars).
RECALL_COLOR = "#7B61FF"


def sweep_chart(
    points: Sequence[SweepPoint], parameter: str, *, target_tokens: int | None = None
) -> go.Figure:
    """Tokens after, fact recall (when measured) and groups kept against the swept
    parameter, status as the marker colour.

    The target line is the target each run was judged against (``SweepPoint.target_tokens``,
    else ``target_tokens``): one line when every run has the same target, a dotted line
    through each run's target when the swept parameter moves it (a stage's trigger sets
    that stage's target), so a "cannot-fit" point always sits above its own target."""
    ok = [p for p in points if p.tokens_after is not None]
    measured = [p for p in ok if p.recall is not None]
    titles = ["tokens after", *(["fact recall"] if measured else []), "groups kept"]
    rows = len(titles)
    fig = make_subplots(
        rows=rows,
        cols=1,
        shared_xaxes=True,
        row_heights=[0.5, 0.25, 0.25] if measured else [0.65, 0.35],
        vertical_spacing=0.08,
    )
    # Each panel names its measure on its axis: a title above a panel sat on the data of
    # the one above it (the tokens-after points, the target line).
    for row, title in enumerate(titles, start=1):
        fig.update_yaxes(title_text=title, row=row, col=1)
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
    name = escape(param_words(parameter))
    for label, color in _marker_kinds(ok):
        sel = [p for p in ok if _marker_kind(p)[0] == label]
        fig.add_trace(
            go.Scatter(
                x=[p.value for p in sel],
                y=[p.tokens_after for p in sel],
                mode="markers",
                name=label,
                marker={"color": color, "size": 10},
                customdata=[_recall_words(p.recall) for p in sel],
                text=[_target_words(p, target_tokens) for p in sel],
                hovertemplate=f"{name}: %{{x:,}}<br>%{{y:,}} tokens<br>{escape(label)}%{{text}}"
                + ("<br>fact recall %{customdata}" if measured else "")
                + "<extra></extra>",
            ),
            1,
            1,
        )
    if measured:
        fig.add_trace(
            go.Scatter(
                x=[p.value for p in measured],
                y=[round((p.recall or 0.0) * 100, 1) for p in measured],
                mode="lines+markers",
                name="fact recall",
                line={"color": RECALL_COLOR},
                showlegend=False,
                hovertemplate=f"{name}: %{{x:,}}<br>fact recall %{{y}}%<extra></extra>",
            ),
            2,
            1,
        )
        fig.update_yaxes(range=[0, 105], ticksuffix="%", row=2, col=1)
    fig.add_trace(
        go.Bar(
            x=[p.value for p in ok],
            y=[p.groups_kept for p in ok],
            marker_color="#1F77B4",
            name="groups kept",
            showlegend=False,
            hovertemplate=f"{name}: %{{x:,}}<br>%{{y:,}} groups kept<extra></extra>",
        ),
        rows,
        1,
    )
    # Groups are counted: whole-number ticks only.
    most = max([1, *(p.groups_kept or 0 for p in ok)])
    fig.update_yaxes(rangemode="tozero", dtick=nice_step(most, 4), row=rows, col=1)
    targets = [(p.value, p.target_tokens) for p in ok if p.target_tokens is not None]
    # Room above the highest point and the target, so neither touches the panel above.
    top = max([1, *(p.tokens_after or 0 for p in ok), target_tokens or 0, *(t for _, t in targets)])
    fig.update_yaxes(range=[0, top * 1.12], row=1, col=1)
    if len({t for _, t in targets}) > 1:
        fig.add_trace(
            go.Scatter(
                x=[x for x, _ in targets],
                y=[t for _, t in targets],
                mode="lines",
                line={"color": TARGET_COLOR, "dash": "dot", "width": 2},
                name="each run's target",
                hovertemplate=f"{name}: %{{x:,}}<br>target %{{y:,}} tokens<extra></extra>",
            ),
            1,
            1,
        )
    else:
        target = targets[0][1] if targets else target_tokens
        if target is not None:
            text = f"target {num(target)}"
            _line(fig, y=target, text=text, color=TARGET_COLOR, dash="dot", position="top right")
    words = param_words(parameter)
    fig.update_xaxes(title=words, row=rows, col=1)
    return _layout(fig, f"Sweep of {words}", height=560 if measured else 460)


def _target_words(point: SweepPoint, default: int | None) -> str:
    """The hover line of a run's target (empty when unknown)."""
    target = point.target_tokens if point.target_tokens is not None else default
    return "" if target is None else f"<br>target {num(target)} tokens"


def _verdict_recall(v: Verdict | None) -> float | None:
    """A verdict's fact recall when it measured one (else None)."""
    return v.numbers.fact_recall if v is not None and v.numbers.measured else None


def _marker_kind(point: SweepPoint) -> tuple[str, str]:
    """A point's marker name and colour: its verdict's headline in the verdict's colour
    when the run was judged; else its status, coloured only when it failed (a status
    does not know the run's costs, so "compacted" is never green)."""
    if point.level in LEVEL_COLORS:
        level = cast(Level, point.level)
        return HEADLINES[level], LEVEL_COLORS[level]
    return point.status, _STATUS_MARKERS.get(point.status, STATUS_COLORS["unchanged"])


def _marker_kinds(points: Sequence[SweepPoint]) -> list[tuple[str, str]]:
    """The marker kinds the points have, in the order of first appearance."""
    return list(dict.fromkeys(_marker_kind(p) for p in points))


def _recall_words(recall: float | None) -> str:
    return "—" if recall is None else share(recall)


def compare_chart(
    outcomes: Mapping[str, RunLike],
    recalls: Mapping[str, float | None] | None = None,
    *,
    verdicts: Mapping[str, Verdict | None] | None = None,
) -> go.Figure:
    """Tokens before and after per configuration, and each one's fact recall beside them
    when measured (``recalls``, by the same names, else each verdict's).

    With ``verdicts`` (by the same names) each "after" bar is coloured and labelled by its
    run's verdict, as the card under the chart reads ("Fits, with costs" is amber, not the
    green of the engine's "compacted"); without one, by the run's status. The recall is a
    bar of its own on the right axis, so its label never sits on the tokens' label."""
    names = list(outcomes)
    judged = [(verdicts or {}).get(n) for n in names]
    before = [o.result.tokens_before if o.result else 0 for o in outcomes.values()]
    after = [o.result.tokens_after if o.result else 0 for o in outcomes.values()]
    statuses = [o.status for o in outcomes.values()]
    kept = [groups_kept(o.result) if o.result else 0 for o in outcomes.values()]
    recall = [
        (recalls or {}).get(n, _verdict_recall(v)) if recalls is not None else _verdict_recall(v)
        for n, v in zip(names, judged, strict=True)
    ]
    colors = [
        LEVEL_COLORS[v.level] if v is not None else STATUS_COLORS.get(s, "#6C757D")
        for v, s in zip(judged, statuses, strict=True)
    ]
    text = [
        f"{num(a)}<br>{escape(v.headline) if v is not None else s}"
        for a, s, v in zip(after, statuses, judged, strict=True)
    ]
    fig = go.Figure()
    fig.add_bar(x=names, y=before, name="before", marker_color="#8DA0B6", offsetgroup="before")
    fig.add_bar(
        x=names,
        y=after,
        name="after",
        marker_color=colors,
        offsetgroup="after",
        text=text,
        textposition="outside",
        customdata=[[k, _recall_words(r)] for k, r in zip(kept, recall, strict=True)],
        hovertemplate="%{x}<br>%{y:,} tokens after<br>%{customdata[0]:,} groups kept"
        "<br>fact recall %{customdata[1]}<extra></extra>",
    )
    measured = [(n, r) for n, r in zip(names, recall, strict=True) if r is not None]
    if measured:
        fig.add_bar(
            x=[n for n, _ in measured],
            y=[round(r * 100, 1) for _, r in measured],
            name="fact recall",
            marker_color=RECALL_COLOR,
            offsetgroup="recall",
            yaxis="y2",
            text=[f"recall {share(r)}" for _, r in measured],
            textposition="outside",
            hovertemplate="%{x}<br>fact recall %{y}%<extra></extra>",
        )
        fig.update_layout(
            yaxis2={
                "title": "fact recall",
                "overlaying": "y",
                "side": "right",
                "range": [0, 115],
                "tickvals": [0, 25, 50, 75, 100],
                "ticktext": ["0%", "25%", "50%", "75%", "100%"],
                "showgrid": False,
            }
        )
    fig.update_layout(barmode="group", uniformtext={"minsize": 11, "mode": "show"})
    # Room above the tallest bar for its two-line label.
    top = max([*before, *after, 1]) * 1.18
    fig.update_layout(yaxis={"title": "tokens", "rangemode": "tozero", "range": [0, top]})
    return _layout(fig, "Configurations side by side", height=400)
