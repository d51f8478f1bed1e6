"""Issue 27, finding 8: the server posts only where it should (no SSRF) and says nothing
about what it reached.

Visitors' endpoints are off unless the operator turns them on; then the server refuses
loopback, private, link-local and other non-public addresses (after resolving the name,
at the moment it connects, to the address it checked) unless the operator lists them,
and every failure of a visitor's endpoint reads the same. All servers here are on
127.0.0.1, started by the tests.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpcore
import httpx
import openai
import pytest
from apptest_helpers import go, no_exceptions, plain, texts
from test_hosting import CONFIG, VISITOR_KEY, _lab
from test_security_summarizer import _chat_server_module

from compactlens.summarizers import FakeSummarizer, build_summary_request
from compactlens_inspector.lab.config import encode_config
from compactlens_inspector.serving.egress import (
    EgressRefused,
    PrivateHosts,
    checked_addresses,
    guarded_http_client,
    is_public,
)
from compactlens_inspector.serving.hosting import (
    OFFICIAL_BASE_URL,
    EndpointError,
    HostingConfigError,
    normalize_base_url,
    policy_from_settings,
    resolve_access,
)
from compactlens_inspector.serving.limits import ENDPOINT_FAILED, EndpointFailed, UniformFailures


@pytest.fixture
def server() -> Iterator[Any]:
    with _chat_server_module().ChatServer() as srv:
        yield srv


def _on(monkeypatch: pytest.MonkeyPatch, private_hosts: str | None = None) -> None:
    monkeypatch.setenv("COMPACTLENS_VISITOR_ENDPOINTS", "on")
    if private_hosts is not None:
        monkeypatch.setenv("COMPACTLENS_ALLOWED_PRIVATE_HOSTS", private_hosts)


# -- off by default ------------------------------------------------------------------------------


def test_visitor_endpoints_are_off_by_default(app, server) -> None:
    at = go(app(cfg=encode_config(CONFIG)).run(), "lab")
    at.radio(key="sb_summarizer").set_value("openai").run()
    no_exceptions(at)
    assert not any(w.key == "sb_base_url" for w in at.text_input)  # nothing to type
    assert list(at.selectbox(key="sb_base_url").options) == [OFFICIAL_BASE_URL]
    acc = resolve_access(
        policy_from_settings({}), server.base_url, "m", server_key=None, visitor_key=VISITOR_KEY
    )
    assert acc.problem.startswith("This server only calls the endpoints its operator allows")
    assert server.requests == []


# -- loopback and other private addresses --------------------------------------------------------


def test_a_loopback_visitor_endpoint_is_refused(app, server, monkeypatch) -> None:
    _on(monkeypatch)
    at = _lab(app, server.base_url)
    at.text_input(key="sb_api_key").set_value(VISITOR_KEY).run()  # their own key changes nothing
    no_exceptions(at)
    assert server.requests == []
    body = plain(texts(at))
    assert "does not call private, loopback or link-local addresses such as 127.0.0.1" in body
    assert "COMPACTLENS_ALLOWED_PRIVATE_HOSTS" in body


def test_a_name_that_resolves_to_loopback_is_refused_when_connecting(
    app, server, monkeypatch
) -> None:
    _on(monkeypatch)
    at = _lab(app, f"http://localhost:{server.port}/v1")
    no_exceptions(at)
    assert server.requests == []
    assert "summarizer failed: EndpointFailed" in plain(texts(at))


@pytest.mark.parametrize("listed", ["127.0.0.1", "127.0.0.0/8, ::1", "localhost"])
def test_hosts_the_operator_lists_are_reached(app, server, monkeypatch, listed: str) -> None:
    _on(monkeypatch, listed)
    host = "localhost" if listed == "localhost" else "127.0.0.1"
    at = _lab(app, f"http://{host}:{server.port}/v1")
    no_exceptions(at)
    assert len(server.requests) == 1
    assert "summarizer failed" not in plain(texts(at))


def test_an_operator_endpoint_needs_no_listing(app, server, monkeypatch) -> None:
    """The allowed base URLs are the operator's own choice: reached without the guard."""
    _on(monkeypatch)
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", server.base_url)
    _lab(app, server.base_url)
    assert len(server.requests) == 1


# -- one error for every failure ------------------------------------------------------------------


class _HtmlServer:
    """Answers every request with 200 and an HTML page (a router's login page, say)."""

    def __init__(self) -> None:
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                outer.requests += 1
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = b"<html><title>Router login</title></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> _HtmlServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _seen(at: Any, base_url: str) -> str:
    """What the visitor sees, with what differs by design masked: the URL they typed and
    the server's usage counters (the earlier cases' requests count there)."""
    text = plain(texts(at)).replace(base_url, "<url>")
    return re.sub(r"\([\d,]+( and [\d,]+)? used\)", "(<n> used)", text)


def test_every_failure_of_a_visitor_endpoint_reads_the_same(app, server, monkeypatch) -> None:
    _on(monkeypatch, "127.0.0.1")
    server.default = _chat_server_module().Reply(mode="http500")
    seen = {}
    with _HtmlServer() as html:
        cases = {
            "connection refused": f"http://127.0.0.1:{_closed_port()}/v1",
            "HTTP 500": server.base_url,
            "text/html": html.base_url,
        }
        for cause, url in cases.items():
            at = _lab(app, url)
            no_exceptions(at)
            seen[cause] = _seen(at, url)
        assert html.requests == 1
    assert len(server.requests) == 1
    assert "summarizer failed: EndpointFailed" in seen["HTTP 500"]
    assert seen["connection refused"] == seen["HTTP 500"] == seen["text/html"]
    for word in ("HTTP", "html", "refused", "Connection", "InternalServerError", "simulated"):
        assert word not in seen["HTTP 500"]


@pytest.mark.parametrize(
    "error",
    [
        openai.APIConnectionError(request=httpx.Request("POST", "http://x")),
        openai.APITimeoutError(request=httpx.Request("POST", "http://x")),
        openai.InternalServerError(
            "simulated 500",
            response=httpx.Response(500, request=httpx.Request("POST", "http://x")),
            body=None,
        ),
        ValueError("the server's answer is not a Chat Completions JSON body"),
    ],
)
def test_uniform_failures_hide_the_cause_and_log_it(error: Exception, caplog) -> None:
    inner = FakeSummarizer(raises=error)
    wrapped = UniformFailures(inner, "http://10.0.0.7/v1")
    request = build_summary_request([], max_output_tokens=10)
    with pytest.raises(EndpointFailed) as raised:
        wrapped.summarize(request)
    assert str(raised.value) == ENDPOINT_FAILED and raised.value.__cause__ is None
    assert type(error).__name__ in caplog.text and "http://10.0.0.7/v1" in caplog.text


# -- the guard itself ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "0.1.2.3",
        "100.64.0.1",
        "224.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd12:3456::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "2002:7f00:1::1",
        "64:ff9b::a9fe:a9fe",
    ],
)
def test_non_public_addresses(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))
    assert not PrivateHosts().allows("example.com", ipaddress.ip_address(address))


def test_public_addresses_and_listed_ones() -> None:
    for address in ("8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"):
        assert is_public(ipaddress.ip_address(address))
    listed = PrivateHosts.parse(["10.0.0.0/8", "gpu-box.internal", "::1"])
    assert listed.allows("anything", ipaddress.ip_address("10.9.9.9"))
    assert listed.allows("gpu-box.internal.", ipaddress.ip_address("192.168.0.5"))
    assert listed.allows("x", ipaddress.ip_address("::1"))
    assert not listed.allows("x", ipaddress.ip_address("127.0.0.1"))
    with pytest.raises(HostingConfigError, match="COMPACTLENS_ALLOWED_PRIVATE_HOSTS"):
        policy_from_settings({"COMPACTLENS_ALLOWED_PRIVATE_HOSTS": "not a host!"})


@pytest.mark.parametrize(
    "url",
    ["http://2130706433/v1", "http://0x7f.1/v1", "http://127.1/v1", "http://0177.0.0.1/v1"],
)
def test_numeric_spellings_of_an_address_are_refused(url: str) -> None:
    with pytest.raises(EndpointError, match="four decimal numbers"):
        normalize_base_url(url)


@pytest.mark.parametrize("host", ["2130706433", "0x7f.1", "127.1", "localhost"])
def test_the_resolver_sees_through_numeric_names(host: str) -> None:
    with pytest.raises(EgressRefused, match=re.escape("127.0.0.1")):
        checked_addresses(host, 80, PrivateHosts())


def test_one_non_public_record_is_enough_to_refuse(monkeypatch) -> None:
    answers = [("8.8.8.8", 80), ("10.0.0.1", 80)]
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", a_) for a_ in answers],
    )
    with pytest.raises(EgressRefused, match=re.escape("10.0.0.1")):
        checked_addresses("mixed.example", 80, PrivateHosts())


def test_the_connection_goes_to_the_address_that_was_checked(server, monkeypatch) -> None:
    """DNS rebinding: the name is public when checked and loopback a moment later. The
    guard resolves once and connects to what it checked, never to the later answer."""
    calls: list[str] = []

    def rebinding(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        calls.append(host)
        address = "93.184.216.34" if len(calls) == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    connected: list[str] = []

    def connect(self: Any, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        connected.append(host)
        raise httpcore.ConnectError("no network in tests")

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    monkeypatch.setattr(httpcore.SyncBackend, "connect_tcp", connect)
    client = guarded_http_client(PrivateHosts(), timeout=5.0)
    with pytest.raises(httpx.ConnectError):
        client.post(f"http://rebind.example:{server.port}/v1/chat/completions", json={})
    assert calls == ["rebind.example"] and connected == ["93.184.216.34"]
    assert server.requests == []


def test_the_guarded_client_ignores_proxies_and_redirects(monkeypatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    client = guarded_http_client(PrivateHosts(), timeout=5.0)
    assert not client.trust_env and not client.follow_redirects
    with pytest.raises(httpx.ConnectError, match=re.escape("127.0.0.1")):
        client.get("http://localhost:9/")
