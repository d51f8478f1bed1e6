"""When compaction fires again, as the verdict judges it: a cost only for a run that
compacted and leaves less room under its trigger than a typical turn adds, with a next step
that helps; never for a run that needed no compaction, a configuration without a trigger,
or a transcript whose one huge turn is not a growth rate (a log of only one or two steps
gets a labelled estimate: tests/analysis/test_growth_few_steps.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from analysis_helpers import assistant, system, user
from hypothesis import given, settings
from hypothesis import strategies as st

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
from compactlens.analysis.retrigger import (
    MIN_TURNS,
    RECENT_TURNS,
    HistoryMetrics,
    estimate_retrigger,
)
from compactlens.engine import CompactionResult
from compactlens.engine.triggers import Trigger
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
    # Without: an explicit empty set (no trigger is set). Given none at all, analyze()
    # would read the run's own (test_analyze_own_triggers.py).
    triggers = strategy_triggers(strategy, tokenizer_given=True) if with_triggers else ()
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
    # A run analyzed with no trigger set (triggers=()): nothing makes it fire again.
    result, report = _run(
        load_transcript(SAMPLES / "coding_agent.json").messages, PIPELINE, with_triggers=False
    )
    assert report.retrigger.triggers == ()
    v = verdict(result, report, provider="openai-chat")
    reason = _reason(v, "next-compaction")
    assert reason.level == "safe" and "not measured" not in reason.text
    assert "next-compaction" not in [r.code for r in v.costs]
    assert "below the trigger" not in v.next_step


def test_one_huge_turn_is_not_a_growth_rate_its_agent_steps_are() -> None:
    # cannot_fit_16k has one user turn of 23,512 tokens. The debugger's fix "add tool-result
    # collapse first (newest 0 tool calls kept verbatim)" gives 1,317 of 16,000 tokens.
    # One turn is not a rate: the growth is measured per agent step (group) instead.
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
    assert growth.source == "steps" and growth.unit == "step" and growth.turns_measured >= 3
    assert growth.tokens < 23_512
    v = verdict(result, report)
    reason = _reason(v, "next-compaction")
    assert reason.level == "safe" and "fires again" not in reason.text
    assert "steps away" in reason.text and "agent step" in reason.text
    assert v.numbers.turn_tokens == round(growth.tokens) and v.numbers.growth_unit == "step"
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
    # Too few turns: the growth is per agent step (here one reply per turn: ~100 tokens).
    steps = [system(), user("fix it"), *(assistant("a" * 400) for _ in range(MIN_TURNS + 2))]
    few = growth_from_index(MessageIndex.build(from_caller(steps).messages))
    assert few.source == "steps" and few.unit == "step" and 90 < few.tokens < 120
    # Too few turns and too few steps for a median: the larger of the two steps (the
    # request, the ~100-token reply), labelled as an estimate.
    one = growth_from_index(MessageIndex.build(from_caller(_turns([100])).messages))
    assert one.source == "few" and one.unit == "step" and one.turns_measured == 2
    assert 100 <= one.tokens < 120
    # No user turn or step at all: no growth.
    none = growth_from_index(MessageIndex.build(from_caller([system()]).messages))
    assert none.source == "none" and none.tokens == 0


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
    # The cache estimate prices one compaction: it says so when another falls within it.
    cache = _reason(v, "cache")
    assert v.numbers.cache_turns is not None and v.numbers.cache_turns > 1
    assert "assumes no further compaction" in cache.text


def test_a_cache_estimate_without_a_compaction_in_its_turns_has_no_caveat() -> None:
    messages = _turns([100] * 20)
    config = {"type": "truncation", "max_n": 2000, "compact_to": 600, "minimum_preserved": 2}
    result, report = _run(messages, config)
    v = verdict(result, report)
    assert (v.numbers.turns_until_next_compaction or 0) > (v.numbers.cache_turns or 0)
    assert "assumes no further compaction" not in _reason(v, "cache").text


ASTROPY_LOG = CORPUS / "openhands_llmc__astropy__astropy-7671.json"


@pytest.mark.skipif(not ASTROPY_LOG.exists(), reason="the corpus is not on this machine")
def test_an_agent_log_left_just_under_its_trigger_is_not_green() -> None:
    # OpenHands astropy (2 user turns, 31 messages): the reference pipeline at 6,200
    # compacts 12,442 to 6,198 tokens, 2 under the trigger. Each agent step adds a few
    # hundred tokens, so compaction fires again on the very next step: not "Fits and safe".
    from compactlens.analysis import reference_pipeline

    found = load_transcript(ASTROPY_LOG).messages
    index = MessageIndex.build(found, CharEstimator())
    strategy = reference_pipeline(6_200)
    result = run_strategy(index, strategy, tokenizer_given=True)
    triggers = strategy_triggers(strategy, tokenizer_given=True)
    report = analyze(found, result, triggers=triggers, tokenizer=CharEstimator())
    v = verdict(result, report)
    room = (report.retrigger.token_limit or 0) - result.tokens_after
    growth = report.retrigger.growth
    assert growth.source == "steps" and room < growth.tokens
    assert v.level != "safe"
    reason = _reason(v, "next-compaction")
    assert reason.level == "costs" and "very next step" in reason.text
    assert f"{room:,} tokens under the trigger" in reason.text


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(min_value=5, max_value=3_000), min_size=MIN_TURNS, max_size=30))
def test_an_agent_log_with_one_request_is_measured_per_step(sizes: list[int]) -> None:
    # One user request, then one reply per step: the typical step lies between the
    # smallest and the largest of the latest steps, and a history left with less room
    # under the trigger than one typical step fires again at once or on the next step.
    messages = [system(), user("fix the bug"), *(assistant("a" * (4 * s)) for s in sizes)]
    index = MessageIndex.build(from_caller(messages).messages, CharEstimator())
    growth = growth_from_index(index)
    recent = [g.tokens for g in index.groups if g.turn][-RECENT_TURNS:]
    assert growth.source == "steps" and min(recent) <= growth.tokens <= max(recent)
    limit = 50_000
    room = max(0, int(growth.tokens) - 1)
    start = HistoryMetrics(tokens=limit - room, messages=10, groups=5, turns=1, tool_call_groups=0)
    trigger = Trigger.from_dict(_exceed(limit))
    estimate = estimate_retrigger(start, [trigger], growth)
    assert estimate.loops and estimate.turns_until_trigger is not None
