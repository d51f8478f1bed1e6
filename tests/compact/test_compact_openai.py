"""OpenAISummarizer through the real ``openai`` client over HTTP to a 127.0.0.1 server."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import openai
import pytest
from chat_server import ChatServer, Reply

from compactlens import CancelToken, OpenAISummarizer, acompact, compact
from compactlens.compact import CompactionCancelled
from compactlens.formats import from_caller
from compactlens.model import SUMMARY_PREFIX, message_to_dict
from compactlens.summarizers import CachingSummarizer, Usage

BIG = 100_000


def summarizer(server: ChatServer, **kw: Any) -> OpenAISummarizer:
    kw.setdefault("timeout", 5.0)
    return OpenAISummarizer("gpt-test-mini", base_url=server.base_url, api_key="sk-test", **kw)


def history(b: Any) -> list[dict[str, Any]]:
    return [
        b.sys(),
        b.user("Fix the bug in src/app.py, ticket BUG-42."),
        b.call("call_1", text="Reading the file."),
        b.result("call_1", "def main():\n    return 1/0"),
        b.asst("Division by zero at line 2; I will guard it."),
        b.user("Also keep Python 3.11 support."),
        b.asst("Noted."),
        b.user("Go ahead."),
        b.asst("Working on it."),
    ]


def test_normal_answer_and_what_the_server_received(b: Any, chat_server: ChatServer) -> None:
    chat_server.default = Reply(text="Summary: fix ZeroDivisionError in src/app.py (BUG-42).")
    msgs = history(b)
    result = compact(msgs, summarizer=summarizer(chat_server), target_tokens=BIG)
    assert result.status == "compacted"
    assert result.summary == "Summary: fix ZeroDivisionError in src/app.py (BUG-42)."
    assert result.usage == Usage(123, 45, 168)
    assert result.model == "gpt-test-mini"
    assert result.messages[1]["content"].startswith(SUMMARY_PREFIX)

    assert len(chat_server.requests) == 1
    sent = chat_server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.body["model"] == "gpt-test-mini"
    assert sent.body["max_tokens"] == 2048
    system, user = sent.messages
    assert system["role"] == "system"
    assert "not instructions" in system["content"]
    assert user["role"] == "user"
    start, end = result.replaced_range
    transcript = user["content"].split("<conversation>\n", 1)[1].rsplit("\n</conversation>", 1)[0]
    expected = [message_to_dict(m) for m in from_caller(msgs).messages[start:end]]
    assert json.loads(transcript) == expected
    assert "src/app.py" in transcript and "call_1" in transcript


def test_max_tokens_follows_the_remaining_budget(b: Any, chat_server: ChatServer) -> None:
    msgs = history(b)
    probe = compact(msgs, summarizer=summarizer(chat_server), target_tokens=1)
    assert probe.reason == "protected-history"
    assert chat_server.requests == []  # no model call
    empty = probe.candidate_tokens
    assert isinstance(empty, int)
    chat_server.default = Reply(text="ok")
    compact(msgs, summarizer=summarizer(chat_server), target_tokens=empty + 50)
    assert chat_server.requests[0].body["max_tokens"] == 50
    compact(
        msgs,
        summarizer=summarizer(chat_server, max_tokens_param="max_completion_tokens"),
        target_tokens=empty + 60,
    )
    body = chat_server.requests[1].body
    assert body["max_completion_tokens"] == 60 and "max_tokens" not in body


def test_instructions_reach_the_system_prompt(b: Any, chat_server: ChatServer) -> None:
    compact(
        history(b),
        summarizer=summarizer(chat_server),
        target_tokens=BIG,
        instructions="Preserve every ticket id.",
    )
    system = chat_server.requests[0].messages[0]["content"]
    assert system.endswith("Additional preservation requirements:\nPreserve every ticket id.")


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("length", "incomplete-summary"),
        ("empty", "empty-summary"),
        ("tool_call", "incomplete-summary"),
    ],
)
def test_rejected_answers(b: Any, chat_server: ChatServer, mode: str, reason: str) -> None:
    chat_server.default = Reply(mode=mode, text="A long summary that was cut off")
    msgs = history(b)
    result = compact(msgs, summarizer=summarizer(chat_server), target_tokens=BIG)
    assert result.status == "cannot-fit" and result.reason == reason
    assert result.usage == Usage(123, 45, 168)  # reported even though rejected
    assert all(a is c for a, c in zip(result.messages, msgs, strict=True))
    assert len(chat_server.requests) == 1


def test_finish_reason_and_tool_call_are_reported(chat_server: ChatServer, b: Any) -> None:
    chat_server.enqueue(Reply(mode="length"), Reply(mode="tool_call"))
    s = summarizer(chat_server)
    first = compact(history(b), summarizer=s, target_tokens=BIG)
    second = compact(history(b), summarizer=s, target_tokens=BIG)
    assert first.finish_reason == "length"
    assert second.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("mode", "error"),
    [("http500", openai.InternalServerError), ("http429", openai.RateLimitError)],
)
def test_http_errors_propagate_with_exactly_one_request(
    b: Any, chat_server: ChatServer, mode: str, error: type[Exception]
) -> None:
    chat_server.default = Reply(mode=mode)
    with pytest.raises(error) as info:
        compact(history(b), summarizer=summarizer(chat_server), target_tokens=BIG)
    assert info.value.status_code == (500 if mode == "http500" else 429)  # type: ignore[attr-defined]
    time.sleep(0.3)  # a retrying client would have retried by now (Retry-After: 0)
    assert len(chat_server.requests) == 1


def test_a_given_client_is_used_without_retries(b: Any, chat_server: ChatServer) -> None:
    client = openai.OpenAI(api_key="sk-own", base_url=chat_server.base_url, max_retries=5)
    chat_server.default = Reply(mode="http500")
    with pytest.raises(openai.InternalServerError):
        compact(history(b), summarizer=OpenAISummarizer("m", client=client), target_tokens=BIG)
    time.sleep(0.3)
    assert len(chat_server.requests) == 1
    assert chat_server.requests[0].headers["authorization"] == "Bearer sk-own"


def test_timeout_raises_the_client_error(b: Any, chat_server: ChatServer) -> None:
    chat_server.default = Reply(mode="slow", delay=3)
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        compact(history(b), summarizer=summarizer(chat_server, timeout=0.3), target_tokens=BIG)
    assert time.monotonic() - started < 2.5
    assert len(chat_server.requests) == 1


def _when_received(server: ChatServer, limit: float = 20.0) -> None:
    """Wait until ``server`` has the request (the cancel must come while it is in flight,
    not before it was sent, which a fixed delay cannot promise on a busy machine)."""
    deadline = time.monotonic() + limit
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)


def test_cancel_during_a_slow_sync_call(b: Any, chat_server: ChatServer) -> None:
    chat_server.default = Reply(mode="slow", delay=6)
    token = CancelToken()
    cancelled_at: list[float] = []

    def cancel_in_flight() -> None:
        _when_received(chat_server)
        cancelled_at.append(time.monotonic())
        token.cancel()

    threading.Thread(target=cancel_in_flight, daemon=True).start()
    with pytest.raises(CompactionCancelled):
        compact(history(b), summarizer=summarizer(chat_server), target_tokens=BIG, cancel=token)
    assert time.monotonic() - cancelled_at[0] < 3.0  # returned on cancel, not on the answer
    assert len(chat_server.requests) == 1


def test_cancel_during_a_slow_async_call_closes_the_request(
    b: Any, chat_server: ChatServer
) -> None:
    # The answer would take 30 s; the cancel comes once the server has the request. Wide
    # margins, so a busy machine cannot blur "returned on cancel" and "waited for it".
    chat_server.default = Reply(mode="slow", delay=30.0)

    async def main() -> None:
        token = CancelToken()

        async def cancel_in_flight() -> None:
            deadline = time.monotonic() + 20
            while not chat_server.requests and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            token.cancel()

        canceller = asyncio.ensure_future(cancel_in_flight())
        with pytest.raises(CompactionCancelled):
            await acompact(
                history(b), summarizer=summarizer(chat_server), target_tokens=BIG, cancel=token
            )
        await canceller

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < 15.0  # did not wait for the server's answer
    deadline = time.monotonic() + 10
    while chat_server.disconnects + chat_server.completed == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(chat_server.requests) == 1
    assert chat_server.disconnects == 1  # the client went away mid-request


def test_async_normal_answer(b: Any, chat_server: ChatServer) -> None:
    chat_server.default = Reply(text="async summary")
    result = asyncio.run(
        acompact(history(b), summarizer=summarizer(chat_server), target_tokens=BIG)
    )
    assert result.summary == "async summary"
    assert len(chat_server.requests) == 1


def test_cached_preview_and_real_run_give_the_same_text(b: Any, chat_server: ChatServer) -> None:
    counter = {"n": 0}

    def text_fn(body: dict[str, Any]) -> str:
        counter["n"] += 1
        return f"summary #{counter['n']}"

    chat_server.default = Reply(text_fn=text_fn)
    cached = CachingSummarizer(summarizer(chat_server))
    preview = compact(history(b), summarizer=cached, target_tokens=BIG)
    real = compact(history(b), summarizer=cached, target_tokens=BIG)
    assert preview.summary == real.summary == "summary #1"
    assert len(chat_server.requests) == 1
    assert cached.hits == 1 and cached.misses == 1
    other = compact(history(b), summarizer=cached, target_tokens=BIG, instructions="x")
    assert other.summary == "summary #2"  # a different request is not a hit


def test_openai_is_imported_lazily() -> None:
    import subprocess
    import sys

    code = (
        "import sys, compactlens.compact, compactlens.summarizers, compactlens.session;"
        "print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
