"""Review 6: "a typical turn adds about 1,706 tokens" when the 3 turns measured add 344,
1,706 and 89,087: the verdict says when the median hides a much larger turn."""

from __future__ import annotations

from compactlens import CharEstimator, MessageIndex, run_strategy, strategy_from_config
from compactlens.analysis import analyze, growth_from_index, verdict
from compactlens.model import Message, TextPart


def _turn(words: int, tag: str) -> list[Message]:
    return [
        Message(role="user", parts=(TextPart(f"request {tag}"),)),
        Message(role="assistant", parts=(TextPart(" ".join(f"{tag}{i}" for i in range(words))),)),
    ]


def _history() -> list[Message]:
    # Four user turns: small, typical, huge (about 20x the median), typical.
    return [*_turn(60, "a"), *_turn(300, "b"), *_turn(6000, "c"), *_turn(300, "d")]


def test_growth_keeps_the_largest_turn_it_took_the_median_of() -> None:
    growth = growth_from_index(MessageIndex.build(_history(), CharEstimator()))
    assert growth.source == "transcript" and growth.largest is not None
    assert growth.largest > 5 * growth.tokens


def _judged(trigger: int):  # type: ignore[no-untyped-def]
    messages = _history()
    config = {
        "type": "truncation",
        "trigger": {"op": "exceed", "metric": "tokens", "n": trigger},
        "target": {"op": "at_most", "metric": "tokens", "n": 2000},
        "minimum_preserved": 1,
    }
    strategy = strategy_from_config(config)
    result = run_strategy(MessageIndex.build(messages, CharEstimator()), strategy)
    return verdict(result, analyze(messages, result, triggers=strategy))


def test_the_verdict_says_the_median_hides_a_larger_turn() -> None:
    v = _judged(9000)
    growth = growth_from_index(MessageIndex.build(_history(), CharEstimator()))
    (reason,) = [r for r in v.reasons if r.code == "next-compaction"]
    assert v.numbers.turns_until_next_compaction and v.numbers.turns_until_next_compaction > 1
    assert f"a typical turn adds about {round(growth.tokens):,} tokens" in reason.text
    assert f"hides one that added {round(growth.largest or 0):,} tokens" in reason.text
    assert "a turn like it would fire compaction again" in reason.text
