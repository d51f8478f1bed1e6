"""A log with fewer than three steps still gets an estimate of what the next step adds.

Before, a log of one request and a reply or two was "not estimated" and its verdict
green, even with the compacted history a few tokens under its trigger (review 3, #1:
"not measured" read as safe). A median of one or two steps is not a typical step, so
the growth is the largest of them, a cautious estimate, and every text that uses it says
so ("estimated from the larger of the log's only 2 steps")."""

from __future__ import annotations

from typing import Any

from analysis_helpers import assistant, system, user
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import (
    CharEstimator,
    MessageIndex,
    analyze,
    run_strategy,
    strategy_from_config,
    verdict,
)
from compactlens.analysis import growth_from_index, strategy_triggers
from compactlens.analysis.retrigger import MIN_TURNS, HistoryMetrics, estimate_retrigger
from compactlens.engine.triggers import Trigger
from compactlens.formats import from_caller


def _index(messages: list[dict[str, Any]]) -> MessageIndex:
    return MessageIndex.build(from_caller(messages).messages, CharEstimator())


@settings(max_examples=60, deadline=None)
@given(
    request=st.integers(min_value=1, max_value=2_000),
    replies=st.lists(st.integers(min_value=1, max_value=5_000), max_size=MIN_TURNS - 2),
    room=st.integers(min_value=0, max_value=10_000),
)
def test_one_or_two_steps_give_their_largest_as_the_estimate(
    request: int, replies: list[int], room: int
) -> None:
    messages = [system(), user("r" * (4 * request)), *(assistant("a" * (4 * n)) for n in replies)]
    index = _index(messages)
    steps = [g.tokens for g in index.groups if g.turn]
    assert 1 <= len(steps) < MIN_TURNS
    growth = growth_from_index(index)
    # An estimate from what exists, labelled as such, and never below any step seen.
    assert growth.source == "few" and growth.unit == "step"
    assert growth.turns_measured == len(steps)
    assert growth.tokens == max(steps) > 0
    # So a history left with less room under its trigger than the largest step fires
    # again on the next step, and one with more room does not.
    limit = 50_000
    start = HistoryMetrics(tokens=limit - room, messages=4, groups=2, turns=1, tool_call_groups=0)
    estimate = estimate_retrigger(start, [Trigger("exceed", "tokens", limit)], growth)
    assert estimate.loops == (room < growth.tokens)
    assert any("estimated from" in w for w in estimate.warnings)


def test_a_two_step_log_left_just_under_its_trigger_is_not_green() -> None:
    # A 2,000-token system prompt, a request and one 1,000-token reply: a clamp at 2,500
    # cuts the reply and leaves the history a few tokens under its trigger. The next
    # step is estimated from the larger of the two steps, so compaction fires again.
    messages = [system("s" * 8_000), user("please fix the failing test"), assistant("a" * 4_000)]
    index = _index(messages)
    trigger = {"op": "exceed", "metric": "tokens", "n": 2_500}
    config = {"type": "clamp", "max_tokens": 400, "trigger": trigger}
    strategy = strategy_from_config(config)
    result = run_strategy(index, strategy, tokenizer_given=True)
    assert result.status == "compacted" and result.tokens_after <= 2_500
    triggers = strategy_triggers(strategy, tokenizer_given=True)
    report = analyze(index.messages, result, triggers=triggers, tokenizer=CharEstimator())
    v = verdict(result, report)
    assert v.numbers.growth_source == "few" and v.numbers.turn_tokens is not None
    reason = next(r for r in v.reasons if r.code == "next-compaction")
    assert v.level != "safe" and reason.level == "costs"
    assert "very next step" in reason.text
    assert "estimated from the larger of the log's only 2 steps" in reason.text
    assert "not estimated" not in reason.text
    assert v.to_dict()["numbers"]["growth_source"] == "few"
