"""When compaction fires again, as the verdict judges it: a cost only for a run that
compacted and leaves less room under its trigger than a typical turn adds, with a next step
that helps; never for a run that needed no compaction, a configuration without a trigger,
or a transcript whose one turn is not a growth rate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from analysis_helpers import assistant, system, user

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    MessageIndex,
    analyze,
    load_transcript,
    run_strategy,
    strategy_from_config,
    verdict,
)
from compactlens.analysis import CompactionReport, growth_from_index, strategy_triggers
from compactlens.analysis.retrigger import MIN_TURNS, RECENT_TURNS
from compactlens.engine import CompactionResult
from compactlens.formats import from_caller

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_transcripts"
CORPUS = REPO.parent / "shared" / "corpus"
CLAUDE_CODE_LOG = CORPUS / "claude_code__ae4a77f8-aedd-4bc1-888f-c94edc91af04.json"
PIPELINE = json.loads((REPO / "examples" / "pipeline.json").read_text(encoding="utf-8"))


def _exceed(n: int) -> dict[str, Any]:
    return {"op": "exceed", "metric": "tokens", "n": n}


def _run(
    messages: Any, config: dict[str, Any], *, with_triggers: bool = True
) -> tuple[CompactionResult, CompactionReport]:
    found = from_caller(messages).messages if isinstance(messages, list) else messages
    index = MessageIndex.build(found, CharEstimator())
    strategy = strategy_from_config(config, summarizer=ExtractiveSummarizer())
    result = run_strategy(index, strategy, tokenizer_given=True)
    triggers = strategy_triggers(strategy, tokenizer_given=True) if with_triggers else None
    return result, analyze(found, result, triggers=triggers, tokenizer=CharEstimator())


def _reason(v: Any, code: str) -> Any:
    return next(r for r in v.reasons if r.code == code)


def _turns(sizes: list[int]) -> list[dict[str, Any]]:
    """A system prompt, then one user + assistant turn per size: the assistant's answer
    holds ``4 * size`` characters, so a turn adds a little over ``size`` tokens."""
    out = [system()]
    for k, size in enumerate(sizes):
        out += [user(f"question {k:03d}"), assistant("a" * (4 * size))]
    return out


def test_a_run_that_needed_no_compaction_has_not_fired_and_it_is_no_cost() -> None:
    # 8,667 tokens under a trigger at 8,800: nothing fired; a typical turn (about 253
    # tokens) reaches the trigger on the next turn, which is when the first compaction is due.
    result, report = _run(
        load_transcript(SAMPLES / "coding_agent.json").messages,
        {
            "type": "truncation",
            "max_n": 8800,
            "compact_to": 6000,
        },
    )
    assert result.status == "unchanged" and report.retrigger.turns_until_trigger == 1
    v = verdict(result, report, provider="openai-chat")
    reason = _reason(v, "next-compaction")
    assert reason.level == "safe" and "again" not in reason.text
    assert "first is on the next turn" in reason.text
    assert v.level == "safe" and "further" not in v.next_step


@pytest.mark.skipif(
    not CLAUDE_CODE_LOG.is_file(), reason="the shared corpus (../shared/corpus) is absent"
)
def test_the_context_window_preset_on_a_claude_code_log_is_not_said_to_fire_again() -> None:
    # The Lab's "Context window" preset at 128,000: compact above 102,400, down to 64,000.
    trigger = _exceed(102_400)
    config = {
        "type": "pipeline",
        "strategies": [
            {"type": "tool_result_collapse", "trigger": trigger},
            {"type": "summarization", "trigger": trigger},
            {"type": "truncation", "trigger": trigger, "minimum_preserved": 2},
        ],
        "target": {"op": "at_most", "metric": "tokens", "n": 64_000},
    }
    result, report = _run(load_transcript(CLAUDE_CODE_LOG).messages, config)
    assert result.status == "unchanged"
    v = verdict(result, report)
    assert "next-compaction" not in [r.code for r in v.costs]
    assert "fires again" not in " ".join(r.text for r in v.reasons)
    assert "Compact further" not in v.next_step


def test_without_a_trigger_nothing_fires_again_and_nothing_is_to_compact_further() -> None:
    # A recorded call replayed without its configuration's triggers (the Runs page).
    result, report = _run(
        load_transcript(SAMPLES / "coding_agent.json").messages, PIPELINE, with_triggers=False
    )
    assert report.retrigger.triggers == ()
    v = verdict(result, report, provider="openai-chat")
    reason = _reason(v, "next-compaction")
    assert reason.level == "safe" and "not measured" not in reason.text
    assert "next-compaction" not in [r.code for r in v.costs]
    assert "below the trigger" not in v.next_step


def test_one_huge_turn_is_not_a_growth_rate() -> None:
    # cannot_fit_16k has one user turn of 23,512 tokens. The debugger's fix "add tool-result
    # collapse first (newest 0 tool calls kept verbatim)" gives 1,317 of 16,000 tokens.
    trigger = _exceed(16_000)
    config = {
        "type": "pipeline",
        "strategies": [
            {
                "type": "tool_result_collapse",
                "trigger": trigger,
                "target": {"op": "at_most", "metric": "tokens", "n": 16_000},
                "keep_last_tool_call_groups": 0,
                "minimum_preserved": 0,
            },
            {"type": "sliding_window", "trigger": trigger, "minimum_preserved": 1},
        ],
    }
    result, report = _run(load_transcript(SAMPLES / "cannot_fit_16k.json").messages, config)
    assert result.status == "compacted" and result.tokens_after == 1317
    growth = report.retrigger.growth
    assert growth.source == "none" and growth.turns_measured == 1
    v = verdict(result, report)
    reason = _reason(v, "next-compaction")
    assert reason.level == "safe" and "fires again" not in reason.text
    assert "1 user turn" in reason.text
    assert v.numbers.turn_tokens is None and v.numbers.turns_measured == 1
    assert "further" not in v.next_step and "below the trigger" not in v.next_step


def test_the_typical_turn_is_the_median_of_the_recent_turns() -> None:
    # One giant turn among small ones does not move the median.
    index = MessageIndex.build(from_caller(_turns([100, 100, 9000, 100, 100])).messages)
    growth = growth_from_index(index)
    assert growth.source == "transcript" and growth.turns_measured == 5
    assert growth.tokens < 200
    # Only the latest RECENT_TURNS count: early large turns are forgotten.
    sizes = [5000] * 10 + [100] * RECENT_TURNS
    growth = growth_from_index(MessageIndex.build(from_caller(_turns(sizes)).messages))
    assert growth.turns_measured == RECENT_TURNS and growth.tokens < 200
    # Too few turns: no growth rate at all.
    few = growth_from_index(
        MessageIndex.build(from_caller(_turns([100] * (MIN_TURNS - 1))).messages)
    )
    assert few.source == "none" and few.tokens == 0 and few.turns_measured == MIN_TURNS - 1


def test_a_target_at_the_trigger_fires_again_and_the_next_step_names_a_target_with_room() -> None:
    # Turns of about 100 tokens; compaction above 1,500 down to 1,500: no room for a turn.
    messages = _turns([100] * 20)
    config = {"type": "truncation", "max_n": 1500, "compact_to": 1500, "minimum_preserved": 2}
    result, report = _run(messages, config)
    assert result.status == "compacted"
    v = verdict(result, report)
    reason = _reason(v, "next-compaction")
    assert reason.level == "costs" and "very next turn" in reason.text
    turn = v.numbers.turn_tokens
    assert turn is not None and 100 <= turn < 120
    assert v.numbers.token_limit == 1500
    assert f"{1500 - result.tokens_after:,} tokens under the trigger" in reason.text
    assert v.next_step.startswith(f"Lower the target to at most {1500 - turn:,} tokens")
    assert f" or raise the trigger to at least {result.tokens_after + turn:,}:" in v.next_step
    # Following the advice helps: the next compaction is no longer on the next turn.
    fixed, fixed_report = _run(messages, {**config, "compact_to": 1500 - turn})
    assert "next-compaction" not in [r.code for r in verdict(fixed, fixed_report).costs]


def test_when_one_turn_is_larger_than_the_trigger_allows_compacting_further_cannot_help() -> None:
    # Turns of about 400 tokens under a trigger at 300: whatever the target, the next turn
    # reaches the trigger; the next step is a larger trigger, never a lower target.
    messages = [*_turns([400] * 6), user("and now?")]
    config = {"type": "truncation", "max_n": 300, "compact_to": 250, "minimum_preserved": 0}
    result, report = _run(messages, config)
    assert result.status == "compacted" and result.tokens_after <= 250
    v = verdict(result, report)
    assert _reason(v, "next-compaction").level == "costs"
    assert v.next_step.startswith("Raise the trigger above")
    assert "compacting further cannot help" in v.next_step
    assert "Lower the target" not in v.next_step
