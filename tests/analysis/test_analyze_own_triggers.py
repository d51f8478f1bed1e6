"""analyze(original, result) without triggers= reads the run's own triggers (review 6:
a run that fires again on the next turn was carded green "next trigger not within 1,000
turns"); a result whose triggers are not known is reported as not checked, never safe."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from compactlens import (
    CharEstimator,
    MessageIndex,
    load_transcript,
    run_strategy,
    strategy_from_config,
)
from compactlens.analysis import analyze, verdict
from compactlens.engine.triggers import tokens_exceed

SAMPLE = Path(__file__).resolve().parents[2] / "sample_transcripts" / "coding_agent.json"
#: Trigger = target: the compacted history sits just under the trigger.
CONFIG = {
    "type": "tool_result_collapse",
    "trigger": {"op": "exceed", "metric": "tokens", "n": 7000},
    "target": {"op": "at_most", "metric": "tokens", "n": 7000},
    "keep_last_tool_call_groups": 1,
}


@pytest.fixture(scope="module")
def run() -> tuple[object, object, object]:
    transcript = load_transcript(SAMPLE)
    strategy = strategy_from_config(CONFIG)
    result = run_strategy(MessageIndex.build(transcript.messages, CharEstimator()), strategy)
    return transcript, strategy, result


def test_an_engine_result_carries_its_strategys_triggers(run: tuple) -> None:
    _, _, result = run
    assert result.triggers == (tokens_exceed(7000),)


def test_analyze_without_triggers_checks_the_runs_own(run: tuple) -> None:
    transcript, strategy, result = run
    own = analyze(transcript, result)
    given = analyze(transcript, result, triggers=strategy)
    assert own.retrigger.triggers == given.retrigger.triggers != ()
    assert own.retrigger.turns_until_trigger == given.retrigger.turns_until_trigger == 1
    judged = verdict(result, own)
    assert judged.level == verdict(result, given).level == "costs"
    assert "next-compaction" in [r.code for r in judged.costs]
    card = own._repr_html_()
    assert "not within" not in card and "in 1 turn" in card


def test_unknown_triggers_are_not_checked_and_never_safe(run: tuple) -> None:
    transcript, _, result = run
    unknown = replace(result, triggers=None)
    report = analyze(transcript, unknown)
    assert report.retrigger.checked is False
    judged = verdict(unknown, report)
    assert judged.level != "safe"
    assert "no-trigger" in [r.code for r in judged.costs]
    assert "not checked (no trigger given)" in report._repr_html_()
    assert "not within" not in report._repr_html_()
