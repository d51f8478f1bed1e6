"""A small OpenAI Chat Completions server on 127.0.0.1 for tests (stdlib only).

Start it with ``with ChatServer() as server:`` and point a client at
``server.base_url`` (``http://127.0.0.1:<port>/v1``). Each POST to
``/v1/chat/completions`` is recorded in ``server.requests`` (path, headers, JSON
body) and answered according to the next queued :class:`Reply` (``server.queue``)
or, when the queue is empty, ``server.default``. Modes:

* ``normal``: ``finish_reason: "stop"`` with ``text`` (or ``text_fn(body)``);
* ``length``: truncated answer with ``finish_reason: "length"``;
* ``empty``: an empty message (``content: ""``);
* ``tool_call``: a ``tool_calls`` answer with ``finish_reason: "tool_calls"``;
* ``http500`` / ``http429`` / ``status``: an error status with an OpenAI error body
  (``Retry-After: 0`` on 429 so a retrying client would retry at once);
* ``slow``: waits ``delay`` seconds (interrupted when the server stops) and then
  answers normally; ``server.disconnects`` counts clients that went away.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """How to answer one request."""

    mode: str = "normal"
    text: str = "A concise summary."
    text_fn: Callable[[dict[str, Any]], str] | None = None
    delay: float = 0.0
    status: int = 500
    prompt_tokens: int = 123
    completion_tokens: int = 45


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float = field(default_factory=time.monotonic)

    @property
    def messages(self) -> list[dict[str, Any]]:
        value = self.body.get("messages", [])
        return value if isinstance(value, list) else []


def _client_gone(handler: BaseHTTPRequestHandler) -> bool:
    """True once the client has closed its side (a readable socket with nothing to read)."""
    sock = handler.connection
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class ChatServer:
    """A threaded Chat Completions server with fault modes; see the module docstring."""

    def __init__(self, default: Reply | None = None) -> None:
        self.default = default or Reply()
        self.queue: list[Reply] = []
        self.requests: list[RecordedRequest] = []
        self.disconnects = 0
        self.completed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> ChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # silence
                return

            def do_POST(self) -> None:
                server._handle(self)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    server._send_json(self, 200, {"object": "list", "data": []})
                else:
                    server._send_json(self, 404, {"error": {"message": "not found"}})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self.queue.extend(replies)

    # ----------------------------------------------------------------- handling
    def _next_reply(self) -> Reply:
        with self._lock:
            return self.queue.pop(0) if self.queue else self.default

    @staticmethod
    def _send_json(
        handler: BaseHTTPRequestHandler,
        status: int,
        payload: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        if not handler.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(handler, 404, {"error": {"message": f"no route {handler.path}"}})
            return
        with self._lock:
            self.requests.append(
                RecordedRequest(
                    handler.path, {k.lower(): v for k, v in handler.headers.items()}, body
                )
            )
        reply = self._next_reply()
        try:
            self._answer(handler, reply, body)
            with self._lock:
                self.completed += 1
        except (BrokenPipeError, ConnectionResetError):
            with self._lock:
                self.disconnects += 1

    def _answer(self, handler: BaseHTTPRequestHandler, reply: Reply, body: dict[str, Any]) -> None:
        mode = reply.mode
        if mode == "slow" or reply.delay:
            deadline = time.monotonic() + reply.delay
            while time.monotonic() < deadline and not self._stop.is_set():
                if _client_gone(handler):
                    raise ConnectionResetError("the client closed the connection while waiting")
                time.sleep(0.01)
        if mode in ("http500", "http429", "status"):
            status = {"http500": 500, "http429": 429}.get(mode, reply.status)
            headers = {"Retry-After": "0", "retry-after-ms": "0"} if status == 429 else {}
            self._send_json(
                handler,
                status,
                {
                    "error": {
                        "message": f"simulated {status}",
                        "type": "rate_limit_error" if status == 429 else "server_error",
                        "code": None,
                    }
                },
                headers,
            )
            return
        text = reply.text_fn(body) if reply.text_fn else reply.text
        message: dict[str, Any] = {"role": "assistant", "content": text}
        finish = "stop"
        if mode == "length":
            finish = "length"
            message["content"] = text[: max(len(text) // 2, 1)]
        elif mode == "empty":
            message["content"] = ""
        elif mode == "tool_call":
            finish = "tool_calls"
            message["content"] = None
            message["tool_calls"] = [
                {
                    "id": "call_srv_1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                }
            ]
        payload = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "unknown"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            },
        }
        self._send_json(handler, 200, payload)


__all__ = ["ChatServer", "RecordedRequest", "Reply"]
