"""The message index: groups, kinds, links, turns, sizes, totals and pairing problems."""

from __future__ import annotations

import math

import pytest
from strategies_helpers import (
    assistant,
    call,
    calls,
    index_of,
    reasoning,
    result,
    system,
    to_messages,
    user,
    weather_transcript,
)

from compactlens import MessageIndex, validate_pairing
from compactlens.engine import GroupKind
from compactlens.model import SUMMARY_PREFIX, message_text, text_message


def kinds(index: MessageIndex) -> list[str]:
    return [g.kind.value for g in index.groups]


def problem_kinds(items: list[dict[str, object]]) -> list[tuple[str, str]]:
    return [(p.kind, p.call_id) for p in validate_pairing(items)]


def test_group_kinds_indices_and_turns() -> None:
    index = index_of(weather_transcript())
    assert kinds(index) == [
        "system",
        "user",
        "tool_call",
        "assistant_text",
        "user",
        "tool_call",
        "assistant_text",
    ]
    assert [g.indices for g in index.groups] == [
        (0,),
        (1,),
        (2, 3, 4),
        (5,),
        (6,),
        (7, 8),
        (9,),
    ]
    assert [g.message_count for g in index.groups] == [1, 1, 3, 1, 1, 2, 1]
    assert [g.turn for g in index.groups] == [None, 1, 1, 1, 2, 2, 2]
    assert [g.id for g in index.groups] == list(range(7))
    assert index.groups[2].tool_names == ("get_weather", "search_docs")
    assert index.groups[2].call_ids == ("w1", "d1")
    assert index.problems == ()


def test_groups_before_the_first_user_message_are_turn_zero() -> None:
    index = index_of(
        [system("s"), assistant("Hello, how can I help?"), user("hi"), assistant("hey")]
    )
    assert [g.turn for g in index.groups] == [None, 0, 1, 1]
    assert index.total_turns == 2


def test_totals() -> None:
    convo = weather_transcript()
    index = index_of(convo)
    assert index.total_messages == len(convo)
    assert index.total_groups == 7
    assert index.non_system_groups == 6
    assert index.total_turns == 2
    assert index.total_tokens == sum(index.message_tokens)
    assert index.total_tokens == sum(g.tokens for g in index.groups)
    assert index.system_tokens == index.groups[0].tokens


def test_sizes_are_utf8_bytes_and_tokens_per_group() -> None:
    index = index_of(weather_transcript())
    for g in index.groups:
        texts = [message_text(index.messages[k]) for k in g.indices]
        assert g.bytes == sum(len(t.encode("utf-8")) for t in texts)
        assert g.tokens == sum(math.ceil(len(t) / 4) for t in texts)
    # "18°C" holds a two-byte character: bytes exceed characters for that group.
    tool_group = index.groups[2]
    chars = sum(len(message_text(index.messages[k])) for k in tool_group.indices)
    assert tool_group.bytes == chars + 1


def test_parallel_calls_form_one_group_with_all_results() -> None:
    index = index_of(
        [
            user("q"),
            calls(call("a", "f"), call("b", "g"), call("c", "h")),
            result("b", "2"),
            result("c", "3"),
            result("a", "1"),
        ]
    )
    assert kinds(index) == ["user", "tool_call"]
    assert index.groups[1].indices == (1, 2, 3, 4)
    assert {(link.call_id, link.result_indices) for link in index.links} == {
        ("a", (4,)),
        ("b", (2,)),
        ("c", (3,)),
    }
    assert index.problems == ()


def test_result_after_intervening_messages_joins_its_call_group() -> None:
    convo = [
        user("q"),
        calls(call("a", "f"), call("b", "slow")),
        result("a", "1"),
        user("still there?"),
        assistant("waiting for the slow tool"),
        result("b", "2"),
        assistant("done"),
    ]
    index = index_of(convo)
    assert kinds(index) == ["user", "tool_call", "user", "assistant_text", "assistant_text"]
    assert index.groups[1].indices == (1, 2, 5)
    assert index.groups[1].turn == 1
    assert index.groups[2].turn == 2
    assert problem_kinds(convo) == [("split_pair", "b")]
    assert validate_pairing(convo)[0].message_index == 5


def test_reused_ids_pair_with_the_nearest_pending_call() -> None:
    convo = [
        user("q"),
        calls(call("x", "first")),
        calls(call("x", "second")),
        result("x", "answers second"),
        result("x", "answers first"),
    ]
    index = index_of(convo)
    first, second = index.links
    assert (first.name, first.result_indices) == ("first", (4,))
    assert (second.name, second.result_indices) == ("second", (3,))
    assert index.group_of[3] == index.group_of[2]
    assert index.group_of[4] == index.group_of[1]
    assert ("duplicate_id", "x") in problem_kinds(convo)


def test_sequential_reuse_of_an_id_is_flagged_but_pairs_cleanly() -> None:
    convo = [user("q"), calls(call("x")), result("x", "1"), calls(call("x")), result("x", "2")]
    index = index_of(convo)
    assert [g.indices for g in index.groups] == [(0,), (1, 2), (3, 4)]
    assert problem_kinds(convo) == [("duplicate_id", "x")]


def test_orphan_result_is_its_own_flagged_group() -> None:
    convo = [user("q"), result("ghost", "who called me?"), assistant("hm")]
    index = index_of(convo)
    assert kinds(index) == ["user", "tool_call", "assistant_text"]
    orphan = index.groups[1]
    assert orphan.indices == (1,)
    assert "orphan" in orphan.flags
    assert problem_kinds(convo) == [("orphan_result", "ghost")]


def test_result_before_its_call_is_an_orphan() -> None:
    convo = [user("q"), result("a", "early"), calls(call("a")), result("a", "ok")]
    assert problem_kinds(convo) == [("orphan_result", "a")]


def test_unresolved_call_is_flagged() -> None:
    convo = [user("q"), calls(call("a", "finish")), assistant("bye")]
    index = index_of(convo)
    assert "unresolved" in index.groups[1].flags
    assert index.links[0].open
    assert problem_kinds(convo) == [("unresolved_call", "a")]


def test_reasoning_before_calls_joins_the_call_group() -> None:
    convo = [
        user("q"),
        reasoning("think"),
        reasoning("think more"),
        calls(call("a")),
        result("a", "r"),
        reasoning("dangling thought"),
        user("next"),
    ]
    index = index_of(convo)
    assert kinds(index) == ["user", "tool_call", "assistant_text", "user"]
    assert index.groups[1].indices == (1, 2, 3, 4)
    assert "reasoning" in index.groups[1].flags
    # Reasoning not followed by an assistant message stands alone.
    assert index.groups[2].indices == (5,)
    assert "reasoning" in index.groups[2].flags


def test_reasoning_before_a_text_answer_joins_it() -> None:
    index = index_of([user("q"), reasoning("hmm"), assistant("answer")])
    assert [g.indices for g in index.groups] == [(0,), (1, 2)]
    assert index.groups[1].kind is GroupKind.ASSISTANT_TEXT


def test_summary_messages_are_summary_groups() -> None:
    msgs = [
        text_message("system", "s"),
        text_message("user", SUMMARY_PREFIX + "we talked"),
        text_message("user", "more"),
    ]
    index = MessageIndex.build(msgs)
    assert [g.kind for g in index.groups] == [GroupKind.SYSTEM, GroupKind.SUMMARY, GroupKind.USER]


def test_media_flag() -> None:
    convo = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}},
            ],
        }
    ]
    assert "media" in index_of(convo).groups[0].flags


def test_empty_transcript() -> None:
    index = MessageIndex.build([])
    assert index.groups == ()
    assert (index.total_tokens, index.total_messages, index.total_groups, index.total_turns) == (
        0,
        0,
        0,
        0,
    )
    assert validate_pairing([]) == []


def test_only_system_messages() -> None:
    index = index_of([system("a"), system("b")])
    assert kinds(index) == ["system", "system"]
    assert [g.turn for g in index.groups] == [None, None]
    assert index.non_system_groups == 0
    assert index.total_turns == 0
    assert index.system_tokens == index.total_tokens > 0


def test_developer_messages_are_system_groups() -> None:
    index = index_of([{"role": "developer", "content": "d"}, user("u")])
    assert kinds(index) == ["system", "user"]


def test_build_rejects_non_messages() -> None:
    with pytest.raises(TypeError):
        MessageIndex.build([{"role": "user", "content": "x"}])  # type: ignore[list-item]


def test_validate_pairing_accepts_messages_and_wire_alike() -> None:
    convo = [
        user("q"),
        calls(call("a"), call("b")),
        result("a", "1"),
        user("interrupt"),
        result("b", "2"),
        result("zz", "orphan"),
        calls(call("a")),
    ]
    from_wire = validate_pairing(convo)
    assert from_wire == validate_pairing(to_messages(convo))
    assert {p.kind for p in from_wire} == {
        "split_pair",
        "orphan_result",
        "duplicate_id",
        "unresolved_call",
    }
    for p in from_wire:
        assert p.to_dict()["kind"] == p.kind
        assert p.detail


def test_safe_cuts_never_split_a_link() -> None:
    index = index_of(weather_transcript())
    safe = index.safe_cuts()
    assert len(safe) == index.total_messages + 1
    for link in index.links:
        for k in range(link.first + 1, link.last + 1):
            assert not safe[k]
    assert safe[0] and safe[2] and safe[5] and safe[index.total_messages]
