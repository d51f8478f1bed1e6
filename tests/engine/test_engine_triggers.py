"""Triggers: strict thresholds, validation, combinators, serialization, plan metrics."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from strategies_helpers import index_of, tool_chat, weather_transcript

from compactlens import Trigger, messages_exceed, tokens_exceed, turns_exceed
from compactlens.engine import (
    Plan,
    all_of,
    always,
    any_of,
    groups_exceed,
    has_tool_calls,
    never,
    not_,
    tokens_at_most,
    tokens_below,
)


@dataclass(frozen=True)
class M:
    tokens: int = 0
    messages: int = 0
    groups: int = 0
    turns: int = 0
    tool_call_groups: int = 0


THRESHOLDS = [
    tokens_exceed,
    tokens_below,
    tokens_at_most,
    messages_exceed,
    turns_exceed,
    groups_exceed,
]


@pytest.mark.parametrize("make", THRESHOLDS)
@pytest.mark.parametrize("bad", [0, -1, 1.5, 2.0, True, "3", None])
def test_non_positive_or_non_integer_thresholds_raise(make: object, bad: object) -> None:
    with pytest.raises(ValueError):
        make(bad)  # type: ignore[operator]


def test_exceed_is_strict() -> None:
    assert not tokens_exceed(100)(M(tokens=100))
    assert tokens_exceed(100)(M(tokens=101))
    assert not tokens_exceed(100)(M(tokens=99))
    assert not messages_exceed(5)(M(messages=5)) and messages_exceed(5)(M(messages=6))
    assert not turns_exceed(2)(M(turns=2)) and turns_exceed(2)(M(turns=3))
    assert not groups_exceed(3)(M(groups=3)) and groups_exceed(3)(M(groups=4))


def test_below_is_strict_and_at_most_inclusive() -> None:
    assert not tokens_below(10)(M(tokens=10))
    assert tokens_below(10)(M(tokens=9))
    assert tokens_at_most(10)(M(tokens=10))
    assert not tokens_at_most(10)(M(tokens=11))


def test_has_tool_calls_always_never() -> None:
    assert has_tool_calls()(M(tool_call_groups=1))
    assert not has_tool_calls()(M(tool_call_groups=0))
    assert always(M()) and not never(M())


def test_empty_combinators() -> None:
    assert all_of()(M())
    assert not any_of()(M())


def test_combinators() -> None:
    t = all_of(tokens_exceed(10), messages_exceed(2))
    assert t(M(tokens=11, messages=3))
    assert not t(M(tokens=11, messages=2))
    a = any_of(tokens_exceed(10), messages_exceed(2))
    assert a(M(tokens=11)) and a(M(messages=3)) and not a(M(tokens=10, messages=2))


@pytest.mark.parametrize(
    "trigger",
    [
        tokens_exceed(5),
        tokens_below(5),
        messages_exceed(3),
        turns_exceed(1),
        groups_exceed(2),
        has_tool_calls(),
        always,
        never,
        all_of(tokens_exceed(5), has_tool_calls()),
        any_of(turns_exceed(1), messages_exceed(3)),
        all_of(),
        any_of(),
    ],
)
def test_negation_is_the_logical_complement(trigger: Trigger) -> None:
    grid = [
        M(tokens=t, messages=m, turns=u, groups=g, tool_call_groups=c)
        for t in (0, 5, 6)
        for m in (3, 4)
        for u in (1, 2)
        for g in (2, 3)
        for c in (0, 1)
    ]
    negated = not_(trigger)
    for metrics in grid:
        assert negated(metrics) is (not trigger(metrics))
        assert not_(negated)(metrics) is trigger(metrics)


@pytest.mark.parametrize(
    "trigger",
    [
        tokens_exceed(5),
        tokens_below(7),
        tokens_at_most(9),
        messages_exceed(3),
        turns_exceed(1),
        groups_exceed(2),
        has_tool_calls(),
        always,
        never,
        all_of(),
        any_of(),
        all_of(tokens_exceed(5), any_of(has_tool_calls(), turns_exceed(2))),
        not_(all_of(tokens_exceed(5), messages_exceed(1))),
    ],
)
def test_dict_round_trip(trigger: Trigger) -> None:
    again = Trigger.from_dict(trigger.to_dict())
    assert again == trigger
    assert again.describe() == trigger.describe()


@pytest.mark.parametrize(
    "data",
    [
        {"op": "exceed", "metric": "tokens", "n": 0},
        {"op": "exceed", "metric": "tokens", "n": 2.5},
        {"op": "exceed", "metric": "bananas", "n": 3},
        {"op": "nope"},
        {"op": "not", "children": []},
        {"metric": "tokens"},
        "tokens > 3",
    ],
)
def test_from_dict_rejects_bad_input(data: object) -> None:
    with pytest.raises(ValueError):
        Trigger.from_dict(data)


def test_describe_and_token_limit() -> None:
    assert tokens_exceed(32000).describe() == "tokens > 32000"
    assert tokens_exceed(10).token_limit is None
    assert tokens_at_most(10).token_limit == 10
    assert tokens_below(10).token_limit == 9
    assert not_(tokens_exceed(10)).token_limit == 10
    assert all_of(tokens_at_most(10), tokens_at_most(7), messages_exceed(2)).token_limit == 7
    assert all_of().describe() == "always" and any_of().describe() == "never"


def test_triggers_read_plan_metrics() -> None:
    index = index_of(weather_transcript())
    plan = Plan(index)
    assert plan.tokens == index.total_tokens
    assert plan.messages == index.total_messages
    assert plan.groups == index.non_system_groups
    assert plan.turns == index.total_turns
    assert plan.tool_call_groups == 2
    assert not tokens_exceed(index.total_tokens)(plan)
    assert tokens_exceed(index.total_tokens - 1)(plan)
    assert has_tool_calls()(plan)
    values = all_of(tokens_exceed(1), has_tool_calls()).values(plan)
    assert values == {"tokens": index.total_tokens, "tool_call_groups": 2}


def test_plan_metrics_follow_exclusions_and_collapses() -> None:
    from compactlens.model import text_message

    index = index_of(tool_chat(3))
    plan = Plan(index)
    tool_groups = [g for g in index.groups if g.kind.value == "tool_call"]
    first = tool_groups[0]
    plan.exclude(first.id, "test", "because")
    assert plan.tokens == index.total_tokens - first.tokens
    assert plan.messages == index.total_messages - first.message_count
    assert plan.groups == index.non_system_groups - 1
    assert plan.tool_call_groups == 2
    second = tool_groups[1]
    line = text_message("assistant", "[collapsed]")
    plan.collapse(second.id, line, 4, "test", "because")
    assert plan.tokens == index.total_tokens - first.tokens - second.tokens + 4
    assert plan.messages == index.total_messages - first.message_count - second.message_count + 1
    assert plan.tool_call_groups == 1
    with pytest.raises(ValueError):
        plan.exclude(first.id, "test", "twice")
    with pytest.raises(ValueError):
        plan.collapse(second.id, line, 4, "test", "twice")
    plan.exclude(second.id, "test", "drop the line too")
    assert plan.tokens == index.total_tokens - first.tokens - second.tokens
    # Dropping every group of the only turn drops the turn.
    for g in index.groups:
        if not g.is_system and plan.included(g.id):
            plan.exclude(g.id, "test", "all")
    assert plan.turns == 0 and plan.groups == 0
    assert plan.tokens == index.system_tokens


@pytest.mark.parametrize("children", [5, "abc", {"op": "always"}, None])
def test_from_dict_rejects_children_that_are_not_a_list(children: object) -> None:
    with pytest.raises(ValueError):
        Trigger.from_dict({"op": "all", "children": children})
