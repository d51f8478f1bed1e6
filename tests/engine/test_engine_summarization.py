"""SummarizationStrategy scenarios, with the deterministic FakeSummarizer."""

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
    result,
    snapshot,
    system,
    to_messages,
    tool_chat,
    user,
)

from compactlens import (
    Message,
    MessageIndex,
    SummarizationStrategy,
    apply_compaction,
    messages_exceed,
    tokens_exceed,
)
from compactlens.engine import GroupKind
from compactlens.engine.guards import NO_GUARDS
from compactlens.model import SUMMARY_PREFIX
from compactlens.summarizers import FakeSummarizer, SummaryRequest


def test_summary_replaces_older_groups_where_the_first_stood() -> None:
    convo = long_chat(6)  # system + 12 non-system groups
    fake = FakeSummarizer(text="They asked six questions.")
    res = apply_compaction(convo, SummarizationStrategy(fake, trigger=tokens_exceed(100)))
    check_all(convo, res)
    assert fake.call_count == 1
    # The newest 4 groups (default minimum_preserved) are kept, the 8 before are summarized.
    assert res.messages[0] is convo[0]
    assert res.messages[1] == {
        "role": "user",
        "content": SUMMARY_PREFIX + "They asked six questions.",
    }
    assert res.messages[2:] == convo[-4:]
    summarized = [d for d in res.decisions if d.action == "summarized"]
    assert [d.group_id for d in summarized] == list(range(1, 9))
    inserted = [d for d in res.decisions if d.action == "inserted"]
    assert len(inserted) == 1 and inserted[0].kind == "summary"
    assert inserted[0].position == 1
    # The summarizer saw exactly the summarized messages, in order.
    request = fake.calls[0]
    assert [m.text for m in request.messages] == [m["content"] for m in convo[1:9]]
    # The output indexes as a summary group.
    out = MessageIndex.build(res.projection)
    assert [g.kind for g in out.groups][:2] == [GroupKind.SYSTEM, GroupKind.SUMMARY]
    assert res.projection[1].is_summary


def test_minimum_preserved_groups_are_kept() -> None:
    convo = long_chat(6)
    for keep in (0, 1, 4, 7):
        fake = FakeSummarizer(text="s")
        res = apply_compaction(
            convo,
            SummarizationStrategy(fake, trigger=tokens_exceed(10), minimum_preserved=keep),
            guards=NO_GUARDS,
        )
        check_all(convo, res)
        tail = convo[len(convo) - keep :] if keep else []
        assert res.messages[2:] == tail
        assert len(fake.calls[0].messages) == 12 - keep


def test_tool_pairs_are_summarized_whole() -> None:
    convo = tool_chat(5)
    fake = FakeSummarizer(text="ran five tools")
    res = apply_compaction(
        convo, SummarizationStrategy(fake, trigger=tokens_exceed(50), minimum_preserved=2)
    )
    check_all(convo, res)
    sent = fake.calls[0].messages
    sent_calls = {c.id for m in sent for c in m.tool_calls}
    sent_results = {r.call_id for m in sent for r in m.tool_results}
    assert sent_calls == sent_results == {"c0", "c1", "c2", "c3"}
    assert "c0" in fake.calls[0].transcript_json


def test_input_is_capped_by_whole_groups() -> None:
    convo = long_chat(8, size=100)
    index = index_of(convo)
    group_tokens = index.groups[1].tokens
    cap = group_tokens * 3 + group_tokens // 2  # room for three groups, not four
    fake = FakeSummarizer(text="s")
    res = apply_compaction(
        convo,
        SummarizationStrategy(
            fake, trigger=tokens_exceed(10), max_input_tokens=cap, minimum_preserved=1
        ),
    )
    check_all(convo, res)
    assert len(fake.calls[0].messages) == 3
    assert res.messages[1]["content"] == SUMMARY_PREFIX + "s"
    assert res.messages[2:] == convo[4:]


def test_default_input_cap_is_8000_tokens() -> None:
    convo = long_chat(30, size=2000)  # each group is about 500 tokens
    fake = FakeSummarizer(text="s")
    apply_compaction(convo, SummarizationStrategy(fake, trigger=tokens_exceed(10)))
    sent = MessageIndex.build(fake.calls[0].messages)
    assert 7000 < sent.total_tokens <= 8000


def test_a_first_group_larger_than_the_cap_is_not_sent() -> None:
    convo = [user("x" * 4000), assistant("a"), user("b"), assistant("c")]
    fake = FakeSummarizer(text="s")
    res = apply_compaction(
        convo,
        SummarizationStrategy(
            fake, trigger=tokens_exceed(10), max_input_tokens=100, minimum_preserved=1
        ),
    )
    assert fake.call_count == 0
    assert res.status == "cannot-fit" and res.messages == convo


@pytest.mark.parametrize(
    ("fake", "words"),
    [
        (FakeSummarizer(raises=RuntimeError("model down")), "failed"),
        (FakeSummarizer(raises=TimeoutError()), "failed"),
        (FakeSummarizer(text=""), "empty"),
        (FakeSummarizer(text="  \n "), "empty"),
        (FakeSummarizer(text="half a summ", finish_reason="length"), "incomplete"),
        (FakeSummarizer(text="calling a tool", has_tool_call=True), "incomplete"),
    ],
)
def test_summarizer_failure_changes_nothing_and_is_reported(
    fake: FakeSummarizer, words: str
) -> None:
    convo = long_chat(6)
    before = snapshot(convo)
    res = apply_compaction(convo, SummarizationStrategy(fake, trigger=tokens_exceed(100)))
    assert_not_mutated(before, convo)
    check_all(convo, res)
    assert fake.call_count == 1
    assert res.status == "cannot-fit"
    assert res.reason and words in res.reason
    assert len(res.messages) == len(convo)
    assert all(a is b for a, b in zip(res.messages, convo, strict=True))
    assert res.tokens_after == res.tokens_before
    assert [e.event for e in res.events] == ["failed"]
    assert all(d.action == "kept" for d in res.decisions)


def test_summary_may_not_reach_the_target() -> None:
    convo = long_chat(6)
    res = apply_compaction(
        convo, SummarizationStrategy(FakeSummarizer(text="s"), trigger=tokens_exceed(5))
    )
    assert res.status == "cannot-fit"
    assert res.messages[1]["content"] == SUMMARY_PREFIX + "s"
    assert "target" in (res.reason or "")
    assert any(p.why == "replacement_text" for p in res.explanation.protected)


def test_system_messages_are_never_summarized() -> None:
    convo = [
        system("a"),
        user("u" * 200),
        system("mid rule"),
        assistant("x" * 200),
        user("q"),
        assistant("z"),
    ]
    fake = FakeSummarizer(text="s")
    res = apply_compaction(
        convo, SummarizationStrategy(fake, trigger=tokens_exceed(20), minimum_preserved=1)
    )
    check_all(convo, res)
    assert all(not m.is_system for m in fake.calls[0].messages)
    assert convo[0] in res.messages and convo[2] in res.messages


def test_resummarizing_folds_the_earlier_summary_in() -> None:
    convo = long_chat(6)
    strategy = SummarizationStrategy(
        FakeSummarizer(text="first summary"), trigger=tokens_exceed(100)
    )
    first = apply_compaction(convo, strategy)
    more = [*first.messages, user("u" * 300), assistant("a" * 300), user("w" * 300), assistant("b")]
    fake = FakeSummarizer(text="second summary")
    second = apply_compaction(more, SummarizationStrategy(fake, trigger=tokens_exceed(100)))
    check_all(more, second)
    assert fake.calls[0].messages[0].is_summary
    summaries = [m for m in second.projection if m.is_summary]
    assert [m.text for m in summaries] == [SUMMARY_PREFIX + "second summary"]


def test_instructions_reach_the_summarizer() -> None:
    fake = FakeSummarizer(text="s")
    apply_compaction(
        long_chat(6),
        SummarizationStrategy(fake, trigger=tokens_exceed(10), instructions="Keep file paths."),
    )
    request: SummaryRequest = fake.calls[0]
    assert "Keep file paths." in request.prompt
    assert request.max_output_tokens == 2048


def test_count_style_target_count_and_threshold() -> None:
    convo = long_chat(6)  # 12 non-system messages
    fake = FakeSummarizer(text="s")
    res = apply_compaction(
        convo, SummarizationStrategy(fake, target_count=4, threshold=2, minimum_preserved=0)
    )
    check_all(convo, res)
    assert res.status == "compacted"
    non_system = [m for m in res.messages if m["role"] != "system"]
    assert len(non_system) <= 6
    # Under the threshold nothing happens.
    short = long_chat(3)
    assert (
        apply_compaction(short, SummarizationStrategy(fake, target_count=4, threshold=2)).status
        == "unchanged"
    )


def test_message_trigger_and_message_objects() -> None:
    msgs = to_messages(long_chat(6))
    res = apply_compaction(
        msgs, SummarizationStrategy(FakeSummarizer(text="s"), trigger=messages_exceed(8))
    )
    check_all(msgs, res)
    assert res.status == "compacted"
    assert all(isinstance(m, Message) for m in res.messages)
    assert res.messages[0] is msgs[0]


def test_nothing_to_summarize() -> None:
    convo = [system("s" * 400), user("q"), assistant("a")]
    fake = FakeSummarizer(text="s")
    res = apply_compaction(convo, SummarizationStrategy(fake, trigger=tokens_exceed(10)))
    assert fake.call_count == 0
    assert res.status == "cannot-fit" and res.messages == convo
    res = apply_compaction([], SummarizationStrategy(fake, trigger=tokens_exceed(10)))
    assert res.status == "unchanged" and res.messages == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"trigger": tokens_exceed(5), "target_count": 3},
        {"trigger": tokens_exceed(5), "minimum_preserved": -1},
        {"trigger": tokens_exceed(5), "max_input_tokens": 0},
        {"target_count": 0},
    ],
)
def test_invalid_parameters(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SummarizationStrategy(FakeSummarizer(), **kwargs)  # type: ignore[arg-type]


def test_results_after_intervening_messages_stay_with_their_call() -> None:
    convo = [
        user("q " * 50),
        calls(call("a", "slow")),
        user("hello? " * 50),
        result("a", "late " * 50),
        assistant("got it " * 50),
        user("q2"),
        assistant("a2"),
    ]
    fake = FakeSummarizer(text="s")
    res = apply_compaction(
        convo, SummarizationStrategy(fake, trigger=tokens_exceed(50), minimum_preserved=2)
    )
    check_all(convo, res, systems=False)
    sent = fake.calls[0].messages
    assert {r.call_id for m in sent for r in m.tool_results} == {"a"}
    assert {c.id for m in sent for c in m.tool_calls} == {"a"}


@pytest.mark.parametrize("threshold", [None, 0, 3])
def test_count_style_keeps_target_count_newest_messages(threshold: int | None) -> None:
    convo = long_chat(6)  # 12 non-system messages
    fake = FakeSummarizer(text="s")
    strategy = SummarizationStrategy(fake, target_count=4, threshold=threshold, minimum_preserved=0)
    res = apply_compaction(convo, strategy)
    check_all(convo, res)
    assert res.status == "compacted", res.reason
    assert res.messages == [
        convo[0],
        {"role": "user", "content": SUMMARY_PREFIX + "s"},
        *convo[-4:],
    ]
