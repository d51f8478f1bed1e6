"""Issue 10, item 5 in Chromium: one flow per visible change.

* a compacted run whose first stage missed its own target is a neutral note on the
  cannot-fit debugger, not a red error box;
* the budget follows the transcript: an upload gets half its tokens, and the user's
  choice for the first transcript comes back when it is picked again;
* the event timeline reads in order (a pipeline's total after its stages);
* numbers carry thousands separators (the Overview slider, the configuration line);
* the sweep names its parameter in words and shows fact recall beside tokens, and the
  comparison shows each configuration's fact recall.

Every expected number is computed here with the compactlens library from the same
sample file, never copied from the app.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from e2e_support import SAMPLES, StreamlitApp, number

from compactlens import (
    CharEstimator,
    CompactionResult,
    ExtractiveSummarizer,
    MessageIndex,
    analyze,
    load_transcript,
    run_strategy,
    strategy_from_config,
)
from compactlens_inspector.lab.config import nice_budget, preset
from compactlens_inspector.style.numbers import share
from compactlens_inspector.style.wording import stage_words

pytestmark = pytest.mark.e2e

CODING = SAMPLES / "coding_agent.json"
SUPPORT = SAMPLES / "support_long.json"


def estimate_index(path: Path) -> MessageIndex:
    return MessageIndex.build(load_transcript(path).messages, CharEstimator())


def run_preset(path: Path, name: str, budget: int) -> tuple[MessageIndex, CompactionResult]:
    ix = estimate_index(path)
    strategy = strategy_from_config(
        preset(name, budget).strategy_config(), summarizer=ExtractiveSummarizer()
    )
    return ix, run_strategy(ix, strategy)


def alerts(app: StreamlitApp, kind: str) -> Any:
    """The main area's alerts of ``kind`` (Error, Warning, Info, Success)."""
    return app.main().locator(f'[data-testid="stAlertContent{kind}"]')


def test_a_stage_that_missed_its_target_in_a_run_that_fits_is_a_neutral_note(
    app: StreamlitApp,
) -> None:
    budget = nice_budget(estimate_index(CODING).total_tokens)
    _, r = run_preset(CODING, "reference", budget)
    missed = [e.strategy for e in r.events if e.event == "target-missed"]
    assert r.status == "compacted" and missed  # the case under test
    app.open("cannot-fit?sample=coding_agent")
    assert alerts(app, "Error").count() == 0, alerts(app, "Error").first.inner_text()
    note = alerts(app, "Info").filter(has_text="The target was met")
    assert note.count() == 1
    text = note.first.inner_text()
    assert f"{r.tokens_before:,} → {r.tokens_after:,} tokens" in text
    assert f"{stage_words(missed[0])} missed its own target" in text  # the stage's label
    assert number(app.metric("Tokens after")) == r.tokens_after


def test_the_budget_follows_the_transcript_and_the_users_choice_comes_back(
    app: StreamlitApp,
) -> None:
    coding = estimate_index(CODING)
    support = estimate_index(SUPPORT)
    app.open("?sample=coding_agent")
    thumb = app.keyed("landing_budget").get_by_test_id("stSliderThumbValue").inner_text()
    assert thumb.strip() == f"{nice_budget(coding.total_tokens):,}"  # thousands separators

    app.nav("Strategy lab")
    app.apply_preset("Truncation only", 3000)
    assert number(app.metric("Target")) == 3000
    assert number(app.metric("Tokens before")) == coding.total_tokens

    app.nav("Load")
    app.upload(SUPPORT)
    app.nav("Strategy lab")
    # The upload gets its own budget (half its tokens), the same preset sized to it.
    own = nice_budget(support.total_tokens)
    _, expected = run_preset(SUPPORT, "truncation", own)
    assert number(app.metric("Tokens before")) == support.total_tokens
    assert number(app.metric("Target")) == own
    assert "compacted" in app.status_text()
    assert number(app.metric("Tokens after")) == expected.tokens_after
    line = (
        app.main().locator('[data-testid="stMarkdownContainer"]').filter(has_text="Configuration:")
    )
    assert f"more than {own:,} tokens" in line.first.inner_text()

    # Back to the first transcript: the user's 3,000 comes back.
    app.choose("sidebar_source", CODING.name)
    assert number(app.metric("Tokens before")) == coding.total_tokens
    assert number(app.metric("Target")) == 3000
    assert app.keyed("sb_budget").locator("input").input_value() == "3000"


def test_the_event_timeline_plots_the_pipeline_total_after_its_stages(app: StreamlitApp) -> None:
    budget = nice_budget(estimate_index(CODING).total_tokens)
    _, r = run_preset(CODING, "reference", budget)
    stages = [e for e in r.events if e.depth == 1]
    (pipeline,) = [e for e in r.events if e.depth == 0]
    app.open("timeline?sample=coding_agent")
    traces = app.chart_traces("timeline_chart")
    (line,) = [t for t in traces if t["name"] == "tokens after"]
    expected = [r.tokens_before, *(e.tokens_after for e in stages), pipeline.tokens_after]
    assert line["y"] == [*expected, r.tokens_after]
    assert line["y"] == sorted(line["y"], reverse=True)  # never goes back up
    assert re.search(r"Pipeline total: applied$", line["x"][-2])
    totals = [t for t in traces if t["name"].endswith("(pipeline total)")]
    assert [t["points"] for t in totals] == [1]


def test_the_sweep_names_parameters_in_words_and_shows_fact_recall(app: StreamlitApp) -> None:
    app.open("sweep?sample=coding_agent&preset=truncation&budget=2000")
    app.choose("sweep_param", "1. Truncation: newest groups never dropped")
    plot = app.keyed("sweep_chart").locator(".js-plotly-plot")
    plot.wait_for()
    titles = plot.evaluate(
        """(el) => Object.keys(el.layout).filter((k) => k.startsWith('xaxis'))
            .map((k) => (el.layout[k].title || {}).text || '')"""
    )
    assert "1. Truncation: newest groups never dropped" in titles
    assert not any("minimum_preserved" in t for t in titles)
    traces = app.chart_traces("sweep_chart")
    (recall,) = [t for t in traces if t["name"] == "fact recall"]
    assert recall["points"] >= 2 and all(0 <= y <= 100 for y in recall["y"])

    app.choose_segment("sweep_mode", "Compare configurations")
    shown = [
        m.locator('[data-testid="stMetricValue"]').inner_text().strip()
        for m in app.main()
        .locator('[data-testid="stMetric"]')
        .filter(has=app.page.get_by_text("Fact recall", exact=True))
        .all()
    ]
    messages = load_transcript(CODING).messages
    expected = []
    for name in ("truncation", "truncation", "sliding_window"):  # current, then the presets
        _, result = run_preset(CODING, name, 2000)
        expected.append(share(analyze(messages, result).facts.recall))
    assert shown == expected
