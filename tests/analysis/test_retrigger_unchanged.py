"""A run that compacted nothing has no re-trigger loop to warn about: its next trigger is
the first compaction, and there is no gap between a trigger and a target to widen (the
review saw "leave more room between the trigger and the target" under a green verdict on
an unchanged run)."""

from __future__ import annotations

from pathlib import Path

from compactlens import (
    CharEstimator,
    MessageIndex,
    analyze,
    load_transcript,
    run_strategy,
    strategy_from_config,
    verdict,
)
from compactlens.analysis import strategy_triggers

SAMPLE = Path(__file__).resolve().parents[2] / "sample_transcripts" / "coding_agent.json"


def _run(trigger: int):  # type: ignore[no-untyped-def]
    transcript = load_transcript(SAMPLE)
    index = MessageIndex.build(transcript.messages, CharEstimator())
    strategy = strategy_from_config(
        {"type": "truncation", "trigger": {"op": "exceed", "metric": "tokens", "n": trigger}}
    )
    result = run_strategy(index, strategy, tokenizer_given=True)
    report = analyze(
        transcript, result, triggers=strategy_triggers(strategy), tokenizer=CharEstimator()
    )
    return index, result, report


def test_an_unchanged_run_one_turn_under_its_trigger_is_not_a_loop() -> None:
    index, _, _ = _run(10**9)
    total = index.total_tokens
    _, result, report = _run(total + 1)  # one typical turn crosses it
    assert result.status == "unchanged"
    assert report.retrigger.turns_until_trigger == 1
    words = " ".join(report.warnings)
    assert "leave more room" not in words and "fire again" not in words
    assert "the first compaction is due on the next turn" in words
    assert verdict(result, report).level == "safe"


def test_an_unchanged_run_says_when_its_first_compaction_is_due() -> None:
    """The green "nothing to change" of a run one turn under its trigger says that the
    first compaction is due on the next turn, so it agrees with a re-trigger count of 1
    (the review saw "every check passed" above "Re-trigger in 1")."""
    index, _, _ = _run(10**9)
    _, result, report = _run(index.total_tokens + 1)
    v = verdict(result, report)
    assert v.level == "safe" and v.numbers.turns_until_next_compaction == 1
    label, step = v.next_step_parts
    assert label == "Nothing to change"
    assert "no compaction is needed yet" in step
    assert "the first compaction is due on the next turn" in step
    assert f"above {index.total_tokens + 1:,} tokens" in step
