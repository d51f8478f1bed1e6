"""Figures of money: the cumulative cost of the next turns, with and without compaction."""

from __future__ import annotations

import plotly.graph_objects as go  # type: ignore[import-untyped]

from compactlens.analysis import CostEstimate
from compactlens.viz._style import TRIGGER_COLOR, _layout, _line
from compactlens.viz.words import money, plural


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
            customdata=[money(v) for v in without],
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
            customdata=[money(v) for v in with_],
            hovertemplate="after turn %{x}: %{customdata}<extra>with</extra>",
        )
    )
    turn = cost.break_even_turn
    if turn is not None and turn <= cost.further_turns:
        text = f"break-even: turn {turn}"
        _line(fig, x=turn, text=text, color=TRIGGER_COLOR, dash="dash", position="top left")
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
        verdict = f"saves {money(cost.savings)}" if cost.savings >= 0 else "costs more"
    model = f" · {cost.model}" if cost.model else ""
    fig.update_xaxes(title="further turns", dtick=1 if cost.further_turns <= 20 else None)
    # Ticks to the cent, as every cost is written (finer only when the costs are that small).
    cents = max([*without, *with_, 0.0]) >= 0.05
    fig.update_yaxes(
        title="cumulative input cost (USD)",
        rangemode="tozero",
        tickprefix="$",
        tickformat=",.2f" if cents else None,
    )
    title = f"Cost of the next {plural(cost.further_turns, 'turn')}{model}: {verdict}"
    return _layout(fig, title, height=360)
