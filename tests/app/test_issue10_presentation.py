"""Issue 10, item 5 (presentation): a stage that missed its own target in a run that fits
is a neutral note, the event timeline reads in order, numbers carry thousands
separators, and parameter names read as words."""

from __future__ import annotations

import itertools
import json
import re

from apptest_helpers import coding_agent, go, no_exceptions, plain, texts
from hypothesis import given
from hypothesis import strategies as hs

import compactlens.viz as figures
from compactlens import CharEstimator, MessageIndex
from compactlens.analysis.verdict import LEVEL_COLORS
from compactlens.formats import from_caller
from compactlens.viz import timeline_events
from compactlens_inspector.lab.config import (
    LabConfig,
    SummarizerSettings,
    default_stage,
    encode_config,
    preset,
    sweepable_parameters,
)
from compactlens_inspector.lab.runs import budget_parts, make_summarizer, run_config
from compactlens_inspector.style.numbers import INT_FORMAT, group_digits, num, share
from compactlens_inspector.style.wording import event_words, param_words
from compactlens_inspector.views.analysis import AnalysisSettings, judge, run_analysis
from compactlens_inspector.views.run import sweep_point


def _index() -> MessageIndex:
    return MessageIndex.build(from_caller(coding_agent()).messages, CharEstimator())


def _collapse_then_truncate(budget: int) -> LabConfig:
    """A pipeline whose first stage cannot reach its target alone on the coding agent."""
    return LabConfig(
        stages=(
            default_stage("tool_result_collapse", budget),
            {**default_stage("truncation", budget), "minimum_preserved": 2},
        )
    )


# -- the neutral note ----------------------------------------------------------------------------


def test_a_stage_that_missed_its_target_in_a_run_that_fits_is_a_neutral_note(app) -> None:
    config = _collapse_then_truncate(1500)
    outcome = run_config(_index(), config, make_summarizer(SummarizerSettings()))
    r = outcome.result
    assert r is not None and r.status == "compacted"
    assert any(e.event == "target-missed" for e in r.events)  # the case under test
    at = go(app(cfg=encode_config(config), sample="coding_agent").run(), "cannot_fit")
    no_exceptions(at)
    assert not at.error, [e.value for e in at.error]
    notes = [plain(str(i.value)) for i in at.info if "The target was met" in str(i.value)]
    assert len(notes) == 1, texts(at)
    assert "Tool-result collapse missed its own target" in notes[0]
    assert f"{num(r.tokens_before)} → {num(r.tokens_after)} tokens" in notes[0]


def test_a_run_that_cannot_fit_is_still_an_error_box(app) -> None:
    config = LabConfig(stages=({**default_stage("truncation", 1500), "minimum_preserved": 12},))
    at = go(app(cfg=encode_config(config), sample="coding_agent").run(), "cannot_fit")
    no_exceptions(at)
    assert len(at.error) == 1 and "cannot-fit" in plain(at.error[0].value)
    assert not [i for i in at.info if "The target was met" in str(i.value)]


# -- the event timeline --------------------------------------------------------------------------


def test_a_pipeline_total_comes_after_its_stages_so_tokens_read_in_order() -> None:
    for config in (preset("reference", 1500), _collapse_then_truncate(1500)):
        r = run_config(_index(), config, make_summarizer(SummarizerSettings())).result
        assert r is not None
        events = timeline_events(r)
        assert [e.seq for e in events] == list(range(len(events)))
        totals = [e for e in events if e.total]
        assert [e.strategy for e in totals] == ["pipeline"]
        total = totals[0]
        stages = [e for e in events if e.depth == 1]
        assert stages and max(e.seq for e in stages) < total.seq  # stages first
        assert total.label == f"Pipeline total: {event_words(total.kind)}"
        # Each stage starts where the previous one ended; the total spans them all.
        for a, b in itertools.pairwise(stages):
            assert b.tokens_before == a.tokens_after
        assert total.tokens_before == stages[0].tokens_before == r.tokens_before
        assert total.tokens_after == stages[-1].tokens_after == r.tokens_after
        afters = [e.tokens_after for e in events]
        assert afters == sorted(afters, reverse=True), afters  # never back up


# -- numbers -------------------------------------------------------------------------------------


@given(hs.integers(min_value=0, max_value=10**12))
def test_num_and_group_digits_agree_and_read_back(n: int) -> None:
    assert num(n).replace(",", "") == str(n)
    assert group_digits(f"tokens > {n}") == f"tokens > {num(n)}"
    assert group_digits(f"{n} of 3 facts were lost") == f"{num(n)} of 3 facts were lost"


def test_group_digits_leaves_ids_decimals_and_grouped_numbers_alone() -> None:
    for text in ("call_12345", "abc12345", "12345abc", "0.12345", "1,234", "v1.23456"):
        assert group_digits(text) == text
    assert group_digits("tokens > 60000.") == "tokens > 60,000."
    assert re.fullmatch(r"\d{1,3}(,\d{3})*", num(1234567.4))


# -- tables carry separators ---------------------------------------------------------------------


def test_integer_columns_get_a_grouped_format_and_others_do_not() -> None:
    from compactlens_inspector.components.tables import int_columns

    rows = [
        {"tokens": 8667, "status": "ok", "fired": True, "share": 0.5, "maybe": None},
        {"tokens": None, "status": "x", "fired": False, "share": 1.0, "maybe": 3},
    ]
    assert int_columns(rows) == ["tokens", "maybe"]


def _formats(table) -> dict[str, str]:
    """Column label -> the number format the table sends to the browser."""
    columns = json.loads(table.proto.columns)
    return {k: v.get("type_config", {}).get("format", "") for k, v in columns.items()}


def test_page_tables_format_their_integer_columns_with_separators(app) -> None:
    config = encode_config(preset("reference", 1500))
    at = go(app(cfg=config, sample="coding_agent").run(), "timeline")
    no_exceptions(at)
    formats = _formats(at.dataframe[0])
    for column in ("tokens before", "tokens after", "groups changed", "inserted"):
        assert formats[column] == INT_FORMAT, formats
    assert at.dataframe[0].value["tokens before"].iloc[0] == _index().total_tokens  # numbers
    at = go(at, "lab")
    formats = _formats(at.dataframe[0])
    assert formats["groups changed"] == formats["inserted"] == INT_FORMAT
    assert "→" in at.dataframe[0].value["tokens"].iloc[0]  # before → after, both grouped


# -- parameter names as words --------------------------------------------------------------------

SNAKE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")


def test_sweepable_parameters_read_as_words() -> None:
    for config in (
        preset("reference", 2000),
        preset("compact", 2000),
        preset("context_window", 8000),
        preset("tool_collapse", 2000),
    ):
        labels = [label for _path, label in sweepable_parameters(config)]
        assert labels
        for label in labels:
            assert not SNAKE.search(label), label
    labels = dict(sweepable_parameters(preset("tool_collapse", 2000)))
    assert labels["stages.0.keep_last_tool_call_groups"].endswith("newest tool calls kept verbatim")
    assert param_words("minimum_preserved", "sliding_window") == "newest turns never dropped"


def test_the_waterfall_names_parts_in_words() -> None:
    ix = _index()
    config = LabConfig(stages=({**default_stage("truncation", 1500), "minimum_preserved": 12},))
    outcome = run_config(ix, config, make_summarizer(SummarizerSettings()))
    parts = budget_parts(outcome, ix)
    assert "newest groups never touched" in [p.label for p in parts]  # the vocabulary's words
    fig = figures.budget_waterfall(parts, 1500)
    xs = list(fig.data[0].x)
    assert "newest groups never touched" in xs and "minimum_preserved" not in xs
    hover = fig.data[0].hovertext[xs.index("newest groups never touched")]
    assert "minimum_preserved" not in hover


# -- fact recall in sweep and compare ------------------------------------------------------------


def test_the_sweep_shows_fact_recall_beside_tokens(app) -> None:
    at = go(
        app(cfg=encode_config(preset("truncation", 2000)), sample="coding_agent").run(), "sweep"
    )
    at.number_input(key="sweep_from").set_value(500)
    at.number_input(key="sweep_to").set_value(5000)
    at.number_input(key="sweep_steps").set_value(4).run()
    no_exceptions(at)
    table = at.dataframe[0].value
    assert list(table.columns)[:4] == ["value", "status", "tokens after", "fact recall"]
    summarizer = make_summarizer(SummarizerSettings())
    for value, recall in zip(table["value"], table["fact recall"], strict=True):
        outcome = run_config(_index(), preset("truncation", int(value)), summarizer)
        report = run_analysis(_index(), outcome, AnalysisSettings())
        assert report is not None
        assert recall == round(report.facts.recall * 100)  # whole percent, no false precision
    # Less room drops more: recall does not rise as the budget shrinks.
    recalls = list(table["fact recall"])
    assert recalls == sorted(recalls) and recalls[0] < 100
    assert _formats(at.dataframe[0])["fact recall"] == "%d%%"


def test_compare_shows_fact_recall_per_configuration(app) -> None:
    at = go(
        app(cfg=encode_config(preset("truncation", 2000)), sample="coding_agent").run(), "sweep"
    )
    at.segmented_control(key="sweep_mode").set_value("Compare configurations").run()
    at.multiselect(key="compare_configs").set_value(["current", "tool_collapse"])
    at.number_input(key="compare_budget").set_value(2000).run()
    no_exceptions(at)
    shown = [m.value for m in at.metric if m.label == "Fact recall"]
    summarizer = make_summarizer(SummarizerSettings())
    expected = []
    for config in (preset("truncation", 2000), preset("tool_collapse", 2000)):
        report = run_analysis(
            _index(), run_config(_index(), config, summarizer), AnalysisSettings()
        )
        assert report is not None
        expected.append(share(report.facts.recall))
    assert shown == expected


def test_the_sweep_and_compare_charts_draw_recall_when_measured() -> None:
    summarizer = make_summarizer(SummarizerSettings())
    outcomes = [run_config(_index(), preset("truncation", v), summarizer) for v in (800, 3000)]
    recalls = [0.25, 1.0]
    points = [sweep_point(v, o, r) for v, o, r in zip((800, 3000), outcomes, recalls, strict=True)]
    fig = figures.sweep_chart(points, "newest groups never dropped", target_tokens=2000)
    (line,) = [t for t in fig.data if t.name == "fact recall"]
    assert list(line.y) == [25.0, 100.0]
    unmeasured = figures.sweep_chart([sweep_point(800, outcomes[0])], "x")
    assert not [t for t in unmeasured.data if t.name == "fact recall"]
    compare = figures.compare_chart({"a": outcomes[0], "b": outcomes[1]}, {"a": 0.25, "b": None})
    (marks,) = [t for t in compare.data if t.name == "fact recall"]
    assert list(marks.x) == ["a"] and list(marks.y) == [25.0] and marks.yaxis == "y2"
    assert list(marks.text) == ["recall 25%"]
    # The recall sits in a slot of its own beside the tokens, not on the "after" label.
    groups = [t.offsetgroup for t in compare.data]
    assert len(set(groups)) == len(groups) == 3


def test_the_compare_chart_colours_and_labels_each_run_by_its_verdict() -> None:
    """A run that fits with costs is an amber "after" bar labelled "Fits, with costs", as
    its card reads (the review saw green "compacted" bars over amber cards)."""
    summarizer = make_summarizer(SummarizerSettings())
    outcome = run_config(_index(), preset("truncation", 800), summarizer)
    assert outcome.result is not None and outcome.status == "compacted"
    v = judge(outcome, run_analysis(_index(), outcome, AnalysisSettings()))
    assert v is not None and v.level == "costs", v.reasons
    fig = figures.compare_chart({"a": outcome}, verdicts={"a": v})
    after = fig.data[1]
    assert list(after.marker.color) == [LEVEL_COLORS["costs"]]
    assert list(after.text) == [f"{outcome.result.tokens_after:,}<br>Fits, with costs"]
    (recall,) = [t for t in fig.data if t.name == "fact recall"]
    assert list(recall.y) == [round(v.numbers.fact_recall * 100, 1)]


def test_every_figure_groups_its_numbers_in_hover_and_ticks() -> None:
    """Hover templates format numbers with plotly's ``:,`` (never app code in a template),
    and numeric axes carry a grouped tick format."""
    ix = _index()
    summarizer = make_summarizer(SummarizerSettings())
    outcome = run_config(ix, preset("reference", 1500), summarizer)
    r = outcome.result
    assert r is not None
    points = [
        sweep_point(v, run_config(ix, preset("truncation", v), summarizer), 0.5)
        for v in (800, 3000)
    ]
    built = [
        figures.tokens_per_group(ix),
        figures.cumulative_tokens(ix, trigger_tokens=3000, target_tokens=2000),
        figures.decision_map(r),
        figures.budget_waterfall(budget_parts(outcome, ix), 1500),
        figures.event_timeline(timeline_events(r), target_tokens=1500),
        figures.sweep_chart(points, "newest groups never dropped"),
        figures.compare_chart({"a": outcome}, {"a": 0.5}),
        figures.composition(ix),
    ]
    templates = [t.hovertemplate for fig in built for t in fig.data if t.hovertemplate]
    assert templates
    for template in templates:
        assert "num(" not in template, template
        for field in re.findall(r"%\{(y|value|customdata\[0\])(:[^}]*)?\}", template):
            if field[0] != "y" or "fact recall" not in template:
                assert field[1] == ":,", template
    for fig in built[:6]:
        assert fig.layout.yaxis.tickformat == "," or fig.layout.yaxis.ticksuffix
