"""Rule 3: the replaced range, its protections and their reasons; property-based checks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactlens import Message, compact
from compactlens.compact import analyze_boundary
from compactlens.model import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    OpaquePart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compactlens.summarizers import FakeSummarizer


def kinds(analysis: Any, index: int) -> set[str]:
    return {r.kind for r in analysis.messages[index].reasons}


def test_plain_chat_range(b: Any) -> None:
    a = analyze_boundary(b.chat(10), 4)
    assert a.replaced_range == (1, 7)
    assert a.limit == 7
    assert [p.kind for p in a.binding] == ["keep-last"]
    assert [m.state for m in a.messages] == ["leading-system"] + ["summarized"] * 6 + ["kept"] * 4
    assert kinds(a, 7) == {"keep-last"}
    assert "protected suffix: the newest 4 messages kept verbatim (messages 7–10)" in a.explain()


def test_tool_pair_across_the_boundary_moves_end_earlier(b: Any) -> None:
    history = [
        b.sys(),
        b.user("u0"),
        b.asst("a0"),
        b.user("u1"),
        b.call("c1"),  # 4
        b.result("c1"),  # 5: the keep_last=2 cut at 5 would split c1
        b.asst("a2"),
    ]
    a = analyze_boundary(history, 2)
    assert a.limit == 5
    assert a.end == 4
    reasons = analysis_reasons(a, 4)
    assert any(r.kind == "tool-pair" and r.ref_id == "c1" and r.span == (4, 5) for r in reasons)
    result = compact(
        history, summarizer=FakeSummarizer(), target_tokens=10_000, keep_last_messages=2
    )
    assert result.replaced_range == (1, 4)
    assert result.messages[-3:] == history[4:]


def analysis_reasons(a: Any, index: int) -> tuple[Any, ...]:
    return a.messages[index].reasons


def test_parallel_calls_are_kept_together(b: Any) -> None:
    history = [
        b.sys(),
        b.user("go"),
        b.asst("ok"),
        b.call("p1", "p2", "p3"),  # 3
        b.result("p1"),
        b.result("p2"),
        b.result("p3"),  # 6
        b.asst("all read"),
    ]
    for keep in (2, 3, 4):  # every cut inside 4..6 splits one of the parallel pairs
        a = analyze_boundary(history, keep)
        assert a.end == 3, keep
    a = analyze_boundary(history, 1)
    assert a.end == 7  # after the whole group: fine
    assert analyze_boundary(history, 5).end == 3


def test_unresolved_call_near_the_end_pins_itself_and_after(b: Any) -> None:
    history = [
        b.sys(),
        b.user("u"),
        b.asst("a"),
        b.user("u2"),
        b.asst("a2"),
        b.call("open_1"),  # 5: never answered
        b.user("still there?"),
    ]
    a = analyze_boundary(history, 1)
    assert a.limit == 5 and a.end == 5
    assert any(p.kind == "unresolved-call" and p.ref_id == "open_1" for p in a.binding)
    assert "unresolved call id open_1 at 5" in a.explain()
    assert kinds(a, 6) >= {"keep-last", "unresolved-call"}


def test_unresolved_call_at_the_start_gives_no_safe_boundary(b: Any) -> None:
    history = [b.sys(), b.call("x"), *b.chat(6, system=False)]
    fake = FakeSummarizer()
    result = compact(history, summarizer=fake, target_tokens=10_000, keep_last_messages=1)
    assert result.status == "cannot-fit" and result.reason == "no-safe-boundary"
    assert "unresolved call id x at 1" in (result.detail or "")
    assert fake.call_count == 0
    assert all(a is c for a, c in zip(result.messages, history, strict=True))


def test_approvals_pair_and_pending(b: Any) -> None:
    t = b.m_text
    history = [
        t("user", "deploy please"),
        b.m_approval_request("ap1", "call_d"),  # 1
        b.m_approval_response("ap1"),  # 2
        t("assistant", "deployed"),
        t("user", "thanks"),
    ]
    assert analyze_boundary(history, 3).end == 1  # a cut at 2 splits ap1 (1..2)
    assert analyze_boundary(history, 2).end == 3
    pending = [t("user", "x"), t("assistant", "y"), b.m_approval_request("ap2"), t("user", "z")]
    a = analyze_boundary(pending, 1)
    assert a.end == 2
    assert any(p.kind == "pending-approval" and p.ref_id == "ap2" for p in a.pins)
    assert "unanswered approval request id ap2 at 2" in a.explain()


def test_later_system_message_pins(b: Any) -> None:
    history = [b.sys(), *b.chat(4, system=False), b.sys("new rules"), *b.chat(6, system=False)]
    a = analyze_boundary(history, 2)
    assert a.end == 5
    assert "later system message at 5" in a.explain()
    assert kinds(a, 5) == {"later-system"}
    assert kinds(a, 8) == {"later-system"}  # everything after is protected by it
    developer = [b.user("u"), b.asst("a"), {"role": "developer", "content": "d"}, b.user("v")]
    assert analyze_boundary(developer, 1).end == 2


def test_several_leading_system_messages_and_developer(b: Any) -> None:
    history = [b.sys("a"), {"role": "developer", "content": "b"}, *b.chat(6, system=False)]
    a = analyze_boundary(history, 2)
    assert a.start == 2 and a.end == 6
    only_system = [b.sys("a"), b.sys("b")]
    assert analyze_boundary(only_system, 1).end is None


def test_media_pins_with_and_without_count_tokens(b: Any) -> None:
    history = [b.sys(), *b.chat(4, system=False), b.image_user(), *b.chat(5, system=False)]
    a = analyze_boundary(history, 2)
    assert a.end == 5
    assert "media at 5" in a.explain()
    with pytest.raises(TypeError, match="count_tokens"):
        compact(history, summarizer=FakeSummarizer(), target_tokens=10_000, keep_last_messages=2)
    result = compact(
        history,
        summarizer=FakeSummarizer(),
        target_tokens=10_000,
        keep_last_messages=2,
        count_tokens=lambda msgs: 5 * len(msgs),
    )
    assert result.replaced_range == (1, 5)
    assert result.messages[2] is history[5]  # the media message itself is untouched


def test_media_first_gives_no_safe_boundary(b: Any) -> None:
    history = [b.image_user(), *b.chat(8, system=False)]
    result = compact(
        history, summarizer=FakeSummarizer(), target_tokens=10, count_tokens=lambda m: len(m)
    )
    assert result.reason == "no-safe-boundary"


def test_keep_last_covering_everything(b: Any) -> None:
    history = b.chat(4)
    a = analyze_boundary(history, 4)
    assert a.end is None
    assert analyze_boundary(history, 100).end is None
    assert analyze_boundary(history, 3).end == 2


def test_result_inside_an_assistant_message_pairs_itself() -> None:
    both = Message(
        role="assistant",
        parts=(ToolCallPart("srv", "web_search", "{}"), ToolResultPart("srv", "results")),
    )
    text = [Message(role="user", parts=(TextPart("u"),))] * 3
    a = analyze_boundary([*text, both, *text], 3)
    assert a.end == 4
    assert not a.pins or all(p.kind == "keep-last" for p in a.pins)


def test_orphan_result_does_not_block(b: Any) -> None:
    history = [b.user("u"), b.result("ghost"), b.asst("a"), b.user("v"), b.asst("w")]
    assert analyze_boundary(history, 1).end == 4


def test_analysis_to_dict_and_reinsert_flag(b: Any) -> None:
    history = [b.sys(), b.user("go"), b.asst("a"), b.call("c"), b.result("c"), b.asst("z")]
    a = analyze_boundary(history, 2)
    assert a.end == 3 and a.latest_user_index == 1 and a.reinsert_latest_user
    assert a.messages[1].reinserted
    data = a.to_dict()
    assert data["end"] == 3 and data["messages"][4]["state"] == "kept"
    assert any("tool pair c" in line for line in data["explain"])


# --------------------------------------------------------------------------- properties

BLOCKS = [
    "user",
    "user",
    "asst",
    "asst",
    "sys",
    "media",
    "opaque",
    "call1",
    "call2",
    "call3",
    "call_open",
    "result",
    "approve_req",
    "approve_resp",
]


def build(blocks: list[str], lead: int) -> list[Message]:
    out: list[Message] = [Message(role="system", parts=(TextPart("rules"),))] * lead
    pending_calls: list[str] = []
    pending_approvals: list[str] = []
    for n, kind in enumerate(blocks, start=1):
        if kind == "user":
            out.append(Message(role="user", parts=(TextPart(f"u{n}"),)))
        elif kind == "asst":
            out.append(Message(role="assistant", parts=(TextPart(f"a{n}"),)))
        elif kind == "sys":
            out.append(Message(role="system", parts=(TextPart(f"s{n}"),)))
        elif kind == "media":
            out.append(Message(role="user", parts=(MediaPart("image", url=f"u{n}"),)))
        elif kind == "opaque":
            out.append(Message(role="assistant", parts=(OpaquePart("p", "enc", f"{n}"),)))
        elif kind.startswith("call") and kind != "call_open":
            ids = [f"c{n}_{k}" for k in range(int(kind[-1]))]
            out.append(
                Message(role="assistant", parts=tuple(ToolCallPart(i, "t", "{}") for i in ids))
            )
            out.extend(Message(role="tool", parts=(ToolResultPart(i, "r"),)) for i in ids)
        elif kind == "call_open":
            cid = f"c{n}"
            out.append(Message(role="assistant", parts=(ToolCallPart(cid, "t", "{}"),)))
            pending_calls.append(cid)
        elif kind == "result":
            if pending_calls:
                cid = pending_calls.pop(0)
                out.append(Message(role="tool", parts=(ToolResultPart(cid, "late"),)))
            else:
                out.append(Message(role="user", parts=(TextPart(f"u{n}"),)))
        elif kind == "approve_req":
            aid = f"ap{n}"
            out.append(Message(role="assistant", parts=(ApprovalRequestPart(aid),)))
            pending_approvals.append(aid)
        elif kind == "approve_resp":
            if pending_approvals:
                aid = pending_approvals.pop(0)
                out.append(Message(role="user", parts=(ApprovalResponsePart(aid, True),)))
            else:
                out.append(Message(role="assistant", parts=(TextPart(f"a{n}"),)))
    return out


def reference_end(msgs: list[Message], keep: int) -> int | None:
    """Brute force over every candidate end, straight from the wording of rule 3."""
    n = len(msgs)
    start = 0
    while start < n and msgs[start].is_system:
        start += 1
    members: dict[str, list[int]] = {}
    for i, m in enumerate(msgs):
        for p in m.parts:
            if isinstance(p, ToolCallPart | ToolResultPart):
                key = "t:" + (p.id if isinstance(p, ToolCallPart) else p.call_id)
                members.setdefault(key, []).append(i)
            elif isinstance(p, ApprovalRequestPart | ApprovalResponsePart):
                members.setdefault("a:" + p.id, []).append(i)
    open_at = {
        idx[0]
        for key, idx in members.items()
        if len(idx) == 1
        and (key.startswith("a:") or any(isinstance(p, ToolCallPart) for p in msgs[idx[0]].parts))
    }
    for e in range(n - keep, start, -1):
        inside = range(start, e)
        if any(msgs[i].is_system or msgs[i].has_media or msgs[i].has_opaque for i in inside):
            continue
        if any(i in open_at for i in inside):
            continue
        if any(min(idx) < e <= max(idx) for idx in members.values()):
            continue
        return e
    return None


conversations = st.tuples(
    st.lists(st.sampled_from(BLOCKS), min_size=0, max_size=30),
    st.integers(min_value=0, max_value=2),
    st.integers(min_value=1, max_value=8),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations)
def test_boundary_matches_brute_force(case: tuple[list[str], int, int]) -> None:
    blocks, lead, keep = case
    msgs = build(blocks, lead)
    a = analyze_boundary(msgs, keep)
    assert a.end == reference_end(msgs, keep)
    if a.end is not None:
        assert a.end <= len(msgs) - keep  # keep_last_messages is a minimum
        assert all(not pair.straddles(a.end) for pair in a.pairs)
        assert all(m.state == "summarized" for m in a.messages[a.start : a.end])
    for row in a.messages:
        if row.state == "kept":
            assert row.reasons, row  # every kept message says why


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations)
def test_compact_never_splits_pairs(case: tuple[list[str], int, int]) -> None:
    blocks, lead, keep = case
    msgs = build(blocks, lead)
    result = compact(
        msgs,
        summarizer=FakeSummarizer(text="S"),
        target_tokens=10_000,
        keep_last_messages=keep,
        count_tokens=lambda m: len(m),
    )
    if result.status != "compacted":
        assert result.reason == "no-safe-boundary"
        return
    out = result.messages
    assert len([m for m in out if m.is_summary]) == 1
    start, end = result.replaced_range
    suffix = msgs[end:]
    assert out[-len(suffix) :] == suffix if suffix else True
    calls_out = {p.id for m in out for p in m.parts if isinstance(p, ToolCallPart)}
    calls_in = {p.id for m in msgs for p in m.parts if isinstance(p, ToolCallPart)}
    for m in out:
        for p in m.parts:
            if isinstance(p, ToolResultPart) and p.call_id in calls_in:
                assert p.call_id in calls_out  # no result lost its call
    for m in msgs[start:end]:
        for p in m.parts:
            if isinstance(p, ToolCallPart):
                assert p.id not in calls_out or any(
                    p.id == q.id for mm in suffix for q in mm.parts if isinstance(q, ToolCallPart)
                )
