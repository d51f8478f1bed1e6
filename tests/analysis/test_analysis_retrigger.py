"""Re-trigger estimates on a synthetic transcript that grows by a constant amount per turn.

Every message's counted text is exactly 40 characters, so with the character estimate
each message is 10 tokens: the system message 10, each turn (user + assistant) 20.
"""

from __future__ import annotations

from typing import Any

import pytest

from compactlens import (
    MessageIndex,
    PipelineStrategy,
    SlidingWindowStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    Trigger,
    TruncationStrategy,
    analyze,
    apply_compaction,
    messages_exceed,
    tokens_exceed,
    turns_exceed,
)
from compactlens.analysis import (
    Growth,
    HistoryMetrics,
    estimate_retrigger,
    growth_from_index,
    strategy_triggers,
)
from compactlens.engine import tokens_at_most
from compactlens.formats import from_caller

TURNS = 20


def constant_growth_transcript(turns: int = TURNS) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "S" * 33}]  # "system\n" + 33
    for t in range(turns):
        msgs.append({"role": "user", "content": f"{t:03d}" + "u" * 32})  # "user\n" + 35
        msgs.append({"role": "assistant", "content": f"{t:03d}" + "a" * 27})  # "assistant\n" + 30
    return msgs


def test_the_synthetic_transcript_grows_by_twenty_tokens_a_turn() -> None:
    index = MessageIndex.build(from_caller(constant_growth_transcript()).messages)
    assert set(index.message_tokens) == {10}
    growth = growth_from_index(index)
    assert (growth.tokens, growth.messages, growth.groups) == (20.0, 2.0, 2.0)
    assert growth.source == "transcript"
    assert growth.turns_measured == TURNS


def test_a_target_equal_to_the_trigger_fires_again_on_the_next_turn() -> None:
    wire = constant_growth_transcript()
    strategy = TruncationStrategy(trigger=tokens_exceed(300), minimum_preserved=2)
    res = apply_compaction(wire, strategy)
    assert res.tokens_after == 300  # 410 tokens, dropped 10 at a time down to the target
    est = analyze(wire, res, triggers=strategy).retrigger
    assert est.turns_until_trigger == 1  # 300 + 20 > 300
    assert est.firing_trigger == "more than 300 tokens"  # in words, as every surface shows it
    assert est.loops
    assert any("very next turn" in w for w in est.warnings)


def test_room_below_the_trigger_gives_turns_at_the_growth_rate() -> None:
    wire = constant_growth_transcript()
    strategy = TruncationStrategy(
        trigger=tokens_exceed(300), target=tokens_at_most(200), minimum_preserved=2
    )
    res = apply_compaction(wire, strategy)
    assert res.tokens_after == 200
    est = analyze(wire, res, triggers=strategy).retrigger
    # 200 + 20k > 300 first at k = 6 (k = 5 gives exactly 300, which does not exceed).
    assert est.turns_until_trigger == 6
    assert not est.loops
    assert est.warnings == ()
    given = analyze(wire, res, triggers=strategy, growth_per_turn=50).retrigger
    assert given.growth.source == "given"
    assert given.turns_until_trigger == 3  # 200 + 50k > 300 first at k = 3


def test_a_result_that_still_triggers_fires_now() -> None:
    wire = constant_growth_transcript()
    strategy = TruncationStrategy(trigger=tokens_exceed(100), minimum_preserved=15)
    res = apply_compaction(wire, strategy)
    assert res.status == "cannot-fit"
    est = analyze(wire, res, triggers=strategy).retrigger
    assert est.turns_until_trigger == 0
    assert any("already triggers" in w for w in est.warnings)


def test_turn_and_message_triggers_are_projected_too() -> None:
    wire = constant_growth_transcript()
    window = SlidingWindowStrategy(keep_last_turns=5)
    res = apply_compaction(wire, window)
    assert analyze(wire, res, triggers=window).retrigger.turns_until_trigger == 1
    # 5 turns kept -> 11 messages; messages > 20 first after 5 turns of 2 messages.
    est = analyze(wire, res, triggers=messages_exceed(20)).retrigger
    assert est.start.messages == 11
    assert est.turns_until_trigger == 5


def test_no_trigger_within_the_horizon_gives_none() -> None:
    start = HistoryMetrics(tokens=100, messages=5, groups=4, turns=2, tool_call_groups=0)
    est = estimate_retrigger(start, [turns_exceed(50)], Growth(10.0), horizon=20)
    assert est.turns_until_trigger is None
    est = estimate_retrigger(start, [], Growth(10.0))
    assert est.turns_until_trigger is None


def test_context_window_fraction_warning() -> None:
    start = HistoryMetrics(tokens=200, messages=5, groups=4, turns=2, tool_call_groups=0)
    at_80 = estimate_retrigger(start, [], Growth(0.0), context_window=250)
    assert at_80.window_fraction == pytest.approx(0.8)
    assert at_80.warnings == ()
    above = estimate_retrigger(start, [], Growth(0.0), context_window=240)
    assert any("context window" in w for w in above.warnings)
    stricter = estimate_retrigger(start, [], Growth(0.0), context_window=250, max_fraction=0.5)
    assert any("context window" in w for w in stricter.warnings)


def test_compact_results_default_to_their_target_as_trigger() -> None:
    from compactlens import compact
    from compactlens.summarizers import FakeSummarizer

    wire = constant_growth_transcript()
    res = compact(wire, summarizer=FakeSummarizer("s"), target_tokens=600)
    est = analyze(wire, res).retrigger
    assert est.triggers == ("tokens > 600",)
    assert est.turns_until_trigger is not None and est.turns_until_trigger >= 1


def test_strategy_triggers_reads_shorthands_through_pipelines() -> None:
    pipeline = PipelineStrategy(
        ToolResultCompactionStrategy(trigger=tokens_exceed(5000)),
        TruncationStrategy(max_n=8000, compact_to=4000),
        SlidingWindowStrategy(keep_last_turns=7),
    )
    assert strategy_triggers(pipeline) == (
        tokens_exceed(5000),
        Trigger("exceed", "tokens", 8000),
        turns_exceed(7),
    )
    assert strategy_triggers(pipeline, tokenizer_given=False)[1] == messages_exceed(8000)
    budget = TokenBudgetComposedStrategy(
        3000, strategies=(SlidingWindowStrategy(keep_last_groups=4),)
    )
    assert strategy_triggers(budget.to_dict()) == (
        tokens_exceed(3000),
        Trigger("exceed", "groups", 4),
    )
