"""TruncationStrategy scenarios."""

from __future__ import annotations

import pytest
from strategies_helpers import (
    assert_not_mutated,
    assistant,
    call,
    calls,
    check_all,
    index_of,
    long_chat,
    reasoning,
    result,
    snapshot,
    system,
    tool_chat,
    user,
    weather_transcript,
)

from compactlens import (
    CharEstimator,
    TruncationStrategy,
    apply_compaction,
    messages_exceed,
    run_strategy,
    tokens_exceed,
    turns_exceed,
)
from compactlens.engine import tokens_at_most
from compactlens.engine.guards import NO_GUARDS


def excluded_ids(res: object) -> list[int]:
    return [d.group_id for d in res.decisions if d.action == "excluded"]  # type: ignore[attr-defined]


def test_excludes_oldest_groups_one_at_a_time_until_the_target_holds() -> None:
    convo = long_chat(6)
    index = index_of(convo)
    limit = index.total_tokens // 2
    before = snapshot(convo)
    res = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(limit), minimum_preserved=1)
    )
    assert_not_mutated(before, convo)
    check_all(convo, res)
    assert res.status == "compacted"
    assert res.tokens_after <= limit
    dropped = excluded_ids(res)
    non_system = [g.id for g in index.groups if not g.is_system]
    assert dropped == non_system[: len(dropped)], "oldest first"
    # Minimal: keeping the last excluded group would miss the target.
    last = index.groups[dropped[-1]]
    assert res.tokens_after + last.tokens > limit
    # The system message is still first.
    assert res.messages[0] is convo[0]


def test_at_exactly_the_threshold_nothing_happens() -> None:
    convo = long_chat(3)
    total = index_of(convo).total_tokens
    res = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(total), minimum_preserved=0)
    )
    assert res.status == "unchanged"
    assert res.events[0].event == "skipped"
    res = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(total - 1), minimum_preserved=0)
    )
    assert res.status == "compacted"


def test_separate_target() -> None:
    convo = long_chat(8)
    index = index_of(convo)
    total = index.total_tokens
    strategy = TruncationStrategy(
        trigger=tokens_exceed(total - 10), target=tokens_at_most(total // 3), minimum_preserved=1
    )
    res = run_strategy(index, strategy)
    assert res.status == "compacted"
    assert res.tokens_after <= total // 3


def test_minimum_preserved_default_is_32_groups() -> None:
    convo = long_chat(10)  # 20 non-system groups, all protected by default
    res = apply_compaction(convo, TruncationStrategy(trigger=tokens_exceed(10)))
    assert res.status == "cannot-fit"
    assert res.messages == convo
    assert excluded_ids(res) == []
    protected = {p.why: p for p in res.explanation.protected}
    assert len(protected["minimum_preserved"].group_ids) == 20
    assert "system" in protected


def test_minimum_preserved_is_honoured() -> None:
    convo = long_chat(6)
    res = apply_compaction(convo, TruncationStrategy(trigger=tokens_exceed(1), minimum_preserved=3))
    assert res.status == "cannot-fit"
    kept = [d for d in res.decisions if d.action == "kept" and d.kind != "system"]
    assert len(kept) == 3
    assert [m for m in res.messages[1:]] == convo[-3:]


def test_system_messages_are_preserved_unless_told_otherwise() -> None:
    convo = [system("rules " * 40), *long_chat(4, with_system=False), system("late rule")]
    res = apply_compaction(convo, TruncationStrategy(trigger=tokens_exceed(5), minimum_preserved=1))
    check_all(convo, res)
    assert res.messages[0] is convo[0]
    assert convo[-1] in res.messages
    res = apply_compaction(
        convo,
        TruncationStrategy(trigger=tokens_exceed(5), minimum_preserved=1, preserve_system=False),
    )
    assert convo[0] not in res.messages


def test_tool_call_groups_go_whole() -> None:
    convo = tool_chat(4)
    index = index_of(convo)
    res = apply_compaction(
        convo,
        TruncationStrategy(trigger=tokens_exceed(index.total_tokens // 2), minimum_preserved=1),
    )
    check_all(convo, res)
    assert res.status == "compacted"
    assert not [p for p in res.problems if p.kind in ("orphan_result", "split_pair")]


def test_results_after_intervening_messages_leave_with_their_call() -> None:
    convo = [
        system("s"),
        user("start " * 30),
        calls(call("a", "slow")),
        user("anyone?"),
        assistant("waiting"),
        result("a", "finally " * 30),
        user("thanks"),
        assistant("bye"),
    ]
    index = index_of(convo)
    res = apply_compaction(
        convo,
        TruncationStrategy(trigger=tokens_exceed(index.total_tokens - 10), minimum_preserved=1),
    )
    check_all(convo, res)
    # Dropping the first user group was enough, the call group stays whole.
    assert convo[2] in res.messages and convo[5] in res.messages
    res = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(20), minimum_preserved=1)
    )
    check_all(convo, res)
    assert convo[2] not in res.messages and convo[5] not in res.messages


def test_reasoning_leaves_with_its_call() -> None:
    convo = [
        user("q"),
        reasoning("long thought " * 20),
        calls(call("a")),
        result("a", "r" * 100),
        user("next"),
        assistant("ok"),
    ]
    res = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(10), minimum_preserved=2)
    )
    check_all(convo, res, systems=False)
    assert res.messages == convo[4:]


def test_single_group_over_budget_cannot_fit_and_says_why() -> None:
    convo = [system("s"), user("x" * 4000)]
    res = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(100), minimum_preserved=1), guards=NO_GUARDS
    )
    assert res.status == "cannot-fit"
    assert res.reason and "target" in res.reason
    assert res.messages == convo
    assert res.explanation.smallest_target == res.tokens_after > 100
    # With minimum_preserved=0 the group could go.
    res0 = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(100), minimum_preserved=0), guards=NO_GUARDS
    )
    assert res0.status == "compacted" and res0.messages == [convo[0]]


def test_max_n_and_compact_to_count_messages_without_a_tokenizer() -> None:
    convo = long_chat(6)  # 13 messages
    res = apply_compaction(convo, TruncationStrategy(max_n=10, compact_to=5, minimum_preserved=1))
    assert res.status == "compacted"
    assert len(res.messages) <= 5
    assert res.events[0].trigger == "messages > 10"
    res = apply_compaction(convo, TruncationStrategy(max_n=13, compact_to=5, minimum_preserved=1))
    assert res.status == "unchanged"


def test_max_n_and_compact_to_count_tokens_with_a_tokenizer() -> None:
    convo = long_chat(6)
    total = index_of(convo).total_tokens
    strategy = TruncationStrategy(max_n=total - 1, compact_to=total // 2, minimum_preserved=1)
    res = apply_compaction(convo, strategy, CharEstimator())
    assert res.status == "compacted"
    assert res.tokens_after <= total // 2
    assert res.events[0].trigger == f"tokens > {total - 1}"


def test_message_and_turn_triggers() -> None:
    convo = long_chat(6)
    res = apply_compaction(
        convo, TruncationStrategy(trigger=messages_exceed(7), minimum_preserved=1)
    )
    assert res.status == "compacted" and len(res.messages) == 7
    res = apply_compaction(convo, TruncationStrategy(trigger=turns_exceed(2), minimum_preserved=1))
    assert res.status == "compacted"
    assert sum(1 for m in res.messages if m["role"] == "user") == 2


def test_empty_and_system_only_transcripts() -> None:
    strategy = TruncationStrategy(trigger=tokens_exceed(1), minimum_preserved=0)
    res = apply_compaction([], strategy)
    assert res.status == "unchanged" and res.messages == []
    convo = [system("a" * 40), system("b" * 40)]
    # Under "any" an empty request is allowed; a provider keeps one message (see guards).
    res = apply_compaction(convo, strategy, provider="any")
    assert res.status == "cannot-fit"
    assert res.messages == convo
    assert [p.why for p in res.explanation.protected] == ["system"]
    assert any(s.parameter == "preserve_system" for s in res.explanation.suggestions)


def test_works_on_the_weather_transcript() -> None:
    convo = weather_transcript()
    res = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(60), minimum_preserved=1)
    )
    check_all(convo, res)
    assert res.status in ("compacted", "cannot-fit")


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"trigger": tokens_exceed(5), "max_n": 10, "compact_to": 5},
        {"max_n": 5, "compact_to": 10},
        {"max_n": 5},
        {"trigger": tokens_exceed(5), "minimum_preserved": -1},
        {"trigger": tokens_exceed(5), "minimum_preserved": 1.5},
    ],
)
def test_invalid_parameters(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        TruncationStrategy(**kwargs)  # type: ignore[arg-type]
