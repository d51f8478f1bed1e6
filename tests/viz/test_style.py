"""The figures' own small template and labelled lines look as plotly's ``plotly_white``
and ``add_hline`` / ``add_vline`` would draw them, without their cost."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import pytest
from apptest_helpers import coding_agent

import compactlens.viz as figures
from compactlens import CharEstimator, MessageIndex
from compactlens.formats import from_caller
from compactlens.viz._style import _line, _template
from compactlens_inspector.lab.config import SummarizerSettings, preset
from compactlens_inspector.lab.runs import budget_parts, make_summarizer, run_config


def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> dict[tuple[str | int, ...], Any]:
    if isinstance(value, dict):
        out: dict[tuple[str | int, ...], Any] = {}
        for key, item in value.items():
            out |= _leaves(item, (*path, key))
        return out
    if isinstance(value, list) and value and isinstance(value[0], dict):
        out = {}
        for i, item in enumerate(value):
            out |= _leaves(item, (*path, i))
        return out
    return {path: value}


@pytest.fixture(scope="module")
def built() -> list[go.Figure]:
    """Every figure the library draws, over a real sample."""
    index = MessageIndex.build(from_caller(coding_agent()).messages, CharEstimator())
    config = preset("reference", index.total_tokens // 2)
    outcome = run_config(index, config, make_summarizer(SummarizerSettings()))
    result = outcome.result
    assert result is not None
    return [
        figures.decision_map(result),
        figures.budget_bar(result.tokens_before, result.tokens_after, 900, 1200),
        figures.budget_waterfall(budget_parts(outcome, index), config.target_tokens),
        figures.tokens_per_group(index),
        figures.cumulative_tokens(index, trigger_tokens=1200, target_tokens=900, result=result),
        figures.composition(index),
        figures.event_timeline(figures.timeline_events(result), target_tokens=900),
        figures.compare_chart({"a": outcome, "b": outcome}),
    ]


def test_template_is_plotly_white_where_the_figures_draw(built: list[go.Figure]) -> None:
    """Every value of the small template is plotly_white's, and every trace type the
    figures draw carries plotly_white's defaults for that type."""
    white = pio.templates["plotly_white"].to_plotly_json()
    ours = go.layout.Template(_template()).to_plotly_json()
    white_leaves = _leaves(white)
    for path, value in _leaves(ours).items():
        assert path in white_leaves and white_leaves[path] == value, path
    drawn = {trace.type for fig in built for trace in fig.data}
    assert {"bar", "pie", "scatter", "waterfall"} <= drawn
    for kind in drawn:
        assert ours["data"].get(kind) == white["data"].get(kind), kind
    # The layout sections a 2-D figure reads are all there.
    for section in ("xaxis", "yaxis", "font", "colorway", "plot_bgcolor", "paper_bgcolor"):
        assert ours["layout"][section] == white["layout"][section], section


def test_each_figure_has_its_own_template(built: list[go.Figure]) -> None:
    first, second = built[0], built[1]
    first.layout.template.layout.paper_bgcolor = "black"
    assert second.layout.template.layout.paper_bgcolor == "white"
    assert figures.budget_bar(10, 5).layout.template.layout.paper_bgcolor == "white"


@pytest.mark.parametrize(
    ("axis", "position"), [("y", "top left"), ("y", "top right"), ("x", "top"), ("x", "top left")]
)
def test_lines_are_what_plotly_draws(axis: str, position: str) -> None:
    ours, theirs = go.Figure(), go.Figure()
    for fig in (ours, theirs):
        fig.add_bar(x=[1, 2, 3], y=[4, 5, 6])
    style = {"color": "#E4572E", "dash": "dot", "width": 2}
    if axis == "y":
        _line(ours, y=4.5, text="target: 4", color="#E4572E", dash="dot", position=position)
        theirs.add_hline(
            y=4.5,
            line=style,
            annotation_text="target: 4",
            annotation_position=position,
            annotation_font_color="#E4572E",
        )
    else:
        _line(ours, x=2, text="turn 2", color="#E4572E", dash="dot", position=position)
        theirs.add_vline(
            x=2,
            line=style,
            annotation_text="turn 2",
            annotation_position=position,
            annotation_font_color="#E4572E",
        )
    assert ours.layout.shapes == theirs.layout.shapes
    assert ours.layout.annotations == theirs.layout.annotations
