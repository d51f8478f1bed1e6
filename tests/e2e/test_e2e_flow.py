"""The inspector end to end in Chromium: upload, tune, diff, cannot-fit, export.

Every expected number is computed here with the compactlens engine from the same
sample file, never copied from the app.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from e2e_support import SAMPLES, StreamlitApp, number

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    MessageIndex,
    apply_compaction,
    load_transcript,
    strategy_from_config,
)

pytestmark = pytest.mark.e2e

SUPPORT = SAMPLES / "support_long.json"
CANNOT_FIT = SAMPLES / "cannot_fit_16k.json"


def estimate_index(path: Path) -> MessageIndex:
    return MessageIndex.build(load_transcript(path).messages, CharEstimator())


def upload_support(app: StreamlitApp) -> MessageIndex:
    app.open("load")
    app.upload(SUPPORT)
    loaded = app.main().locator('[data-testid="stExpander"]').filter(has_text="Loaded in this")
    assert re.search(rf"{re.escape(SUPPORT.name)}\s*\(uploaded\)\s*·\s*active", loaded.inner_text())
    assert app.selected("sidebar_source") == SUPPORT.name
    return estimate_index(SUPPORT)


def test_upload_tune_diff_debug_and_export(app: StreamlitApp, tmp_path: Path) -> None:
    # Upload: the first screen shows the engine's totals.
    ix = upload_support(app)
    assert number(app.metric("Messages")) == ix.total_messages
    assert number(app.metric("Groups")) == ix.total_groups
    assert number(app.metric("Turns")) == ix.total_turns
    assert number(app.metric("Tokens (estimate)")) == ix.total_tokens

    app.nav("Strategy lab")
    app.apply_preset("Truncation only", 30000)
    assert "Truncation" in app.main().inner_text()

    first = app.status_text()
    assert "compacted" in first
    assert number(app.metric("Tokens before")) == ix.total_tokens
    after_30k = number(app.metric("Tokens after"))
    assert after_30k <= 30000 < ix.total_tokens
    map_30k = app.chart_traces("lab_decision_map")
    assert map_30k, "the decision map drew no trace"

    # A trigger above the whole history: nothing to do.
    app.set_number("sb_stage0_trigger_n_tokens", ix.total_tokens + 1000)
    assert "unchanged" in app.status_text()
    assert number(app.metric("Tokens after")) == ix.total_tokens

    # A lower trigger: more is dropped, and the chart shows it.
    app.set_number("sb_stage0_trigger_n_tokens", 20000)
    assert "compacted" in app.status_text()
    after_20k = number(app.metric("Tokens after"))
    assert after_20k <= 20000 < after_30k
    map_20k = app.chart_traces("lab_decision_map")
    assert map_20k != map_30k, "the decision map did not change with the trigger"
    messages_after = number(app.metric("Messages after"))

    # The diff shows the same run.
    app.nav("Diff")
    assert number(app.metric("Tokens after")) == after_20k
    excluded = number(app.metric("Groups dropped"))
    assert excluded > 0

    # The cannot-fit debugger says this one fits.
    app.nav("Cannot-fit debugger")
    assert "fits" in app.main().locator('[data-testid="stAlert"]').first.inner_text().lower()
    assert number(app.metric("Tokens after")) == after_20k

    # Export: the compacted transcript and the configuration that reproduces it.
    app.nav("Export")
    transcript = app.download("export_transcript", tmp_path)
    config = json.loads(app.download("export_config", tmp_path).read_text())
    doc = json.loads(transcript.read_text())
    exported = doc["messages"] if isinstance(doc, dict) else doc
    assert len(exported) == messages_after

    original = load_transcript(SUPPORT).messages
    strategy = strategy_from_config(config["strategy"], summarizer=ExtractiveSummarizer())
    again = apply_compaction(original, strategy, CharEstimator())
    assert again.status == "compacted"
    assert again.tokens_after == after_20k
    assert len(exported) == again.messages_after
    assert [m.get("content") for m in exported] == [m.wire.get("content") for m in again.projection]
    assert sum(1 for d in again.decisions if d.action == "excluded") == excluded
    assert not app.page_errors, app.page_errors


def test_cannot_fit_debugger_explains_and_applies_a_fix(app: StreamlitApp) -> None:
    ix = estimate_index(CANNOT_FIT)
    app.open("load")
    app.upload(CANNOT_FIT)
    app.nav("Strategy lab")
    app.apply_preset("Truncation only", 16000)
    assert "cannot-fit" in app.status_text()
    assert number(app.metric("Tokens before")) == ix.total_tokens

    app.nav("Cannot-fit debugger")
    alert = app.main().locator('[data-testid="stAlert"]').first.inner_text()
    assert "cannot-fit" in alert
    tokens_after = number(app.metric("Tokens after"))
    assert tokens_after > 16000
    assert number(app.metric("Over the target")) == tokens_after - 16000
    # The target the one-click larger target sets (its trigger may move with it).
    smallest = number(app.metric("Target that fits"))
    assert smallest > 16000
    assert app.chart_traces("cf_waterfall"), "the budget waterfall drew no trace"

    # The top fix reads as the verdict of the run it gives, and applies to exactly that.
    top = app.keyed("cf_fix_0")
    top.wait_for()
    card = str(top.inner_text())
    assert "Fits" in card and "fact recall" in card, card
    assert "destructive" not in card
    promised = number(card.split(" tokens (target")[0].split()[-1])
    app.click("cf_apply_0")
    # The first alert is the verdict bar ("Fits and safe" or "Fits, with costs").
    alert = str(app.main().locator('[data-testid="stAlert"]').first.inner_text()).lower()
    assert "fits" in alert or "target was met" in alert, alert
    after = number(app.metric("Tokens after"))
    assert after <= number(app.metric("Target")) and after == promised

    app.nav("Strategy lab")
    assert "compacted" in app.status_text()
    assert app.metric("Fact recall").endswith("%")
