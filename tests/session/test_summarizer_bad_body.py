"""A summarizer server on 127.0.0.1 that answers 200 with a body that is not JSON: the
documented client error (``openai.APIResponseValidationError``, an ``openai.APIError``),
sync and async, never ``json.JSONDecodeError`` or a silent empty summary; a session
reports it as a ``failed`` compaction with that error type."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from compactlens import CompactionSession, messages_exceed  # noqa: E402
from compactlens.summarizers import OpenAISummarizer, SummaryRequest  # noqa: E402

BODIES = {
    "truncated JSON": ("application/json", b'{"id": "chatcmpl-1", "choices": [{"mess'),
    "HTML error page": ("text/html", b"<html><body>502 Bad Gateway</body></html>"),
    "not JSON at all": ("application/json", b"{nope}"),
}


class BadBodyServer:
    def __init__(self, content_type: str, body: bytes) -> None:
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture(params=sorted(BODIES))
def server(request: pytest.FixtureRequest) -> Iterator[BadBodyServer]:
    srv = BadBodyServer(*BODIES[request.param])
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()


def summary_request() -> SummaryRequest:
    return SummaryRequest(
        messages=(), prompt="Summarize.", transcript_json="[]", max_output_tokens=50
    )


def test_sync_and_async_raise_the_client_error(server: BadBodyServer) -> None:
    summarizer = OpenAISummarizer("m", base_url=server.base_url, timeout=30)
    with pytest.raises(openai.APIResponseValidationError) as info:
        summarizer.summarize(summary_request())
    assert not isinstance(info.value, json.JSONDecodeError)
    assert isinstance(info.value, openai.APIError)
    assert "is not a Chat Completions JSON body" in str(info.value)
    assert info.value.status_code == 200

    async def run() -> None:
        await summarizer.asummarize(summary_request())

    with pytest.raises(openai.APIResponseValidationError):
        asyncio.run(run())
    assert server.requests == 2  # one request each, never retried


def test_a_session_reports_it_as_a_failed_compaction(server: BadBodyServer) -> None:
    events: list[Any] = []
    session = CompactionSession(
        triggers=[messages_exceed(4)],
        target_tokens=100_000,
        summarizer=OpenAISummarizer("m", base_url=server.base_url, timeout=30),
        keep_last_messages=2,
        on_event=events.append,
        on_error="return",
    )
    history = [{"role": ("user", "assistant")[i % 2], "content": f"m{i}"} for i in range(8)]
    assert session.prepare(history) == history
    assert [(e.type, getattr(e, "error_type", None)) for e in events] == [
        ("started", None),
        ("failed", "APIResponseValidationError"),
    ]
