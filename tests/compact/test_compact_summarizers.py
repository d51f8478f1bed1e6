"""The summarizer seam: request building, the fake, caching and the extractive summarizer."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import ExtractiveSummarizer, Message, Summarizer, compact, estimate_tokens
from compactlens.formats import from_caller
from compactlens.model import SUMMARY_PREFIX, TextPart, message_from_dict, message_to_dict
from compactlens.summarizers import (
    SUMMARY_PROMPT,
    CachingSummarizer,
    FakeSummarizer,
    SummaryRequest,
    SummaryResponse,
    build_summary_request,
    summarize_async,
)
from compactlens.summarizers.extractive import HEADER, estimated_tokens


def req(text: str = "hello", **kw: Any) -> SummaryRequest:
    kw.setdefault("max_output_tokens", 100)
    return build_summary_request([Message(role="user", parts=(TextPart(text),))], **kw)


def test_build_summary_request_fields() -> None:
    r = req("hi", instructions="keep ids")
    assert r.prompt.startswith(SUMMARY_PROMPT)
    assert r.prompt.endswith("Additional preservation requirements:\nkeep ids")
    assert json.loads(r.transcript_json) == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]
    assert r.max_output_tokens == 100 and r.instructions == "keep ids"
    assert req("hi").prompt == SUMMARY_PROMPT
    with pytest.raises(TypeError):
        req("hi", instructions=3)
    with pytest.raises(ValueError):
        req("hi", max_output_tokens=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.prompt = "x"  # type: ignore[misc]


def test_cache_key_depends_on_every_input() -> None:
    base = req("a")
    assert base.cache_key() == req("a").cache_key()
    assert base.cache_key() != req("b").cache_key()
    assert base.cache_key() != req("a", max_output_tokens=99).cache_key()
    assert base.cache_key() != req("a", instructions="x").cache_key()


def test_canonical_message_round_trip(b: Any) -> None:
    msgs = [
        *from_caller([b.user("u"), b.call("c1"), b.result("c1", "out")]).messages,
        b.m_approval_request("ap", "c9"),
        b.m_approval_response("ap", False),
        b.m_media(),
        b.m_opaque(),
    ]
    for m in msgs:
        assert message_from_dict(message_to_dict(m)) == m


def test_fake_summarizer_records_and_shapes() -> None:
    fake = FakeSummarizer(text=lambda r: f"{len(r.messages)} messages", finish_reason="length")
    out = fake.summarize(req())
    assert out.text == "1 messages" and out.finish_reason == "length"
    assert fake.calls == [req()] and isinstance(fake, Summarizer)


def test_summarize_async_uses_a_thread_for_sync_summarizers() -> None:
    out = asyncio.run(summarize_async(FakeSummarizer(text="t"), req()))
    assert out.text == "t"


def test_caching_summarizer_hits_and_skips_failures() -> None:
    inner = FakeSummarizer(text="S1")
    cached = CachingSummarizer(inner)
    first = cached.summarize(req())
    second = cached.summarize(req())
    assert first.text == second.text == "S1"
    assert not first.cached and second.cached and second.usage == first.usage
    assert inner.call_count == 1 and cached.hits == 1
    assert cached.peek(req()) is not None and cached.peek(req("other")) is None

    failing = FakeSummarizer(text="partial", finish_reason="length")
    cached2 = CachingSummarizer(failing)
    cached2.summarize(req())
    cached2.summarize(req())
    assert failing.call_count == 2  # incomplete answers are not cached
    blank = FakeSummarizer(text="  ")
    cached3 = CachingSummarizer(blank)
    cached3.summarize(req())
    cached3.summarize(req())
    assert blank.call_count == 2


def test_caching_summarizer_async_and_shared_cache() -> None:
    store: dict[str, SummaryResponse] = {}
    inner = FakeSummarizer(text="S")
    one = CachingSummarizer(inner, cache=store)
    two = CachingSummarizer(inner, cache=store)
    asyncio.run(one.asummarize(req()))
    out = asyncio.run(two.asummarize(req()))
    assert out.cached and inner.call_count == 1
    with pytest.raises(TypeError):
        CachingSummarizer(object())  # type: ignore[arg-type]


# --------------------------------------------------------------------------- extractive


def agent_history(b: Any) -> list[dict[str, Any]]:
    return [
        b.sys(),
        b.user(
            "Please fix the failing test in tests/test_api.py; keep Python 3.11. Ticket PROJ-123."
        ),
        b.call("call_1", text="I will run the tests first because I need the traceback."),
        b.result("call_1", "FAILED tests/test_api.py::test_get - KeyError: user_id\n1 failed"),
        b.asst("The handler in src/api/handlers.py reads user_id; I decided to accept userId too."),
        b.user("Sounds good. Use https://docs.example.com/api for the spec."),
        b.asst("Next I will update CHANGELOG.md."),
        b.user("Now also bump the version to 2.4.1."),
        b.asst("ok"),
    ]


def test_extractive_summary_is_useful_and_labelled(b: Any) -> None:
    msgs = agent_history(b)
    result = compact(
        msgs, summarizer=ExtractiveSummarizer(), target_tokens=10_000, keep_last_messages=2
    )
    assert result.status == "compacted"
    assert result.model == "extractive"
    assert result.usage is None
    text = result.summary or ""
    assert text.startswith(HEADER) and "Extractive" in text
    for needle in (
        "Please fix the failing test",  # the user's requests
        "Use https://docs.example.com/api",
        "I decided to accept userId",  # decisions
        "read_file(path=",  # tool calls with their arguments
        "KeyError: user_id",  # key results / failures
        "PROJ-123",  # identifiers
        "src/api/handlers.py",
        "tests/test_api.py",
        "Next I will update CHANGELOG.md.",  # where it stopped
    ):
        assert needle in text, needle


def test_extractive_is_deterministic(b: Any) -> None:
    msgs = agent_history(b)
    s = ExtractiveSummarizer()
    r1 = compact(msgs, summarizer=s, target_tokens=10_000)
    r2 = compact(msgs, summarizer=ExtractiveSummarizer(), target_tokens=10_000)
    assert r1.summary == r2.summary


def test_extractive_folds_an_earlier_summary(b: Any) -> None:
    msgs = agent_history(b)
    first = compact(
        msgs, summarizer=ExtractiveSummarizer(), target_tokens=10_000, keep_last_messages=2
    )
    later = [
        *first.messages,
        b.user("and add a test"),
        b.asst("added"),
        b.user("thanks"),
        b.asst("np"),
    ]
    second = compact(
        later, summarizer=ExtractiveSummarizer(), target_tokens=10_000, keep_last_messages=2
    )
    text = second.summary or ""
    assert text.count(HEADER) == 1
    assert "Earlier summary:" in text and "PROJ-123" in text


@pytest.mark.parametrize("allowance", [1, 2, 5, 10, 25, 40, 80, 200, 2048])
def test_extractive_respects_its_allowance(b: Any, allowance: int) -> None:
    msgs = from_caller(agent_history(b)).messages
    request = build_summary_request(msgs[1:], max_output_tokens=allowance)
    text = ExtractiveSummarizer().summarize(request).text
    assert estimated_tokens(text) <= allowance
    if allowance >= 5:
        assert text.strip()


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=600))
def test_extractive_never_overflows_with_the_default_counter(target: int) -> None:
    history = [Message(role="system", parts=(TextPart("sys"),))]
    for i in range(12):
        role = "user" if i % 2 == 0 else "assistant"
        history.append(Message(role=role, parts=(TextPart(f"message {i} about src/f{i}.py " * 3),)))
    result = compact(history, summarizer=ExtractiveSummarizer(), target_tokens=target)
    assert result.reason != "summary-too-large"
    if result.status == "compacted":
        assert result.tokens.after <= target
        assert estimate_tokens(result.messages) == result.tokens.after


def test_extractive_summary_message_text(b: Any) -> None:
    result = compact(agent_history(b), summarizer=ExtractiveSummarizer(), target_tokens=10_000)
    assert result.messages[1]["content"] == SUMMARY_PREFIX + (result.summary or "")
