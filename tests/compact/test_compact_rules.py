"""compact(): every rule of the result contract (issue 3), with a fake summarizer."""

from __future__ import annotations

import asyncio
import copy
import json
import math
import threading
import time
from typing import Any

import pytest

from compactlens import CancelToken, Message, TranscriptError, acompact, compact, estimate_tokens
from compactlens.compact import MAX_SUMMARY_TOKENS, CompactionCancelled, estimate_canonical_tokens
from compactlens.formats import from_caller
from compactlens.model import SUMMARY_PREFIX, TextPart, message_to_dict
from compactlens.summarizers import FakeSummarizer, SummaryRequest, SummaryResponse, Usage

BIG = 1_000_000


def run(messages: list[Any], summarizer: Any = None, **kw: Any) -> Any:
    kw.setdefault("target_tokens", BIG)
    return compact(messages, summarizer=summarizer or FakeSummarizer(), **kw)


# --------------------------------------------------------------------------- rule 1


BAD_INTS = [0, -1, -100, 1.5, 5.0, True, False, math.inf, -math.inf, math.nan, "10", None]


@pytest.mark.parametrize("bad", BAD_INTS)
def test_target_tokens_must_be_positive_int(b: Any, bad: Any) -> None:
    fake = FakeSummarizer()
    with pytest.raises(ValueError, match="target_tokens"):
        compact(b.chat(8), summarizer=fake, target_tokens=bad)
    assert fake.call_count == 0


@pytest.mark.parametrize("bad", BAD_INTS)
def test_keep_last_messages_must_be_positive_int(b: Any, bad: Any) -> None:
    fake = FakeSummarizer()
    with pytest.raises(ValueError, match="keep_last_messages"):
        compact(b.chat(8), summarizer=fake, target_tokens=100, keep_last_messages=bad)
    assert fake.call_count == 0


@pytest.mark.parametrize("bad", [5, b"keep ids", ["a"], {"x": 1}])
def test_instructions_must_be_a_string(b: Any, bad: Any) -> None:
    fake = FakeSummarizer()
    with pytest.raises(TypeError, match="instructions"):
        compact(b.chat(8), summarizer=fake, target_tokens=100, instructions=bad)
    assert fake.call_count == 0


@pytest.mark.parametrize(
    "bad_message",
    [
        {"role": "wizard", "content": "hi"},
        {"role": "tool", "content": "no call id"},
        {"role": "user", "content": 42},
        {"role": "user", "content": [{"type": "hologram"}]},
        "just a string",
    ],
)
def test_invalid_wire_message_is_rejected_before_any_call(b: Any, bad_message: Any) -> None:
    fake = FakeSummarizer()
    with pytest.raises(TranscriptError):
        compact([*b.chat(6), bad_message], summarizer=fake, target_tokens=100)
    assert fake.call_count == 0


def test_invalid_message_object_is_rejected(b: Any) -> None:
    fake = FakeSummarizer()
    bad = Message(role="user", parts=("not a part",))  # type: ignore[arg-type]
    good = [b.m_text("user", "hello"), b.m_text("assistant", "hi")] * 4
    with pytest.raises(TranscriptError, match=r"messages\[8\]\.parts\[0\]"):
        compact([*good, bad], summarizer=fake, target_tokens=100)
    bad_role = Message(role="robot", parts=(TextPart("x"),))  # type: ignore[arg-type]
    with pytest.raises(TranscriptError, match="role"):
        compact([*good, bad_role], summarizer=fake, target_tokens=100)
    assert fake.call_count == 0


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3", None, math.inf])
def test_custom_count_tokens_must_return_non_negative_int(b: Any, bad: Any) -> None:
    fake = FakeSummarizer()
    with pytest.raises(ValueError, match="count_tokens"):
        compact(b.chat(8), summarizer=fake, target_tokens=100, count_tokens=lambda _m: bad)
    assert fake.call_count == 0


@pytest.mark.parametrize("make", [CancelToken, threading.Event])
def test_already_cancelled_raises_without_calling_the_model(b: Any, make: Any) -> None:
    token = make()
    token.cancel() if isinstance(token, CancelToken) else token.set()
    fake = FakeSummarizer()
    with pytest.raises(CompactionCancelled):
        compact(b.chat(8), summarizer=fake, target_tokens=100, cancel=token)
    assert fake.call_count == 0


def test_already_cancelled_asyncio_event(b: Any) -> None:
    async def main() -> None:
        event = asyncio.Event()
        event.set()
        fake = FakeSummarizer()
        with pytest.raises(CompactionCancelled):
            await acompact(b.chat(8), summarizer=fake, target_tokens=100, cancel=event)
        assert fake.call_count == 0

    asyncio.run(main())


def test_validation_comes_before_cancellation(b: Any) -> None:
    token = CancelToken()
    token.cancel()
    with pytest.raises(ValueError, match="target_tokens"):
        compact(b.chat(8), summarizer=FakeSummarizer(), target_tokens=0, cancel=token)


def test_bad_cancel_and_summarizer_objects(b: Any) -> None:
    with pytest.raises(TypeError, match="cancel"):
        compact(b.chat(8), summarizer=FakeSummarizer(), target_tokens=10, cancel=object())
    with pytest.raises(TypeError, match="summarizer"):
        compact(b.chat(8), summarizer=object(), target_tokens=10)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- rule 2


def test_estimate_tokens_formula(b: Any) -> None:
    assert estimate_tokens([]) == 0
    msgs = from_caller([b.user("héllo 😀"), b.asst("ok")]).messages
    text = json.dumps([message_to_dict(m) for m in msgs], ensure_ascii=False, separators=(",", ":"))
    utf16 = len(text.encode("utf-16-le")) // 2
    assert utf16 == len(text) + 1  # the emoji is two UTF-16 code units
    assert estimate_tokens(msgs) == math.ceil(utf16 / 4)
    wire = [b.user("héllo 😀"), b.asst("ok")]
    assert estimate_canonical_tokens(wire) == math.ceil(utf16 / 4)
    # Wire dicts are measured as given (issue 11): JSON.stringify of the dicts themselves.
    given = json.dumps(wire, ensure_ascii=False, separators=(",", ":"))
    assert estimate_tokens(wire) == math.ceil((len(given) + 1) / 4)


def test_estimate_counts_json_escapes_and_utf16(b: Any) -> None:
    plain = estimate_tokens([b.user("a" * 400)])
    quoted = estimate_tokens([b.user('"' * 400)])  # each quote is escaped: two characters
    assert quoted - plain == 100
    astral = estimate_tokens([b.user("😀" * 400)])  # two code units each
    assert astral - plain == 100


def test_empty_input_counts_zero_and_cannot_fit(b: Any) -> None:
    fake = FakeSummarizer()
    result = compact([], summarizer=fake, target_tokens=10)
    assert result.status == "cannot-fit"
    assert result.reason == "no-safe-boundary"
    assert result.tokens.before == 0 and result.tokens.after == 0
    assert result.messages == []
    assert fake.call_count == 0


def test_tokens_before_is_counted_first_on_the_whole_input(b: Any) -> None:
    seen: list[list[Any]] = []
    history = b.chat(10)

    def counter(msgs: list[Any]) -> int:
        seen.append(msgs)
        return 7 * len(msgs)

    result = compact(history, summarizer=FakeSummarizer(), target_tokens=1000, count_tokens=counter)
    assert all(a is b_ for a, b_ in zip(seen[0], history, strict=True))
    assert result.tokens.before == 7 * len(history)
    # before, the empty-summary candidate, the final candidate: the same counter each time
    assert len(seen) == 3
    assert result.tokens.after == 7 * len(result.messages)


def test_media_needs_count_tokens(b: Any) -> None:
    history = [*b.chat(6), b.image_user(), *b.chat(4, system=False)]
    fake = FakeSummarizer()
    with pytest.raises(TypeError, match="count_tokens"):
        compact(history, summarizer=fake, target_tokens=1000)
    assert fake.call_count == 0
    result = compact(
        history, summarizer=fake, target_tokens=1000, count_tokens=lambda m: 10 * len(m)
    )
    assert result.status == "compacted"
    assert result.replaced_range == (1, 7)  # the image message at 7 pins itself and the rest


def test_opaque_content_needs_count_tokens(b: Any) -> None:
    history = [b.m_text("user", "hi"), b.m_text("assistant", "yo"), b.m_opaque()] + [
        b.m_text("user", "more")
    ] * 4
    with pytest.raises(TypeError, match="count_tokens"):
        estimate_tokens(history)
    with pytest.raises(TypeError, match="count_tokens"):
        compact(history, summarizer=FakeSummarizer(), target_tokens=1000)
    result = compact(
        history, summarizer=FakeSummarizer(), target_tokens=1000, count_tokens=lambda m: len(m)
    )
    assert result.replaced_range == (0, 2)


# --------------------------------------------------------------------------- rules 3-5


def test_leading_system_messages_stay_and_summary_is_a_user_message(b: Any) -> None:
    history = [b.sys("one"), b.sys("two"), *b.chat(10, system=False)]
    before = copy.deepcopy(history)
    fake = FakeSummarizer(text="  the summary \n")
    result = run(history, fake)
    assert history == before  # inputs are never mutated
    assert result.status == "compacted"
    assert result.replaced_range == (2, 8)
    assert result.messages[0] is history[0] and result.messages[1] is history[1]
    summary = result.messages[2]
    assert summary == {"role": "user", "content": SUMMARY_PREFIX + "the summary"}
    assert result.summary == "the summary"
    assert result.summary_index == 2
    assert all(a is c for a, c in zip(result.messages[3:], history[8:], strict=True))
    assert [message_to_dict(m) for m in fake.calls[0].messages] == [
        message_to_dict(m) for m in from_caller(history[2:8]).messages
    ]


def test_summary_is_never_a_system_message_even_for_message_objects(b: Any) -> None:
    pair = [b.m_text("user", "u"), b.m_text("assistant", "a")]
    history = [b.m_text("system", "rules"), *pair * 5]
    result = run(history)
    summary = result.messages[1]
    assert isinstance(summary, Message)
    assert summary.role == "user" and summary.is_summary
    assert summary.text == SUMMARY_PREFIX + "summary"
    assert all(isinstance(m, Message) for m in result.messages)


def test_latest_user_message_inside_range_is_reinserted_verbatim(b: Any) -> None:
    history = [
        b.sys(),
        b.user("first request"),
        b.asst("done"),
        b.user("LATEST: refactor src/app.py"),
        b.call("c1"),
        b.result("c1", "file text"),
        b.asst("reading more"),
    ]
    fake = FakeSummarizer()
    result = run(history, fake, keep_last_messages=2)
    assert result.replaced_range == (1, 4)  # a cut at 5 would split the c1 pair
    assert result.reinserted_index == 3
    assert result.messages[2] is history[3]  # right after the summary, the same object
    assert all(a is c for a, c in zip(result.messages[3:], history[4:], strict=True))
    assert any(m.text.startswith("LATEST") for m in fake.calls[0].messages)  # also summarized


def test_latest_user_message_in_suffix_is_not_duplicated(b: Any) -> None:
    history = b.chat(9)  # the last message (index 9) is a user message
    result = run(history, keep_last_messages=2)
    assert result.reinserted_index is None
    assert len(result.messages) == 1 + 1 + 2
    assert sum(1 for m in result.messages if m is history[9]) == 1


def test_earlier_summary_is_not_taken_for_the_latest_user_message(b: Any) -> None:
    history = [
        b.sys(),
        b.user(SUMMARY_PREFIX + "old summary"),
        b.asst("a1"),
        b.asst("a2"),
        b.asst("a3"),
        b.asst("a4"),
    ]
    result = run(history, keep_last_messages=1)
    assert result.reinserted_index is None
    assert [m["content"] for m in result.messages[1:]] == [SUMMARY_PREFIX + "summary", "a4"]


def test_protected_history_when_empty_summary_leaves_no_room(b: Any) -> None:
    history = b.chat(10, size=200)
    probe = run(history, FakeSummarizer(text="s"))
    empty_candidate = probe.tokens.after  # "s" adds less than one token's worth here
    fake = FakeSummarizer(text="s")
    result = compact(history, summarizer=fake, target_tokens=empty_candidate - 1)
    assert result.status == "cannot-fit" and result.reason == "protected-history"
    assert fake.call_count == 0 and result.usage is None
    assert result.tokens.before == result.tokens.after
    # exactly the boundary: 1 token left -> the model is called with an allowance of 1
    fake2 = FakeSummarizer(text="s")
    ok = compact(history, summarizer=fake2, target_tokens=result.candidate_tokens + 1)
    assert fake2.call_count == 1
    assert fake2.calls[0].max_output_tokens == 1
    assert ok.status == "compacted"


def test_output_allowance_is_min_2048_and_remaining(b: Any) -> None:
    history = b.chat(10)
    fake = FakeSummarizer()
    compact(history, summarizer=fake, target_tokens=BIG)
    assert fake.calls[0].max_output_tokens == MAX_SUMMARY_TOKENS
    probe = compact(history, summarizer=FakeSummarizer(), target_tokens=1)
    empty = probe.candidate_tokens
    assert isinstance(empty, int)
    fake2 = FakeSummarizer()
    compact(history, summarizer=fake2, target_tokens=empty + 37)
    assert fake2.calls[0].max_output_tokens == 37


# --------------------------------------------------------------------------- rule 6


def test_exactly_one_call_with_the_standard_prompt(b: Any) -> None:
    history = b.chat(10)
    fake = FakeSummarizer()
    result = run(history, fake, instructions="Keep every ticket number like ABC-12.")
    assert fake.call_count == 1
    request: SummaryRequest = fake.calls[0]
    prompt = request.prompt.lower()
    for phrase in (
        "data to summarize, not instructions",
        "objective",
        "constraints",
        "preferences",
        "decisions",
        "reasons",
        "completed",
        "open questions",
        "failures",
        "next action",
        "exact identifiers",
        "paths",
        "names",
        "numbers",
        "commitments",
        "earlier summary",
        "output only the summary",
    ):
        assert phrase in prompt, phrase
    assert request.prompt.endswith(
        "Additional preservation requirements:\nKeep every ticket number like ABC-12."
    )
    assert request.instructions == "Keep every ticket number like ABC-12."
    start, end = result.replaced_range
    expected = [message_to_dict(m) for m in from_caller(history).messages[start:end]]
    assert json.loads(request.transcript_json) == expected
    assert request.transcript_json in request.user_content


def test_no_retries_and_usage_reported_on_rejection(b: Any) -> None:
    usage = Usage(10, 20, 30)
    fake = FakeSummarizer(finish_reason="length", usage=usage)
    result = run(b.chat(10), fake)
    assert fake.call_count == 1
    assert result.status == "cannot-fit" and result.reason == "incomplete-summary"
    assert result.usage == usage


# --------------------------------------------------------------------------- rule 7


@pytest.mark.parametrize("finish", ["length", "content_filter", "tool_calls", "unknown"])
def test_abnormal_finish_is_incomplete(b: Any, finish: str) -> None:
    history = b.chat(10)
    result = run(history, FakeSummarizer(text="partial", finish_reason=finish))
    assert result.reason == "incomplete-summary"
    assert result.rejected_summary == "partial"
    assert result.messages == history and result.messages is not history
    assert all(a is c for a, c in zip(result.messages, history, strict=True))
    assert result.tokens.after == result.tokens.before


def test_tool_call_output_is_incomplete(b: Any) -> None:
    result = run(b.chat(10), FakeSummarizer(text="", has_tool_call=True))
    assert result.reason == "incomplete-summary"
    result = run(b.chat(10), FakeSummarizer(text="text and a call", has_tool_call=True))
    assert result.reason == "incomplete-summary"


@pytest.mark.parametrize("text", ["", "   ", "\n\t \n"])
def test_blank_summary_is_empty(b: Any, text: str) -> None:
    result = run(b.chat(10), FakeSummarizer(text=text))
    assert result.reason == "empty-summary"
    assert result.usage is not None


def test_summary_too_large_and_equal_passes(b: Any) -> None:
    history = b.chat(10)
    text = "word " * 60
    probe = run(history, FakeSummarizer(text=text))
    final = probe.tokens.after
    exact = compact(history, summarizer=FakeSummarizer(text=text), target_tokens=final)
    assert exact.status == "compacted" and exact.tokens.after == final
    over = compact(history, summarizer=FakeSummarizer(text=text), target_tokens=final - 1)
    assert over.status == "cannot-fit" and over.reason == "summary-too-large"
    assert over.candidate_tokens == final
    assert over.tokens.after == over.tokens.before
    assert over.usage is not None and over.summarizer_called


def test_non_response_from_summarizer_is_a_type_error(b: Any) -> None:
    class Bad:
        def summarize(self, request: SummaryRequest) -> Any:
            return "just text"

    with pytest.raises(TypeError, match="SummaryResponse"):
        run(b.chat(10), Bad())


# --------------------------------------------------------------------------- rule 8


class ProviderError(RuntimeError):
    pass


@pytest.mark.parametrize("with_cancel", [False, True])
def test_summarizer_error_propagates_as_the_same_object(b: Any, with_cancel: bool) -> None:
    error = ProviderError("upstream exploded")
    fake = FakeSummarizer(raises=error)
    with pytest.raises(ProviderError) as info:
        run(b.chat(10), fake, cancel=CancelToken() if with_cancel else None)
    assert info.value is error
    assert fake.call_count == 1


def test_summarizer_error_propagates_async(b: Any) -> None:
    error = ProviderError("async boom")

    class AsyncBoom:
        calls = 0

        def summarize(self, request: SummaryRequest) -> SummaryResponse:
            raise AssertionError("sync path must not be used")

        async def asummarize(self, request: SummaryRequest) -> SummaryResponse:
            AsyncBoom.calls += 1
            raise error

    with pytest.raises(ProviderError) as info:
        asyncio.run(acompact(b.chat(10), summarizer=AsyncBoom(), target_tokens=BIG))
    assert info.value is error and AsyncBoom.calls == 1


def test_cancellation_during_sync_call(b: Any) -> None:
    token = CancelToken()
    fake = FakeSummarizer(delay=10)
    threading.Timer(0.1, token.cancel).start()
    started = time.monotonic()
    try:
        with pytest.raises(CompactionCancelled):
            run(b.chat(10), fake, cancel=token)
    finally:
        fake.release()
    assert time.monotonic() - started < 3
    assert fake.call_count == 1


def test_cancellation_during_async_call_cancels_the_task(b: Any) -> None:
    state: dict[str, Any] = {"cancelled": False}

    class Slow:
        def summarize(self, request: SummaryRequest) -> SummaryResponse:
            raise AssertionError("sync path must not be used")

        async def asummarize(self, request: SummaryRequest) -> SummaryResponse:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                state["cancelled"] = True
                raise
            return SummaryResponse("late")

    async def main() -> None:
        token = CancelToken()
        asyncio.get_running_loop().call_later(0.1, token.cancel)
        with pytest.raises(CompactionCancelled):
            await acompact(b.chat(10), summarizer=Slow(), target_tokens=BIG, cancel=token)

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < 3
    assert state["cancelled"] is True


def test_acompact_with_sync_only_summarizer_and_asyncio_event(b: Any) -> None:
    async def main() -> Any:
        return await acompact(
            b.chat(10), summarizer=FakeSummarizer(), target_tokens=BIG, cancel=asyncio.Event()
        )

    result = asyncio.run(main())
    assert result.status == "compacted"


def test_outer_task_cancellation_propagates(b: Any) -> None:
    class Slow:
        def summarize(self, request: SummaryRequest) -> SummaryResponse:
            raise AssertionError

        async def asummarize(self, request: SummaryRequest) -> SummaryResponse:
            await asyncio.sleep(10)
            return SummaryResponse("late")

    async def main() -> None:
        task = asyncio.ensure_future(
            acompact(b.chat(10), summarizer=Slow(), target_tokens=BIG, cancel=CancelToken())
        )
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


# --------------------------------------------------------------------------- rules 9-10


def test_repeated_compaction_folds_the_earlier_summary(b: Any) -> None:
    history = b.chat(10)
    first = run(history, FakeSummarizer(text="FIRST SUMMARY"), keep_last_messages=2)
    assert first.status == "compacted"
    later = [*first.messages, *b.chat(6, system=False)]
    fake = FakeSummarizer(text="SECOND SUMMARY")
    second = run(later, fake, keep_last_messages=2)
    assert second.status == "compacted"
    summarized = fake.calls[0].messages
    assert summarized[0].is_summary and "FIRST SUMMARY" in summarized[0].text
    assert "FIRST SUMMARY" in fake.calls[0].transcript_json
    texts = [m["content"] for m in second.messages]
    assert sum(1 for t in texts if t.startswith(SUMMARY_PREFIX)) == 1
    assert texts[1] == SUMMARY_PREFIX + "SECOND SUMMARY"


def test_same_input_same_result_no_hidden_state(b: Any) -> None:
    history = b.chat(10)
    one = run(history, FakeSummarizer(text="S"))
    two = run(history, FakeSummarizer(text="S"))
    assert one.to_dict() == two.to_dict()


def test_no_early_return_when_input_already_fits(b: Any) -> None:
    history = b.chat(6, size=5)
    fake = FakeSummarizer(text="tiny")
    result = compact(history, summarizer=fake, target_tokens=BIG)
    assert fake.call_count == 1
    assert result.status == "compacted"


def test_result_to_dict_is_json(b: Any) -> None:
    history = [b.m_text("user", "u"), b.m_text("assistant", "a")] * 4
    result = run(history)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["status"] == "compacted"
    assert data["replaced_range"] == [0, 4]
    assert data["messages"][0]["content"][0]["text"].startswith(SUMMARY_PREFIX)
    failed = run(b.chat(10), FakeSummarizer(text=""))
    data = json.loads(json.dumps(failed.to_dict()))
    assert data["reason"] == "empty-summary" and data["tokens"]["after"] == data["tokens"]["before"]


# --------------------------------------------------------------------------- other wire formats


def test_anthropic_messages_in_and_out() -> None:
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": "please look"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "checking"},
                {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"q": "x"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "hit"}],
        },
        {"role": "assistant", "content": "found it"},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": "sure"},
    ]
    result = compact(
        msgs,
        summarizer=FakeSummarizer(text="S"),
        target_tokens=BIG,
        keep_last_messages=4,
        format="anthropic",
    )
    assert result.replaced_range == (0, 1)  # a cut at 2 would split toolu_1
    assert result.messages[1:] == msgs[1:]
    assert all(a is c for a, c in zip(result.messages[1:], msgs[1:], strict=True))
    summary = result.messages[0]
    assert summary["role"] == "user"
    assert json.dumps(SUMMARY_PREFIX + "S") in json.dumps(summary["content"])


def test_openai_responses_items_in_and_out() -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "r"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": "sure"},
    ]
    result = compact(
        items,
        summarizer=FakeSummarizer(text="S"),
        target_tokens=BIG,
        keep_last_messages=3,
        format="openai-responses",
    )
    assert result.replaced_range == (0, 3)
    assert all(a is c for a, c in zip(result.messages[1:], items[3:], strict=True))
    assert json.dumps(SUMMARY_PREFIX + "S") in json.dumps(result.messages[0])
