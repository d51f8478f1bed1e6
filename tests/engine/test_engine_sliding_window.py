"""SlidingWindowStrategy scenarios."""

from __future__ import annotations

import pytest
from strategies_helpers import (
    assistant,
    call,
    calls,
    check_all,
    index_of,
    long_chat,
    result,
    system,
    tool_chat,
    user,
    weather_transcript,
)

from compactlens import (
    SlidingWindowStrategy,
    apply_compaction,
    tokens_exceed,
    turns_exceed,
)
from compactlens.engine.guards import NO_GUARDS


def users(messages: list[dict[str, object]]) -> list[object]:
    return [m["content"] for m in messages if m["role"] == "user"]


def test_keep_last_turns_keeps_exactly_the_newest_user_turns() -> None:
    convo = long_chat(6)
    res = apply_compaction(convo, SlidingWindowStrategy(keep_last_turns=2))
    check_all(convo, res)
    assert res.status == "compacted"
    assert res.messages == [convo[0], *convo[-4:]]
    assert users(res.messages) == users(convo)[-2:]


def test_keep_last_turns_is_a_strict_trigger() -> None:
    convo = long_chat(3)
    assert apply_compaction(convo, SlidingWindowStrategy(keep_last_turns=3)).status == "unchanged"
    assert apply_compaction(convo, SlidingWindowStrategy(keep_last_turns=2)).status == "compacted"


def test_a_whole_turn_goes_at_once_with_its_tool_groups() -> None:
    convo = weather_transcript()
    res = apply_compaction(convo, SlidingWindowStrategy(keep_last_turns=1))
    check_all(convo, res)
    assert res.messages == [convo[0], *convo[6:]]


def test_late_result_leaves_with_the_turn_of_its_call() -> None:
    convo = [
        user("turn one"),
        calls(call("a", "slow")),
        user("turn two"),
        result("a", "late"),
        assistant("got it"),
        user("turn three"),
        assistant("ok"),
    ]
    res = apply_compaction(convo, SlidingWindowStrategy(keep_last_turns=2))
    check_all(convo, res, systems=False)
    # The call belongs to turn one; its late result goes with it.
    assert res.messages == [convo[2], convo[4], convo[5], convo[6]]
    assert not res.problems


def test_token_trigger_drops_turns_oldest_first_and_stops_between_turns() -> None:
    convo = long_chat(6)
    index = index_of(convo)
    limit = index.total_tokens * 2 // 3
    res = apply_compaction(convo, SlidingWindowStrategy(trigger=tokens_exceed(limit)))
    check_all(convo, res)
    assert res.status == "compacted"
    assert res.tokens_after <= limit
    # Whole turns: the output is the system message plus a suffix of complete exchanges.
    kept = res.messages[1:]
    assert kept == convo[len(convo) - len(kept) :]
    assert len(kept) % 2 == 0
    # Minimal: one more turn would not have fit.
    assert res.tokens_after + index.groups[1].tokens + index.groups[2].tokens > limit


def test_default_minimum_preserved_is_one_turn() -> None:
    convo = [
        system("s"),
        user("a" * 50),
        assistant("b" * 50),
        user("c" * 400),
        assistant("d" * 400),
    ]
    res = apply_compaction(
        convo, SlidingWindowStrategy(trigger=tokens_exceed(10)), guards=NO_GUARDS
    )
    assert res.status == "cannot-fit"
    assert res.messages == [convo[0], convo[3], convo[4]]
    assert res.reason
    fix = {s.parameter: s for s in res.explanation.suggestions}
    assert "minimum_preserved" in fix
    assert fix["minimum_preserved"].value == 0


def test_minimum_preserved_turns_are_never_touched() -> None:
    convo = long_chat(5)
    res = apply_compaction(
        convo, SlidingWindowStrategy(trigger=tokens_exceed(1), minimum_preserved=3)
    )
    assert res.status == "cannot-fit"
    assert users(res.messages) == users(convo)[-3:]


def test_keep_last_groups_counts_non_system_groups() -> None:
    convo = tool_chat(5)
    index = index_of(convo)
    res = apply_compaction(convo, SlidingWindowStrategy(keep_last_groups=3), guards=NO_GUARDS)
    check_all(convo, res)
    kept_groups = [d for d in res.decisions if d.action == "kept" and d.kind != "system"]
    assert [d.group_id for d in kept_groups] == [g.id for g in index.groups[-3:]]
    assert res.messages[0] is convo[0]


def test_keep_last_groups_unchanged_when_within_window() -> None:
    convo = tool_chat(1)  # user, one tool group, final answer: 3 non-system groups
    assert apply_compaction(convo, SlidingWindowStrategy(keep_last_groups=3)).status == "unchanged"


def test_turn_zero_groups_before_the_first_user_message() -> None:
    convo = [system("s"), assistant("Welcome!"), user("q1"), assistant("a1"), user("q2")]
    res = apply_compaction(convo, SlidingWindowStrategy(trigger=turns_exceed(1)))
    check_all(convo, res)
    assert res.messages == [convo[0], convo[4]]


def test_empty_and_system_only() -> None:
    assert apply_compaction([], SlidingWindowStrategy(keep_last_turns=1)).messages == []
    convo = [system("a"), system("b")]
    res = apply_compaction(convo, SlidingWindowStrategy(keep_last_turns=1))
    assert res.status == "unchanged" and res.messages == convo


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"keep_last_turns": 2, "keep_last_groups": 2},
        {"trigger": tokens_exceed(5), "keep_last_turns": 2},
        {"keep_last_turns": 0},
        {"keep_last_groups": 0},
        {"keep_last_turns": 2, "minimum_preserved": -1},
    ],
)
def test_invalid_parameters(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SlidingWindowStrategy(**kwargs)  # type: ignore[arg-type]


def test_preserve_system_false_drops_system_groups_with_their_turn() -> None:
    convo = [
        system("S" * 400),
        user("q1 " * 30),
        assistant("a1 " * 30),
        system("mid-conversation rule " * 5),
        user("q2"),
        assistant("a2"),
    ]
    kept = apply_compaction(convo, SlidingWindowStrategy(trigger=tokens_exceed(20)))
    assert convo[0] in kept.messages and convo[3] in kept.messages
    res = apply_compaction(
        convo, SlidingWindowStrategy(trigger=tokens_exceed(20), preserve_system=False)
    )
    check_all(convo, res, systems=False)
    assert res.status == "compacted"
    # The leading system message goes with turn 0, the middle one with turn 1; the
    # newest turn (protected by minimum_preserved=1) is what is left.
    assert res.messages == convo[4:]
    # A system message standing inside a protected turn stays.
    res = apply_compaction(
        convo,
        SlidingWindowStrategy(
            trigger=tokens_exceed(20), preserve_system=False, minimum_preserved=2
        ),
    )
    assert res.status == "cannot-fit"
    assert res.messages == convo[1:]
