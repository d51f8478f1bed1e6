"""Dropping the system prompt is a named cost of the verdict (never "Fits and safe"),
checked beside the latest request, and the debugger ranks fixes that keep it first."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    Guards,
    MessageIndex,
    analyze,
    load_transcript,
    run_strategy,
    strategy_from_config,
    verdict,
)
from compactlens.analysis import judge_fixes, search_fixes, strategy_triggers
from compactlens.analysis.fix_verdicts import fix_mark, judge_run, listed_fixes
from compactlens.notebook import debug

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_transcripts"
SWE_LOG = REPO.parent / "shared" / "corpus" / "swe_agent__pwn__warmup.json"


def _sliding(preserve_system: bool) -> dict[str, Any]:
    trigger = {"op": "exceed", "metric": "tokens", "n": 6000}
    return {"type": "sliding_window", "trigger": trigger, "preserve_system": preserve_system}


def _judge(config: dict[str, Any]) -> Any:
    transcript = load_transcript(SAMPLES / "coding_agent.json")
    index = MessageIndex.build(transcript.messages, CharEstimator())
    strategy = strategy_from_config(config)
    result = run_strategy(index, strategy, tokenizer_given=True)
    report = analyze(
        transcript, result, triggers=strategy_triggers(strategy), tokenizer=CharEstimator()
    )
    # The floor is lowered so that recall (68% here) is not a cost: this test is about the
    # system prompt, the only check that may fail.
    return result, report, verdict(result, report, recall_floor=0.5)


def test_a_run_that_drops_the_system_prompt_fits_but_not_safely() -> None:
    # coding_agent at 6,000 tokens: with "system messages kept" on, the sliding window fits
    # and every check passes; off, it fits too, but the agent's instructions are gone.
    _, kept_report, kept = _judge(_sliding(preserve_system=True))
    assert kept.level == "safe" and kept_report.system_lost == 0
    result, report, dropped = _judge(_sliding(preserve_system=False))
    assert result.status == "compacted" and report.system_lost == 1
    assert dropped.level == "costs" and dropped.headline == "Fits, with costs"
    assert [r.code for r in dropped.costs] == ["system-prompt"]
    assert "system prompt is dropped" in dropped.costs[0].text
    assert dropped.next_step.startswith("Keep the system prompt")
    assert report.to_dict()["system_lost"] == 1
    # The check sits beside the latest request's.
    codes = [r.code for r in dropped.reasons]
    assert codes.index("system-prompt") == codes.index("latest-request") + 1


@pytest.mark.skipif(not SWE_LOG.is_file(), reason="the shared corpus (../shared/corpus) is absent")
def test_the_debugger_never_calls_a_fix_that_drops_the_system_prompt_safe() -> None:
    sys.path.insert(0, str(REPO / "app"))
    from compactlens_inspector.lab.presets import preset

    transcript = load_transcript(SWE_LOG)
    index = MessageIndex.build(transcript.messages, CharEstimator())
    strategy = strategy_from_config(
        preset("reference", 2100).strategy_config(), summarizer=ExtractiveSummarizer()
    )
    guards = Guards().for_format(transcript.format)
    result = run_strategy(index, strategy, tokenizer_given=True, guards=guards)
    current = judge_run(index, result, strategy, guards)
    found = judge_fixes(
        index, search_fixes(index, strategy, guards=guards, summaries=result.summaries)
    )
    listed = listed_fixes(found.fixes, current)
    assert any(f.system_dropped for f in listed)  # SWE's fixes turn "system messages kept" off
    for fix in listed:
        assert fix.verdict is not None
        if fix.system_dropped:
            assert fix.verdict.level != "safe"
            assert "system-prompt" in [r.code for r in fix.verdict.costs]
    keeps = [f.keeps_conversation for f in listed]
    assert keeps == sorted(keeps, reverse=True)  # fixes that keep the conversation first


@pytest.mark.skipif(not SWE_LOG.is_file(), reason="the shared corpus (../shared/corpus) is absent")
def test_a_larger_target_comes_before_fixes_that_drop_the_system_prompt() -> None:
    """SWE-agent at 2,100: every change that keeps the target drops the system prompt, so
    the debugger's first fix and next step are the larger target, which keeps it (and the
    system-prompt fixes carry the costly mark)."""
    sys.path.insert(0, str(REPO / "app"))
    from compactlens_inspector.lab.presets import preset

    transcript = load_transcript(SWE_LOG)
    index = MessageIndex.build(transcript.messages, CharEstimator())
    strategy = strategy_from_config(
        preset("reference", 2100).strategy_config(), summarizer=ExtractiveSummarizer()
    )
    guards = Guards().for_format(transcript.format)
    result = run_strategy(index, strategy, tokenizer_given=True, guards=guards)
    debugger = debug(result, strategy, index, guards=guards)
    fixes = debugger.fixes
    assert fixes and all(f.system_dropped for f in fixes if not f.changes_target)
    top = fixes[0]
    assert top.changes_target and not top.system_dropped and top.fits
    # The changes that keep the target at the price of the system prompt are the other
    # choice, after the larger target, with that cost named (review 5, N8).
    step = debugger.verdict.next_step
    words = top.plain_summary
    assert step.startswith("Choose: ") and f"{words[:1].upper()}{words[1:]}, or keep" in step
    assert "at a cost (the system prompt dropped" in step
    assert all(fix_mark(f) == "costly" for f in fixes if f.system_dropped)
