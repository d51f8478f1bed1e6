"""The exported Python snippet reproduces the app's run; the HTML report is self-contained
and keeps transcript text inert."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from apptest_helpers import XSS_TEXT

from compactlens.analysis import DEFAULT_PRICES
from compactlens_inspector.exports.files import config_json, events_jsonl, report_html
from compactlens_inspector.exports.snippet import config_to_snippet
from compactlens_inspector.lab.config import (
    CompactSettings,
    LabConfig,
    SummarizerSettings,
    default_stage,
    preset,
)
from compactlens_inspector.lab.runs import build_index, make_summarizer, run_config
from compactlens_inspector.serving.loader import parse_transcript
from compactlens_inspector.views.analysis import (
    AnalysisSettings,
    price_rows,
    prices_from_rows,
    run_analysis,
)

CONFIGS = {
    "truncation": preset("truncation", 2000),
    "reference": preset("reference", 1800),
    "summarization": LabConfig(stages=(default_stage("summarization", 2000),)),
    "compact": LabConfig(mode="compact", compact=CompactSettings(1500, 4, 1000)),
}


@pytest.mark.parametrize("tokenizer", ["estimate", "calibrated", "o200k_base"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_snippet_executes_and_gives_the_same_result(
    name: str, tokenizer: str, samples_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = CONFIGS[name]
    path = samples_folder / "coding_agent.json"
    loaded = parse_transcript(path.read_bytes(), path.name)
    outcome = run_config(
        build_index(loaded.messages, tokenizer), config, make_summarizer(SummarizerSettings())
    )
    assert outcome.result is not None
    code = config_to_snippet(config, tokenizer=tokenizer, transcript_path=path.name)
    monkeypatch.chdir(samples_folder)
    namespace: dict[str, object] = {"__name__": "snippet"}
    exec(compile(code, "snippet.py", "exec"), namespace)
    result = namespace["result"]
    if config.mode == "compact":
        assert result.status == outcome.result.status  # type: ignore[attr-defined]
        assert result.tokens.after == outcome.result.tokens_after  # type: ignore[attr-defined]
        if result.status == "compacted":  # type: ignore[attr-defined]
            assert result.summary in outcome.result.projection[1].text  # type: ignore[attr-defined]
        else:
            assert result.reason in (outcome.result.reason or "")  # type: ignore[attr-defined]
    else:
        assert result.status == outcome.result.status  # type: ignore[attr-defined]
        assert result.tokens_after == outcome.result.tokens_after  # type: ignore[attr-defined]
        assert [d.action for d in result.decisions] == [  # type: ignore[attr-defined]
            d.action for d in outcome.result.decisions
        ]


def test_snippet_never_contains_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-NEVER-SHOWN-1234567890")
    settings = SummarizerSettings("openai", "https://user:pw@llm.example/v1", "gpt-x")
    code = config_to_snippet(CONFIGS["reference"], summarizer=settings)
    assert "NEVER-SHOWN" not in code and "user:pw" not in code
    assert 'os.environ.get("OPENAI_API_KEY")' in code
    assert "https://llm.example/v1" in code
    exported = config_json(CONFIGS["reference"], tokenizer="estimate", summarizer=settings)
    assert "NEVER-SHOWN" not in exported and "user:pw" not in exported


def test_the_snippet_docstring_never_breaks_a_word_at_its_hyphen() -> None:
    """The docstring's configuration line wraps at spaces: "Tool-result collapse" stays
    whole (it wrapped as "Tool-" / "result collapse")."""
    code = config_to_snippet(preset("reference", 50000))
    doc = code.split('"""')[1]
    assert all(len(line) <= 88 for line in doc.splitlines())
    assert not any(line.rstrip().endswith("-") for line in doc.splitlines())
    assert "Tool-result collapse" in " ".join(doc.split())


def _report(samples_folder: Path, sample: str, config: LabConfig) -> str:
    path = samples_folder / f"{sample}.json"
    loaded = parse_transcript(path.read_bytes(), path.name)
    index = build_index(loaded.messages, "estimate")
    outcome = run_config(index, config, make_summarizer(SummarizerSettings()))
    return report_html(loaded, index, outcome, summarizer=SummarizerSettings())


def test_report_is_self_contained_and_escapes_transcript_text(samples_folder: Path) -> None:
    html = _report(samples_folder, "hostile", LabConfig(stages=(default_stage("truncation", 5),)))
    # plotly.js is inlined once, no script comes from a network.
    assert html.count("plotly.js v") >= 1 or "Plotly" in html
    assert not re.search(r"<script[^>]+src=", html)
    assert not re.search(r"<link[^>]+href=", html)
    # The transcript's markup is text, never markup.
    assert "<script>alert('pwned')</script>" not in html
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in html
    assert "<img src=x" not in html
    for section in ("Explanation", "Charts", "Events", "Group diff", "Configuration"):
        assert f"<h2>{section}</h2>" in html


def test_report_lists_every_decision_and_the_summary(samples_folder: Path) -> None:
    config = LabConfig(stages=(default_stage("summarization", 2000),))
    html = _report(samples_folder, "coding_agent", config)
    assert "<h2>Summaries</h2>" in html and "[Extractive summary" in html
    assert html.count('class="badge"') >= 10
    assert XSS_TEXT not in html


def test_report_tables_use_plain_labels(samples_folder: Path) -> None:
    """The report is read by people: what is protected, the stages, their events and
    conditions read as the app words them, never as code names or "<=" (review4 #9)."""
    html = _report(samples_folder, "coding_agent", preset("reference", 1500))
    explanation = html.split("<h2>Explanation</h2>", 1)[1].split("</section>", 1)[0]
    events = html.split("<h2>Events</h2>", 1)[1].split("</section>", 1)[0]
    protected = re.findall(r"<tr><td>([^<]*)</td><td>[\d,]+</td>", explanation)
    assert "system messages" in protected and "newest groups never touched" in protected
    cells = re.findall(r"<td>(?:&nbsp;)*([^<]*)</td>", events)
    assert "Tool-result collapse" in cells and "at most 1,500 tokens" in cells, cells
    for text in (*protected, *cells):
        assert "_" not in text and "&lt;=" not in text and "<=" not in text, text
    assert "(s)" not in explanation


def test_the_group_diff_says_dropped_as_every_surface_does(samples_folder: Path) -> None:
    # Review 6: the Group diff labelled the dropped groups "excluded" (and kinds "tool_call").
    html = _report(samples_folder, "coding_agent", preset("truncation", 2000))
    diff = html.split("<h2>Group diff</h2>", 1)[1].split("</section>", 1)[0]
    badges = set(re.findall(r'<span class="badge"[^>]*>([^<]*)</span>', diff))
    assert "dropped" in badges and "excluded" not in badges, badges
    kinds = set(re.findall(r"<tr><td>(?:\d+|new)</td><td>([^<]*)</td>", diff))
    assert "tool call" in kinds and not any("_" in k for k in kinds), kinds
    explanation = html.split("<h2>Explanation</h2>", 1)[1].split("</p>", 1)[0]
    assert "the verdict&#x27;s to say" in explanation  # a met target is not the judgement


def test_events_jsonl_is_one_json_object_a_line(samples_folder: Path) -> None:
    path = samples_folder / "coding_agent.json"
    loaded = parse_transcript(path.read_bytes(), path.name)
    outcome = run_config(
        build_index(loaded.messages, "estimate"),
        CONFIGS["reference"],
        make_summarizer(SummarizerSettings()),
    )
    lines = [json.loads(x) for x in events_jsonl(outcome).splitlines()]
    assert outcome.result is not None
    assert [x["type"] for x in lines] == ["started"] + ["stage"] * len(outcome.result.events) + [
        "completed"
    ]
    assert [x["strategy"] for x in lines[1:-1]] == [e.strategy for e in outcome.result.events]


def test_compacted_transcript_round_trips_in_its_format(samples_folder: Path) -> None:
    path = samples_folder / "coding_agent.json"
    loaded = parse_transcript(path.read_bytes(), path.name)
    outcome = run_config(
        build_index(loaded.messages, "estimate"),
        CONFIGS["truncation"],
        make_summarizer(SummarizerSettings()),
    )
    assert outcome.result is not None
    doc = json.loads(loaded.emit(outcome.result.projection))
    original = json.loads(path.read_text())
    assert doc["title"] == original["title"]
    kept = [m for m in original["messages"] if m in doc["messages"]]
    assert kept == doc["messages"]  # only removals, original objects, original order
    assert len(doc["messages"]) == outcome.result.messages_after
    assert os.path.basename(loaded.name) == "coding_agent.json"


def _analysed(samples_folder: Path, sample: str, config: LabConfig) -> tuple[str, Any]:
    path = samples_folder / f"{sample}.json"
    loaded = parse_transcript(path.read_bytes(), path.name)
    index = build_index(loaded.messages, "estimate")
    outcome = run_config(index, config, make_summarizer(SummarizerSettings()))
    settings = AnalysisSettings(model="claude-sonnet-4")
    report = run_analysis(index, outcome, settings)
    assert report is not None
    html = report_html(
        loaded,
        index,
        outcome,
        summarizer=SummarizerSettings(),
        analysis=report,
        analysis_settings=settings,
    )
    return html, report


def test_report_has_the_analysis_and_keeps_it_inert(samples_folder: Path) -> None:
    config = LabConfig(
        stages=({**default_stage("truncation", 10), "minimum_preserved": 1},),
        guards={"keep_latest_request": False},  # so that the latest request is lost
    )
    html, report = _analysed(samples_folder, "hostile", config)
    assert "<h2>Analysis</h2>" in html
    assert f"{report.facts.recall:.0%}" in html
    assert "does not survive verbatim" in html  # the latest request was dropped
    assert "<h3>Lost facts</h3>" in html and "claude-sonnet-4" in html
    assert "<script>alert('pwned')</script>" not in html
    assert "http://127.0.0.1:9/t.png" in html  # a lost URL fact, as text
    assert not re.search(r"<img[^>]+127\.0\.0\.1", html)
    assert "Cost of the next 10 turns" in html  # the cost chart is embedded


def test_report_without_analysis_has_no_analysis_section(samples_folder: Path) -> None:
    html = _report(samples_folder, "coding_agent", CONFIGS["truncation"])
    assert "<h2>Analysis</h2>" not in html


def test_edited_prices_are_read_back_and_bad_rows_are_reported() -> None:
    rows = price_rows(DEFAULT_PRICES)
    rows[0] = {**rows[0], "cached_input": 9.5}
    rows[1] = {**rows[1], "input": -1}
    rows[2] = {**rows[2], "output": None}
    prices, errors = prices_from_rows(rows)
    table = dict(prices)
    first, second, third = list(DEFAULT_PRICES)[:3]
    assert table[first].cached_input == 9.5 and table[first].input == DEFAULT_PRICES[first].input
    assert second not in table and third not in table
    assert len(errors) == 2 and errors[0].startswith(second) and "input" in errors[0]
    assert len(table) == len(DEFAULT_PRICES) - 2
    settings = AnalysisSettings(first, tuple({**DEFAULT_PRICES, **table}.items()))
    assert settings.edited and settings.chosen.cached_input == 9.5
    assert settings.key() != AnalysisSettings(first).key()
    # Another model's price does not change what the analysis of this model depends on.
    other = AnalysisSettings(second, tuple({**DEFAULT_PRICES, **table}.items()))
    assert other.key() == AnalysisSettings(second).key()
    assert json.loads(settings.key())["prices"]["cached_input"] == 9.5


def test_report_states_the_parameters_bound_not_a_target_that_fits(samples_folder: Path) -> None:
    """An engine run that cannot fit: what its parameters reach is a bound (with the
    trigger a larger target needs, that target may not fit), never "a target of at least
    N tokens fits" (review 4, #12); compact() names its smallest target that fits."""
    stage = {**default_stage("truncation", 1000), "minimum_preserved": 40}
    html = _report(samples_folder, "coding_agent", LabConfig(stages=(stage,)))
    explanation = html.split("<h2>Explanation</h2>", 1)[1].split("</section>", 1)[0]
    assert "Best the current parameters reach (the triggers as they are)" in explanation
    assert "Smallest target that fits" not in explanation
    assert "fits with these parameters" not in explanation
    compact = LabConfig(mode="compact", compact=CompactSettings(600, 4, 600))
    html = _report(samples_folder, "coding_agent", compact)
    explanation = html.split("<h2>Explanation</h2>", 1)[1].split("</section>", 1)[0]
    assert "Smallest target that fits" in explanation
