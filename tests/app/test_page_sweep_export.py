"""Sweep & compare, and Export (file contents checked, not just buttons)."""

from __future__ import annotations

import json

from apptest_helpers import go, no_exceptions, plain, texts

from compactlens_inspector.lab.config import LabConfig, encode_config, preset


def test_sweep_runs_one_configuration_per_value(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "sweep")
    no_exceptions(at)
    assert at.selectbox(key="sweep_param").value == "stages.0.trigger.n"
    at.number_input(key="sweep_from").set_value(500)
    at.number_input(key="sweep_to").set_value(5000)
    at.number_input(key="sweep_steps").set_value(4).run()
    no_exceptions(at)
    table = at.dataframe[0].value
    assert list(table["value"]) == [500, 2000, 3500, 5000]
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
    statuses = [m.value for m in at.metric if m.label == "Status"]
    assert len(statuses) == 2
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
