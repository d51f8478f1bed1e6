"""SelectiveToolCallCompactionStrategy scenarios: drop older tool-call groups whole."""

from __future__ import annotations

import pytest
from strategies_helpers import (
    assistant,
    call,
    calls,
    check_all,
    index_of,
    reasoning,
    result,
    system,
    tool_chat,
    user,
    weather_transcript,
)

from compactlens import (
    SelectiveToolCallCompactionStrategy,
    apply_compaction,
    tokens_exceed,
    validate_pairing,
)


def test_drops_every_older_tool_call_group_and_nothing_else() -> None:
    convo = weather_transcript()
    res = apply_compaction(convo, SelectiveToolCallCompactionStrategy())
    check_all(convo, res)
    assert res.status == "compacted"
    assert res.messages == [convo[0], convo[1], *convo[5:]]
    assert all(a is b for a, b in zip(res.messages, [convo[0], convo[1], *convo[5:]], strict=True))


@pytest.mark.parametrize("keep", [0, 1, 2, 4, 9])
def test_keep_last_tool_call_groups(keep: int) -> None:
    convo = tool_chat(4)
    res = apply_compaction(
        convo, SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=keep)
    )
    check_all(convo, res)
    kept_calls = [m for m in res.messages if m.get("tool_calls")]
    assert len(kept_calls) == min(keep, 4)
    if keep:
        assert res.messages[-1 - 2 * min(keep, 4) : -1] == convo[-1 - 2 * min(keep, 4) : -1]
    assert [m for m in res.messages if m["role"] in ("system", "user")] == convo[:2]
    assert res.messages[-1] is convo[-1]


def test_trigger_style_stops_at_target_and_protects_newest() -> None:
    convo = tool_chat(6, size=400)
    index = index_of(convo)
    limit = index.total_tokens - 150
    res = apply_compaction(
        convo,
        SelectiveToolCallCompactionStrategy(
            trigger=tokens_exceed(limit), keep_last_tool_call_groups=0
        ),
    )
    check_all(convo, res)
    assert res.status == "compacted" and res.tokens_after <= limit
    excluded = [d.group_id for d in res.decisions if d.action == "excluded"]
    assert excluded == [g.id for g in index.groups if g.kind.value == "tool_call"][:2]

    res = apply_compaction(
        convo,
        SelectiveToolCallCompactionStrategy(
            trigger=tokens_exceed(1), keep_last_tool_call_groups=0, minimum_preserved=2
        ),
    )
    assert res.status == "cannot-fit"
    # The newest two non-system groups: the last tool-call group and the final answer.
    assert res.messages[-3:] == convo[-3:]
    assert res.messages[:2] == convo[:2]


def test_awkward_pairings_stay_consistent() -> None:
    convo = [
        system("s"),
        user("q"),
        reasoning("plan"),
        calls(call("a", "slow"), call("b", "fast")),
        result("b", "fast result"),
        user("still there?"),
        result("a", "slow result"),
        calls(call("x", "first")),
        calls(call("x", "second")),
        result("x", "for second"),
        result("x", "for first"),
        result("ghost", "orphan"),
        calls(call("never", "finish")),
        assistant("bye"),
    ]
    before = {(p.kind, p.call_id) for p in validate_pairing(convo)}
    for keep in (0, 1, 2):
        res = apply_compaction(
            convo, SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=keep)
        )
        check_all(convo, res)
        after = {(p.kind, p.call_id) for p in validate_pairing(res.messages)}
        assert after <= before
    res = apply_compaction(convo, SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=0))
    assert [m["content"] for m in res.messages] == ["s", "q", "still there?", "bye"]
    assert validate_pairing(res.messages) == []


def test_no_tool_calls_means_unchanged() -> None:
    convo = [system("s"), user("q"), assistant("a")]
    res = apply_compaction(convo, SelectiveToolCallCompactionStrategy())
    assert res.status == "unchanged" and res.messages == convo
    res = apply_compaction([], SelectiveToolCallCompactionStrategy())
    assert res.status == "unchanged" and res.messages == []


@pytest.mark.parametrize(
    "kwargs",
    [{"keep_last_tool_call_groups": -1}, {"minimum_preserved": -1}, {"minimum_preserved": 0.5}],
)
def test_invalid_parameters(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SelectiveToolCallCompactionStrategy(**kwargs)  # type: ignore[arg-type]
