"""compactlens.viz: plain functions from compactlens values to plotly figures."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import plotly.graph_objects as go
import pytest
from apptest_helpers import coding_agent

import compactlens.viz as figures
import compactlens.viz._style as figures_style
from compactlens import CharEstimator, MessageIndex, TiktokenTokenizer
from compactlens.analysis import group_counts
from compactlens.analysis.verdict import LEVEL_COLORS
from compactlens.engine import decision_words
from compactlens.formats import from_caller
from compactlens.viz import SweepPoint, timeline_events
from compactlens_inspector.lab.config import SummarizerSettings, preset
from compactlens_inspector.lab.replay import replay_session
from compactlens_inspector.lab.runs import budget_parts, make_summarizer, run_config
from compactlens_inspector.views.run import sweep_point, sweep_values


@pytest.fixture(scope="module")
def index() -> MessageIndex:
    return MessageIndex.build(from_caller(coding_agent()).messages, CharEstimator())


def _ys(fig: go.Figure) -> list[float]:
    return [y for trace in fig.data if trace.type == "bar" for y in trace.y]


@pytest.mark.slow
def test_figures_module_does_not_import_streamlit() -> None:
    code = (
        "import sys, compactlens.viz, compactlens_inspector.exports.report;"
        "print('streamlit' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_plotly_is_imported_only_when_a_figure_is_asked_for() -> None:
    code = (
        "import sys\n"
        "from compactlens.viz import timeline_events, num, DECISION_COLORS\n"
        "print('plotly' in sys.modules)\n"
        "from compactlens.viz import decision_map\n"
        "print('plotly' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_without_plotly_a_figure_names_the_extra() -> None:
    # A meta-path finder that refuses plotly, as in an environment without the extra.
    code = (
        "import sys\n"
        "class NoPlotly:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'plotly':\n"
        "            raise ModuleNotFoundError(name=name)\n"
        "sys.meta_path.insert(0, NoPlotly())\n"
        "import compactlens.viz as viz\n"
        "print(viz.num(1234))\n"
        "try:\n"
        "    viz.decision_map\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0] == "1,234"
    assert "compactlens[viz]" in lines[1] and "decision_map" in lines[1]


def test_tokens_per_group_adds_up_and_is_stacked_by_kind(index: MessageIndex) -> None:
    fig = figures.tokens_per_group(index)
    assert sum(_ys(fig)) == index.total_tokens
    names = {t.name for t in fig.data}
    kinds = {g.kind.value for g in index.groups}
    assert names == {figures.KIND_LABELS[k] for k in kinds}
    for trace in fig.data:
        kind = next(k for k, label in figures.KIND_LABELS.items() if label == trace.name)
        assert trace.marker.color == figures.KIND_COLORS[kind]


def test_large_transcripts_are_bucketed(index: MessageIndex) -> None:
    big = MessageIndex.build(from_caller(coding_agent(400)).messages, CharEstimator())
    fig = figures.tokens_per_group(big, max_bars=50)
    positions = {x for trace in fig.data for x in trace.x}
    assert len(positions) <= 50
    assert sum(_ys(fig)) == big.total_tokens
    cumulative = figures.cumulative_tokens(big)
    assert cumulative.data[0].type == "scattergl"  # WebGL above 2,000 points
    assert cumulative.data[0].y[-1] == big.total_tokens


def test_cumulative_tokens_draws_trigger_and_target(index: MessageIndex) -> None:
    fig = figures.cumulative_tokens(index, trigger_tokens=3000, target_tokens=2000)
    assert fig.data[0].y[-1] == index.total_tokens
    lines = sorted(shape.y0 for shape in fig.layout.shapes)
    assert lines == [2000, 3000]
    same = figures.cumulative_tokens(index, trigger_tokens=2000, target_tokens=2000)
    assert len(same.layout.shapes) == 1


def test_decision_map_colours_every_decision(index: MessageIndex) -> None:
    outcome = run_config(index, preset("truncation", 2000), make_summarizer(SummarizerSettings()))
    assert outcome.result is not None
    fig = figures.decision_map(outcome.result)
    by_name = {t.name: t for t in fig.data}
    # The legend uses the vocabulary's words ("dropped"), as cards and tables do.
    words = {decision_words(d.action): d.action for d in outcome.result.decisions}
    assert set(by_name) == set(words) and "dropped" in by_name and "excluded" not in by_name
    for name, trace in by_name.items():
        action = words[name]
        assert trace.marker.color == figures.DECISION_COLORS[action]
        assert len(trace.x) == sum(1 for d in outcome.result.decisions if d.action == action)
    hover = " ".join(by_name["dropped"].hovertext)
    assert "oldest first" in hover and "dropped" in hover


def test_budget_waterfall_totals_and_room(index: MessageIndex) -> None:
    outcome = run_config(index, preset("truncation", 2000), make_summarizer(SummarizerSettings()))
    assert outcome.result is not None
    parts = budget_parts(outcome, index)
    assert sum(p.tokens for p in parts) == outcome.result.tokens_after
    fig = figures.budget_waterfall(parts, 2000)
    waterfall = fig.data[0]
    assert list(waterfall.measure)[-1] == "total"
    assert waterfall.y[-1] == outcome.result.tokens_after
    room = fig.data[1]
    assert room.y[0] == 2000 - outcome.result.tokens_after
    # The label is the number the page's card shows, without a sign: the bar's name
    # ("room under target" / "over the target") says which way.
    assert room.text[0] == f"{abs(2000 - outcome.result.tokens_after):,}"


def test_event_timeline_carries_event_numbers(index: MessageIndex) -> None:
    outcome = run_config(index, preset("reference", 2000), make_summarizer(SummarizerSettings()))
    assert outcome.result is not None
    events = timeline_events(outcome.result)
    fig = figures.event_timeline(events, target_tokens=2000)
    seqs = sorted(s for t in fig.data if t.type == "bar" for s in t.customdata)
    assert seqs == [e.seq for e in events]


def test_estimate_vs_exact_needs_the_same_messages(index: MessageIndex) -> None:
    exact = MessageIndex.build(index.messages, TiktokenTokenizer("o200k_base"))
    fig = figures.estimate_vs_exact(index, exact)
    points = sum(len(t.x) for t in fig.data if t.mode == "markers")
    assert points == index.total_messages
    with pytest.raises(ValueError):
        figures.estimate_vs_exact(index, MessageIndex.build(index.messages[:3]))


def test_sweep_compare_replay_and_composition(index: MessageIndex) -> None:
    summarizer = make_summarizer(SummarizerSettings())
    points = [
        sweep_point(v, run_config(index, preset("truncation", v), summarizer))
        for v in sweep_values(500, 4000, 5)
    ]
    fig = figures.sweep_chart(points, "budget", target_tokens=2000)
    marked = {t.name for t in fig.data if getattr(t, "mode", "") == "markers"}
    assert marked == {p.status for p in points}
    compare = figures.compare_chart(
        {"a": run_config(index, preset("truncation", 2000), summarizer)}
    )
    assert list(compare.data[1].y) == [
        run_config(index, preset("truncation", 2000), summarizer).result.tokens_after  # type: ignore[union-attr]
    ]
    steps = replay_session(index, preset("truncation", 1500), summarizer, max_steps=5)
    assert figures.replay_chart(steps).data[0].x == tuple(s.turn for s in steps)
    pies = figures.composition(index)
    assert sum(pies.data[0].values) == sum(pies.data[1].values) == index.total_tokens


def test_sweep_markers_take_the_verdicts_colour_and_words() -> None:
    # Review 6: every point was a green "compacted" marker beside a "Fits, with costs" row.
    points = [
        SweepPoint(1000, "compacted", 900, 3, 5, level="costs"),
        SweepPoint(2000, "compacted", 1800, 6, 9, level="safe"),
        SweepPoint(3000, "compacted", 2500, 8, 12),  # not judged
    ]
    fig = figures.sweep_chart(points, "budget", target_tokens=2000)
    marks = {t.name: t.marker.color for t in fig.data if getattr(t, "mode", "") == "markers"}
    assert marks == {
        "Fits, with costs": LEVEL_COLORS["costs"],
        "Fits and safe": LEVEL_COLORS["safe"],
        "compacted": "#8DA0B6",  # a status alone is never green
    }


@pytest.mark.slow
def test_figures_work_from_a_plain_python_process(tmp_path: Path) -> None:
    script = tmp_path / "nb.py"
    script.write_text(
        "from compactlens import MessageIndex\n"
        "from compactlens.model import text_message\n"
        "from compactlens.viz import tokens_per_group\n"
        "ix = MessageIndex.build([text_message('user', 'hi'), text_message('assistant', 'yo')])\n"
        "print(len(tokens_per_group(ix).to_json()) > 0)\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


@pytest.mark.parametrize(
    ("original", "compacted", "prefix", "compaction_cost"),
    [
        (40_000, 8_000, 500, 0.0),  # pays off at once
        (40_000, 8_000, 500, 0.05),  # a costly summary: pays off after a few turns
        (40_000, 8_000, 500, 0.2),  # pays off only after the turns shown
        (8_000, 9_000, 8_000, 0.0),  # grows the request: never pays off
    ],
)
def test_cost_chart_accumulates_and_marks_break_even(
    original: int, compacted: int, prefix: int, compaction_cost: float
) -> None:
    from compactlens.analysis import DEFAULT_PRICES, estimate_cost

    cost = estimate_cost(
        original,
        compacted,
        prefix,
        prices=DEFAULT_PRICES["claude-sonnet-4"],
        further_turns=12,
        growth_tokens=300,
        compaction_cost=compaction_cost,
        model="claude-sonnet-4",
    )
    fig = figures.cost_chart(cost)
    lines = {t.name: list(t.y) for t in fig.data if t.mode == "lines+markers"}
    without, with_ = lines["without compaction"], lines["with compaction"]
    assert len(without) == len(with_) == 13  # turn 0 .. 12
    assert without[0] == 0 and with_[0] == compaction_cost
    assert without == sorted(without) and with_ == sorted(with_)
    assert math.isclose(without[-1], cost.cost_without)
    assert math.isclose(with_[-1], cost.cost_with)
    turn = cost.break_even_turn
    marked = [t for t in fig.data if t.name == "break-even"]
    if turn is None:
        assert not marked and "never breaks even" in fig.layout.title.text
        assert all(w > wo for w, wo in zip(with_[1:], without[1:], strict=True))
    elif turn > cost.further_turns:
        assert not marked and f"breaks even after turn {turn}" in fig.layout.title.text
        assert all(w > wo for w, wo in zip(with_, without, strict=True))
    else:
        # From the break-even turn on, compaction is cheaper; before it, it is not.
        assert turn > 1 or compaction_cost == 0
        assert with_[turn] <= without[turn]
        assert all(with_[k] > without[k] for k in range(1, turn))
        assert marked and list(marked[0].x) == [turn]
        assert any(f"turn {turn}" in (a.text or "") for a in fig.layout.annotations)


# -- legends and colours (issue 25, build item 6) -------------------------------------------------


def _legend_colours(fig: go.Figure) -> dict[str, str]:
    """Each legend entry's colour (a trace with one colour; a hatch pattern is part of it)."""
    out: dict[str, str] = {}
    for t in fig.data:
        if t.showlegend is False or not t.name:
            continue
        marker = getattr(t, "marker", None)
        colour = getattr(marker, "color", None) if marker is not None else None
        if not isinstance(colour, str):
            line = getattr(t, "line", None)
            colour = getattr(line, "color", None) if line is not None else None
        if isinstance(colour, str):
            pattern = getattr(getattr(marker, "pattern", None), "shape", None) or ""
            out[str(t.name)] = colour.upper() + (f" {pattern}" if pattern else "")
    return out


def _figures(index: MessageIndex) -> dict[str, go.Figure]:
    summarizer = make_summarizer(SummarizerSettings())
    outcome = run_config(index, preset("reference", 2000), summarizer)
    assert outcome.result is not None
    points = [
        sweep_point(v, run_config(index, preset("truncation", v), summarizer), recall=0.5)
        for v in sweep_values(200, 6000, 6)
    ]
    cannot = run_config(index, preset("truncation", 100), summarizer)
    return {
        "decision map": figures.decision_map(outcome.result),
        "event timeline": figures.event_timeline(
            timeline_events(outcome.result), target_tokens=2000
        ),
        "tokens per group": figures.tokens_per_group(index),
        "cumulative": figures.cumulative_tokens(index, trigger_tokens=3000, target_tokens=2000),
        "composition": figures.composition(index),
        "sweep": figures.sweep_chart(points, "minimum_preserved", target_tokens=2000),
        "compare": figures.compare_chart({"a": outcome, "b": cannot}, {"a": 0.5, "b": 0.2}),
    }


def test_no_two_categories_of_a_figure_share_a_colour(index: MessageIndex) -> None:
    for name, fig in _figures(index).items():
        colours = _legend_colours(fig)
        by_colour: dict[str, list[str]] = {}
        for entry, colour in colours.items():
            by_colour.setdefault(colour, []).append(entry)
        shared = {c: e for c, e in by_colour.items() if len(e) > 1}
        assert shared == {}, f"{name}: {shared}"
        # A trigger or target line is not the colour of a category drawn with it.
        lines = {str(s.line.color).upper() for s in fig.layout.shapes if s.line.color}
        assert not lines & set(colours.values()), f"{name}: {lines & set(colours.values())}"


def test_a_legend_never_covers_the_title(index: MessageIndex) -> None:
    for name, fig in _figures(index).items():
        layout = fig.layout
        assert layout.title.yref == "container" and layout.title.yanchor == "top", name
        rows = figures_style.legend_rows(fig)
        if not rows:
            continue
        if layout.legend.yref == "paper":  # under the plots (the composition's donuts)
            assert layout.legend.y < 0 and layout.legend.yanchor == "top", name
            continue
        # The legend hangs from under the title line, inside the top margin it was sized for.
        height = layout.height
        title_bottom = layout.title.pad.t + figures_style._TITLE_PX
        legend_top = (1 - layout.legend.y) * height
        assert layout.legend.yref == "container" and layout.legend.yanchor == "top", name
        assert legend_top >= title_bottom - 1, name
        legend_bottom = legend_top + rows * figures_style._LEGEND_ROW_PX
        assert legend_bottom <= layout.margin.t, f"{name}: {legend_bottom} > {layout.margin.t}"


def test_plain_words_in_sweep_titles(index: MessageIndex) -> None:
    fig = _figures(index)["sweep"]
    assert "minimum_preserved" not in fig.layout.title.text
    assert "newest groups never touched" in fig.layout.title.text


def test_the_composition_gives_each_category_its_own_colour_and_whole_percents(
    index: MessageIndex,
) -> None:
    fig = figures.composition(index)
    colours: dict[str, str] = {}
    for pie in fig.data:
        for label, colour in zip(pie.labels, pie.marker.colors, strict=True):
            assert colours.setdefault(label, colour) == colour  # one label, one colour
        assert pie.texttemplate == "%{text}"
        assert all(re.fullmatch(r"(\d{1,3}%)?", t) for t in pie.text), pie.text
    assert len(set(colours.values())) == len(colours), colours  # no colour for two labels


def test_the_composition_legend_is_clear_of_the_titles_and_developer_has_its_colour() -> None:
    # A Codex log has developer and system messages: they had one colour, and the shared
    # legend (roles and kinds) wrapped over the donuts' titles (review 6, R23).
    wire = [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "Use the tools."},
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": "Here they are: a.py, b.py."},
    ]
    fig = figures.composition(MessageIndex.build(from_caller(wire).messages, CharEstimator()))
    role_pie = fig.data[0]
    colours = dict(zip(role_pie.labels, role_pie.marker.colors, strict=True))
    assert colours["developer"] != colours["system"]
    assert fig.layout.legend.yref == "paper" and fig.layout.legend.y < 0
    assert fig.layout.legend.yanchor == "top"  # under the donuts, never over a title


def test_the_completed_event_carries_the_runs_group_totals(index: MessageIndex) -> None:
    """The timeline's "completed" row counts the groups the run changed, as the verdict
    does (it read "groups 0" under the pipeline's total)."""
    summarizer = make_summarizer(SummarizerSettings())
    result = run_config(index, preset("reference", 1500), summarizer).result
    assert result is not None and result.status == "compacted"
    completed = figures.timeline_events(result)[-1]
    counts = group_counts(result)
    assert completed.kind == "completed"
    assert completed.groups_changed == sum(
        n for k, n in counts.items() if k not in ("kept", "inserted")
    )
    assert completed.inserted == counts["inserted"]


def test_the_after_bar_takes_the_verdicts_colour_never_green_by_itself() -> None:
    # Review 6: the Overview's "after" bar was green under an amber verdict.
    def after(**kw: str) -> str:
        return str(figures.budget_bar(8000, 3000, 4000, 4000, **kw).data[0].marker.color[0])

    assert after(level="costs") == LEVEL_COLORS["costs"]
    assert after(level="safe") == LEVEL_COLORS["safe"]
    assert after() != LEVEL_COLORS["safe"]
    assert str(figures.budget_bar(8000, 5000, 4000).data[0].marker.color[0]) == "#E4572E"
