"""ToolResultCompactionStrategy scenarios: collapse older tool-call groups to one line."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies_helpers import (
    assistant,
    call,
    calls,
    check_all,
    index_of,
    reasoning,
    result,
    system,
    to_messages,
    tool_chat,
    user,
    weather_transcript,
)

from compactlens import (
    Message,
    ToolResultCompactionStrategy,
    apply_compaction,
    tokens_exceed,
    validate_pairing,
)
from compactlens.formats import from_caller


def contents(messages: Sequence[dict[str, object]]) -> list[object]:
    return [m.get("content") for m in messages]


def test_collapses_older_groups_with_the_results_format() -> None:
    convo = weather_transcript()
    res = apply_compaction(convo, ToolResultCompactionStrategy())
    check_all(convo, res)
    assert res.status == "compacted"
    line = res.messages[2]
    assert line == {
        "role": "assistant",
        "content": "[Tool results: get_weather: sunny, 18°C; search_docs: found 3 docs]",
    }
    # The newest tool-call group stays verbatim.
    assert res.messages[5:7] == convo[7:9]
    assert res.messages[5] is convo[7]
    assert all(m is c for m, c in zip(res.messages[:2], convo[:2], strict=True))
    assert [d.action for d in res.decisions].count("collapsed") == 1
    assert not validate_pairing(res.messages)


def test_names_formatter() -> None:
    convo = weather_transcript()
    res = apply_compaction(convo, ToolResultCompactionStrategy(formatter="names"))
    assert res.messages[2]["content"] == "[Tool calls: get_weather, search_docs]"


def test_custom_formatter_receives_the_group_messages() -> None:
    seen: list[list[str]] = []

    def fmt(messages: Sequence[Message]) -> str:
        seen.append([m.role for m in messages])
        return f"<{len(messages)} messages>"

    convo = weather_transcript()
    res = apply_compaction(convo, ToolResultCompactionStrategy(formatter=fmt))
    assert seen == [["assistant", "tool", "tool"]]
    assert res.messages[2]["content"] == "<3 messages>"
    assert res.to_dict(include_messages=False)["strategy"] == "tool_result_collapse"


def test_long_results_are_capped_at_4096_characters() -> None:
    convo = [
        user("q"),
        calls(call("a", "dump")),
        result("a", "x" * 10_000),
        calls(call("b", "small")),
        result("b", "ok"),
    ]
    res = apply_compaction(convo, ToolResultCompactionStrategy())
    line = res.messages[1]["content"]
    assert isinstance(line, str)
    assert len(line) <= 4096
    assert line.startswith("[Tool results: dump: xxx")
    assert line.endswith("... [truncated]]")
    # Short results are not marked.
    res_small = apply_compaction(
        convo[:1] + convo[3:] + convo[1:3], ToolResultCompactionStrategy(skip_if_larger=False)
    )
    assert "[truncated]" not in res_small.messages[1]["content"]


def test_a_group_whose_collapsed_line_would_be_larger_stays_verbatim() -> None:
    convo = [
        user("q"),
        calls(call("b", "small")),
        result("b", "ok"),
        calls(call("a", "dump")),
        result("a", "x" * 10_000),
    ]
    res = apply_compaction(convo, ToolResultCompactionStrategy())
    assert res.status == "unchanged"
    assert res.messages == convo
    assert "would be larger" in res.events[0].detail
    forced = apply_compaction(convo, ToolResultCompactionStrategy(skip_if_larger=False))
    assert forced.status == "compacted"
    assert forced.tokens_after > forced.tokens_before
    big_first = [convo[0], convo[3], convo[4], convo[1], convo[2]]
    res_big = apply_compaction(big_first, ToolResultCompactionStrategy())
    assert res_big.status == "compacted"
    assert res_big.tokens_after < res_big.tokens_before


def test_whitespace_in_results_is_folded() -> None:
    convo = [user("q"), calls(call("a", "ls")), result("a", "a.txt\n  b.txt\n"), assistant("ok")]
    res = apply_compaction(
        convo, ToolResultCompactionStrategy(keep_last_tool_call_groups=0, skip_if_larger=False)
    )
    assert res.messages[1]["content"] == "[Tool results: ls: a.txt b.txt]"


def test_keep_last_tool_call_groups() -> None:
    convo = tool_chat(5)
    index = index_of(convo)
    tool_ids = [g.id for g in index.groups if g.kind.value == "tool_call"]
    for keep in (0, 1, 3, 5, 7):
        res = apply_compaction(convo, ToolResultCompactionStrategy(keep_last_tool_call_groups=keep))
        check_all(convo, res)
        collapsed = [d.group_id for d in res.decisions if d.action == "collapsed"]
        expected = tool_ids[: max(0, len(tool_ids) - keep)]
        assert collapsed == expected, keep
        assert res.status == ("compacted" if expected else "unchanged")


def test_trigger_style_stops_at_the_target_and_protects_the_newest_groups() -> None:
    convo = tool_chat(6, size=400)
    index = index_of(convo)
    limit = index.total_tokens - 150
    strategy = ToolResultCompactionStrategy(
        trigger=tokens_exceed(limit), keep_last_tool_call_groups=0, formatter="names"
    )
    res = apply_compaction(convo, strategy)
    check_all(convo, res)
    assert res.status == "compacted" and res.tokens_after <= limit
    collapsed = [d.group_id for d in res.decisions if d.action == "collapsed"]
    assert (
        collapsed == [g.id for g in index.groups if g.kind.value == "tool_call"][: len(collapsed)]
    )
    assert 0 < len(collapsed) < 6

    # Asking for everything: the newest 2 non-system groups (default) are never touched.
    res = apply_compaction(
        convo, ToolResultCompactionStrategy(trigger=tokens_exceed(1), keep_last_tool_call_groups=0)
    )
    assert res.status == "cannot-fit"
    last_tool_group = [g for g in index.groups if g.kind.value == "tool_call"][-1]
    decision = next(d for d in res.decisions if d.group_id == last_tool_group.id)
    assert decision.action == "kept"  # it is among the newest two groups
    assert res.messages[-3:] == convo[-3:]


def test_collapse_is_idempotent() -> None:
    convo = [*weather_transcript(), user("more"), calls(call("z", "run")), result("z", "fine")]
    strategy = ToolResultCompactionStrategy()
    first = apply_compaction(convo, strategy)
    second = apply_compaction(first.messages, strategy)
    assert first.status == "compacted"
    assert second.status == "unchanged"
    assert second.messages == first.messages
    assert all(a is b for a, b in zip(second.messages, first.messages, strict=True))
    trig = ToolResultCompactionStrategy(trigger=tokens_exceed(10), minimum_preserved=0)
    once = apply_compaction(convo, trig)
    twice = apply_compaction(once.messages, trig)
    assert twice.messages == once.messages
    assert twice.tokens_after == once.tokens_after


def test_orphan_and_unresolved_groups_collapse_cleanly() -> None:
    convo = [
        system("s"),
        user("q"),
        result("ghost", "who called?"),
        calls(call("a", "finish")),
        user("q2"),
        calls(call("b", "get")),
        result("b", "ok"),
    ]
    assert {p.kind for p in validate_pairing(convo)} == {"orphan_result", "unresolved_call"}
    res = apply_compaction(convo, ToolResultCompactionStrategy(skip_if_larger=False))
    check_all(convo, res)
    assert contents(res.messages)[2:4] == [
        "[Tool results: who called?]",
        "[Tool results: no results]",
    ]
    assert validate_pairing(res.messages) == []


def test_reasoning_before_the_call_is_collapsed_with_it() -> None:
    convo = [
        user("q"),
        reasoning("I should look it up"),
        calls(call("a", "lookup")),
        result("a", "42"),
        user("q2"),
        calls(call("b", "lookup")),
        result("b", "43"),
    ]
    res = apply_compaction(convo, ToolResultCompactionStrategy())
    check_all(convo, res, systems=False)
    assert contents(res.messages) == ["q", "[Tool results: lookup: 42]", "q2", None, "43"]


def test_results_after_intervening_messages_are_collapsed_with_their_call() -> None:
    convo = [
        user("q"),
        calls(call("a", "slow"), call("b", "fast")),
        result("b", "quick"),
        user("hello?"),
        result("a", "slow answer"),
        user("q2"),
        calls(call("c", "x")),
        result("c", "y"),
    ]
    res = apply_compaction(convo, ToolResultCompactionStrategy())
    check_all(convo, res, systems=False)
    assert contents(res.messages) == [
        "q",
        "[Tool results: fast: quick; slow: slow answer]",
        "hello?",
        "q2",
        None,
        "y",
    ]
    assert validate_pairing(res.messages) == []


def test_message_objects_in_message_objects_out() -> None:
    msgs = to_messages(weather_transcript())
    res = apply_compaction(msgs, ToolResultCompactionStrategy())
    assert all(isinstance(m, Message) for m in res.messages)
    assert res.messages[2].text.startswith("[Tool results: ")
    assert res.messages[0] is msgs[0]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"keep_last_tool_call_groups": -1},
        {"minimum_preserved": -2},
        {"formatter": "fancy"},
        {"max_chars": 5},
    ],
)
def test_invalid_parameters(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ToolResultCompactionStrategy(**kwargs)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab \n\t"), max_size=400),
    n=st.integers(min_value=1, max_value=120),
)
def test_folding_a_prefix_equals_folding_everything(text: str, n: int) -> None:
    from compactlens.engine.strategies.tool_results import fold_whitespace_prefix

    assert fold_whitespace_prefix(text, n) == " ".join(text.split())[:n]


def test_collapsed_line_of_a_huge_spaced_output_is_unchanged_by_the_prefix_fold() -> None:
    from compactlens.engine import format_tool_results

    output = ("word \n\n   " * 50_000) + "tail"
    msgs = from_caller([calls(call("a", "dump")), result("a", output)]).messages
    line = format_tool_results(msgs)
    folded = " ".join(output.split())
    full = f"[Tool results: dump: {folded}]"
    room = 4096 - len("[Tool results: ") - len("]") - len("... [truncated]")
    assert len(full) > 4096
    assert line == "[Tool results: " + f"dump: {folded}"[:room] + "... [truncated]]"
