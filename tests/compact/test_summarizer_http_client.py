"""``OpenAISummarizer(http_client=...)``: the synchronous client it builds sends through
the given ``httpx`` client (a hosted inspector passes one that guards where it connects),
and such a summarizer has no asynchronous client of its own."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from compactlens import OpenAISummarizer
from compactlens.summarizers import build_summary_request

COMPLETION = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


def test_requests_go_through_the_given_http_client() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=COMPLETION)

    client = httpx.Client(transport=httpx.MockTransport(answer))
    summarizer = OpenAISummarizer(
        "m", base_url="http://llm.example/v1", api_key="k", environment=False, http_client=client
    )
    response = summarizer.summarize(build_summary_request([], max_output_tokens=5))
    assert response.text == "ok"
    assert [str(r.url) for r in seen] == ["http://llm.example/v1/chat/completions"]
    assert json.loads(seen[0].content)["model"] == "m"
    with pytest.raises(RuntimeError, match="needs an async_client"):
        asyncio.run(summarizer.asummarize(build_summary_request([], max_output_tokens=5)))
