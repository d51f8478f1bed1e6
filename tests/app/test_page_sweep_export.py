"""Sweep & compare, and Export (file contents checked, not just buttons)."""

from __future__ import annotations

import itertools
import json

from apptest_helpers import go, metric_int, no_exceptions, plain, texts
from streamlit.testing.v1 import AppTest

from compactlens_inspector.lab.config import LabConfig, encode_config, preset
from compactlens_inspector.views.run import sweep_plan, sweep_values


def bar_headline(at: AppTest) -> str:
    """The headline of the page's verdict bar."""
    (text,) = [
        str(e.value)
        for kind in ("success", "warning", "error")
        for e in getattr(at, kind)
        if "**Next step:**" in str(e.value)
    ]
    return text.split("**")[1]


def test_sweep_runs_one_configuration_per_value(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "sweep")
    no_exceptions(at)
    assert at.selectbox(key="sweep_param").value == "stages.0.trigger.n"
    at.number_input(key="sweep_from").set_value(500)
    at.number_input(key="sweep_to").set_value(5000)
    at.number_input(key="sweep_steps").set_value(4).run()
    no_exceptions(at)
    table = at.dataframe[0].value
    assert list(table["value"]) == [500, 2000, 4000, 5000]
    after = list(table["tokens after"])
    status = list(table["status"])
    # A larger budget never keeps fewer tokens, and every compacted run fits its budget.
    assert after == sorted(after)
    for value, tokens, s in zip(table["value"], after, status, strict=True):
        if s == "compacted":
            assert tokens <= value


def test_compare_runs_configurations_side_by_side(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "sweep")
    at.segmented_control(key="sweep_mode").set_value("Compare configurations").run()
    at.multiselect(key="compare_configs").set_value(["current", "tool_collapse"])
    at.number_input(key="compare_budget").set_value(2000).run()
    no_exceptions(at)
    headlines = [m.value for m in at.markdown if m.value.startswith(":") and "-badge[" in m.value]
    assert len(headlines) == 2, headlines
    afters = [int(m.value.replace(",", "")) for m in at.metric if m.label == "Tokens after"]
    assert afters[0] <= 2000  # truncation always fits this budget
    assert afters[0] != afters[1]


def test_export_offers_every_file_and_their_contents_are_right(app) -> None:
    config = preset("truncation", 2000)
    at = go(app(cfg=encode_config(config), sample="coding_agent").run(), "export")
    no_exceptions(at)
    keys = {b.key for b in at.get("download_button")}
    assert keys == {
        "export_transcript",
        "export_events",
        "export_config",
        "export_snippet",
        "export_analysis",
        "export_report",
    }
    config_code, events_code, snippet_code, transcript_code, analysis_code = (
        c.value for c in at.code
    )
    exported = json.loads(config_code)
    assert LabConfig.from_dict(exported["inspector"]) == LabConfig.from_dict(config.to_dict())
    assert exported["strategy"] == config.strategy_config()
    assert exported["summarizer"] == {"kind": "extractive"}
    assert "strategy_from_config(CONFIG" in snippet_code
    assert transcript_code.lstrip().startswith("{")
    events = [json.loads(line) for line in events_code.splitlines()]
    assert events[0]["type"] == "started" and events[-1]["type"] == "completed"
    assert events[-1]["tokens_after"] <= 2000
    assert "compacted" in plain(texts(at))
    # The analysis JSON is the analysis of this very run.
    analysis = json.loads(analysis_code)
    assert analysis["settings"]["model"] == "gpt-4o"
    assert analysis["analysis"]["tokens_after"] == events[-1]["tokens_after"]
    assert analysis["analysis"]["status"] == "compacted"
    facts = analysis["analysis"]["facts"]
    assert facts["lost_total"] == facts["extracted"] - facts["survived"]
    assert analysis["analysis"]["retrigger"]["triggers"] == ["tokens > 2000"]


def test_export_preview_of_the_compacted_transcript_is_in_the_original_envelope(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "export")
    start = at.code[3].value
    assert start.startswith("{") and '"title": "Coding agent"' in start


def test_export_of_a_configuration_error_offers_nothing(app) -> None:
    broken = LabConfig(stages=({"type": "sliding_window"},))
    at = go(app(cfg=encode_config(broken)).run(), "export")
    no_exceptions(at)
    assert "Configuration error" in plain(texts(at))
    assert not list(at.get("download_button"))


def test_sweep_values_are_round_numbers(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "sweep")
    at.number_input(key="sweep_from").set_value(1250)
    at.number_input(key="sweep_to").set_value(10000)
    at.number_input(key="sweep_steps").set_value(12).run()
    no_exceptions(at)
    values = list(at.dataframe[0].value["value"])
    assert values[0] == 1250 and values[-1] == 10000 and len(values) <= 12
    # Between the ends, one round step (1, 2, 2.5 or 5 times a power of ten).
    inner = values[1:-1]
    step = inner[1] - inner[0]
    assert all(b - a == step for a, b in itertools.pairwise(inner))
    assert all(v % step == 0 for v in inner)
    assert str(step).rstrip("0") in {"1", "2", "25", "5"}
    # The caption says how many runs, with separators, and why fewer than asked.
    caption = sweep_plan(values, 12)
    assert caption in [str(c.value) for c in at.caption]
    assert caption.startswith(f"{len(values)} runs: 1,250, ")
    assert f"every {step:,} between them" in caption
    if len(values) < 12:
        assert "fewer than the 12 asked" in caption


def test_the_sweep_caption_explains_an_uneven_first_step() -> None:
    """The review's case: 12 asked from 12,000 to 100,000 gives 10 round values."""
    values = sweep_values(12000, 100000, 12)
    assert values == [12000, *range(20000, 100001, 10000)]
    assert sweep_plan(values, 12) == (
        "10 runs: 12,000, 20,000, 30,000, …, 90,000, 100,000 (the two ends and every "
        "10,000 between them, round values: fewer than the 12 asked)."
    )
    assert sweep_plan([0, 1, 2], 5) == (
        "3 runs: 0, 1, 2 (fewer than the 5 asked: no more whole numbers between the ends)."
    )


def test_a_sweep_run_that_does_not_fit_missed_its_own_target(app) -> None:
    """Sweeping a stage's trigger moves that stage's target: the table (and the chart's
    target line) show each run's own target, and a "cannot-fit" run is over it."""
    at = go(app(cfg=encode_config(preset("tool_collapse", 3000))).run(), "sweep")
    at.selectbox(key="sweep_param").set_value("stages.0.trigger.n").run()
    at.number_input(key="sweep_from").set_value(1000)
    at.number_input(key="sweep_to").set_value(8000)
    at.number_input(key="sweep_steps").set_value(8).run()
    no_exceptions(at)
    table = at.dataframe[0].value
    rows = list(zip(table["status"], table["tokens after"], table["target"], strict=True))
    assert any(s == "cannot-fit" for s, _, _ in rows), rows
    for status, after, target in rows:
        if status == "cannot-fit":
            assert after > target, rows
        elif status == "compacted":
            assert after <= target, rows


def test_compare_counts_groups_and_shows_the_verdict_as_the_lab_does(app) -> None:
    at = go(app(cfg=encode_config(preset("tool_collapse", 2000))).run(), "diff")
    kept = metric_int(at, "Groups kept")
    assert metric_int(at, "Groups collapsed") > 0  # so "kept" and "kept or collapsed" differ
    headline = bar_headline(at)
    at = go(at, "sweep")
    at.segmented_control(key="sweep_mode").set_value("Compare configurations").run()
    at.multiselect(key="compare_configs").set_value(["current"]).run()
    no_exceptions(at)
    assert [m.value for m in at.metric if m.label == "Groups kept"] == [f"{kept:,}"]
    assert not [m for m in at.metric if m.label == "Status"]
    assert any(headline in m.value for m in at.markdown), headline
