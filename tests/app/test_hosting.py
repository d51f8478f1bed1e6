"""Keys stay with their endpoints, through the real app (AppTest, the official ``openai``
client) against Chat Completions servers on 127.0.0.1 that record the headers they get.

The server's key is in the environment in every test; one server is the operator's
allowed endpoint, the other a visitor's. Visitors' endpoints are off by default and
never reach a loopback address unless the operator lists it (issue 27, finding 8): the
tests that use one turn them on and list 127.0.0.1 (:func:`_visitor_endpoints_on`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from apptest_helpers import go, no_exceptions, plain, texts
from test_security_summarizer import _chat_server_module, set_base_url

from compactlens_inspector.lab.config import LabConfig, default_stage, encode_config

SERVER_KEY = "sk-server-DO-NOT-LEAK-0123456789abcdef"
VISITOR_KEY = "sk-visitor-OWN-KEY-fedcba9876543210"
CONFIG = LabConfig(stages=({**default_stage("summarization", 1500), "minimum_preserved": 3},))


@pytest.fixture
def servers() -> Iterator[tuple[Any, Any]]:
    module = _chat_server_module()
    with module.ChatServer() as allowed, module.ChatServer() as other:
        yield allowed, other


def _visitor_endpoints_on(monkeypatch: Any) -> None:
    """What an operator sets to let visitors name endpoints on this machine."""
    monkeypatch.setenv("COMPACTLENS_VISITOR_ENDPOINTS", "on")
    monkeypatch.setenv("COMPACTLENS_ALLOWED_PRIVATE_HOSTS", "127.0.0.1")


def _lab(app: Any, base_url: str, model: str = "test-model") -> Any:
    at = go(app(cfg=encode_config(CONFIG)).run(), "lab")
    at.radio(key="sb_summarizer").set_value("openai").run()
    set_base_url(at, base_url)
    at.text_input(key="sb_model").set_value(model).run()
    no_exceptions(at)
    return at


def _shown(at: Any) -> str:
    """Everything a visitor sees or can copy: texts, the URL, widget values (the key
    field too: it is emptied once the key is stored)."""
    parts = [texts(at), json.dumps(dict(at.query_params))]
    parts += [str(w.value) for w in at.text_input]
    parts += [str(w.value) for w in at.text_area]
    return "\n".join(parts)


def _keys_sent(server: Any) -> set[str]:
    return {r.headers.get("authorization", "") for r in server.requests}


def test_another_endpoint_never_gets_the_server_key(app, servers, monkeypatch) -> None:
    allowed, other = servers
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    _visitor_endpoints_on(monkeypatch)
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", allowed.base_url)
    at = _lab(app, other.base_url)
    assert other.requests == [] and allowed.requests == []
    body = plain(texts(at))
    assert "only sent to the endpoints the operator allows" in body
    assert "summarizer failed" in body
    assert at.text_input(key="sb_api_key").proto.type == 1  # PASSWORD
    # With their own key the visitor's request goes to their endpoint, with their key.
    at.text_input(key="sb_api_key").set_value(VISITOR_KEY).run()
    no_exceptions(at)
    assert len(other.requests) == 1 and allowed.requests == []
    assert _keys_sent(other) == {f"Bearer {VISITOR_KEY}"}
    assert "Key in use: yours (this session only)" in plain(texts(at))
    assert at.text_input(key="sb_api_key").value == ""
    for key in (SERVER_KEY, VISITOR_KEY):
        assert key not in _shown(at)
    # Neither key is in the export (snippet, JSON) or the URL.
    at = go(at, "export")
    no_exceptions(at)
    exported = _shown(at) + "\n".join(str(c.value) for c in at.code)
    assert SERVER_KEY not in exported and VISITOR_KEY not in exported


def test_an_allowed_endpoint_gets_the_server_key_in_any_spelling(app, servers, monkeypatch):
    allowed, other = servers
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("COMPACTLENS_MODELS", "test-model")
    spelled = allowed.base_url.replace("http://", "HTTP://") + "/"
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", f"{spelled}, https://api.openai.com/v1")
    at = _lab(app, allowed.base_url)
    assert _keys_sent(allowed) == {f"Bearer {SERVER_KEY}"} and other.requests == []
    assert "Key in use: the server's (environment (OPENAI_API_KEY))" in plain(texts(at))
    assert SERVER_KEY not in _shown(at)


def test_userinfo_tricks_reach_no_endpoint(app, servers, monkeypatch) -> None:
    allowed, other = servers
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    _visitor_endpoints_on(monkeypatch)
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", allowed.base_url)
    trick = f"http://127.0.0.1:{allowed.port}@127.0.0.1:{other.port}/v1"
    at = _lab(app, trick)
    assert allowed.requests == [] and other.requests == []
    assert "may not contain a user name or password" in plain(texts(at))


def test_a_visitor_key_run_is_not_shared_with_other_sessions(app, servers, monkeypatch) -> None:
    _, other = servers
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    _visitor_endpoints_on(monkeypatch)
    first = _lab(app, other.base_url, model="shared-model")
    first.text_input(key="sb_api_key").set_value(VISITOR_KEY).run()
    assert len(other.requests) == 1
    # Another visitor, same endpoint and configuration, no key: refused, not served the
    # first visitor's paid run.
    second = _lab(app, other.base_url, model="shared-model")
    assert len(other.requests) == 1
    body = plain(texts(second))
    assert "Enter your own API key" in body and "summarizer failed" in body


def test_the_session_limit_stops_new_calls_but_not_the_cache(app, servers, monkeypatch) -> None:
    allowed, _ = servers
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("COMPACTLENS_MODELS", "model-a model-b")
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", allowed.base_url)
    monkeypatch.setenv("COMPACTLENS_SUMMARY_RPM", "1")
    at = _lab(app, allowed.base_url, model="model-a")
    assert len(allowed.requests) == 1
    at.text_input(key="sb_model").set_value("model-b").run()  # a new summary is needed
    no_exceptions(at)
    assert len(allowed.requests) == 1
    body = plain(texts(at))
    assert "Summary limit reached: at most 1 summary request a minute in this session" in body
    at.text_input(key="sb_model").set_value("model-a").run()  # answered from the cache
    assert len(allowed.requests) == 1
    assert "Summary limit reached" not in plain(texts(at))
    assert "compacted" in plain(texts(at)) or "cannot-fit" in plain(texts(at))


def test_the_policy_and_key_can_come_from_streamlit_secrets(app, servers, monkeypatch) -> None:
    allowed, other = servers
    _visitor_endpoints_on(monkeypatch)
    at = app(cfg=encode_config(CONFIG))
    at.secrets["OPENAI_API_KEY"] = SERVER_KEY
    at.secrets["COMPACTLENS_ALLOWED_BASE_URLS"] = [allowed.base_url]
    at = go(at.run(), "lab")
    at.radio(key="sb_summarizer").set_value("openai").run()
    at.text_input(key="sb_base_url").set_value(other.base_url).run()
    assert other.requests == [] and allowed.requests == []
    at.text_input(key="sb_base_url").set_value(allowed.base_url).run()
    no_exceptions(at)
    assert _keys_sent(allowed) == {f"Bearer {SERVER_KEY}"} and other.requests == []
    assert "Key in use: the server's (Streamlit secrets)" in plain(texts(at))


def test_a_bad_operator_setting_is_named_and_locks_the_key(app, servers, monkeypatch) -> None:
    allowed, _ = servers
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", allowed.base_url)
    monkeypatch.setenv("COMPACTLENS_SUMMARY_RPM", "none")
    _visitor_endpoints_on(monkeypatch)  # a locked policy ignores this too
    at = go(app(cfg=encode_config(CONFIG)).run(), "lab")
    at.radio(key="sb_summarizer").set_value("openai").run()
    no_exceptions(at)
    # Locked: no base URL to type, and the allowed endpoint is not among the choices.
    assert allowed.base_url not in at.selectbox(key="sb_base_url").options
    assert allowed.requests == []
    body = plain(texts(at))
    assert "COMPACTLENS_SUMMARY_RPM must be a whole number" in body
    assert "The server's API key is not used until this is fixed" in body


def test_with_visitor_endpoints_off_only_allowed_ones_can_be_picked(
    app, servers, monkeypatch
) -> None:
    allowed, other = servers
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", f"{allowed.base_url} {other.base_url}")
    monkeypatch.setenv("COMPACTLENS_VISITOR_ENDPOINTS", "off")
    at = go(app(cfg=encode_config(CONFIG)).run(), "lab")
    at.radio(key="sb_summarizer").set_value("openai").run()
    box = at.selectbox(key="sb_base_url")
    assert list(box.options) == [allowed.base_url, other.base_url]
    box.set_value(other.base_url).run()
    no_exceptions(at)
    # The first allowed endpoint was the selector's default, then the other one was picked.
    assert _keys_sent(allowed) == _keys_sent(other) == {f"Bearer {SERVER_KEY}"}


OPERATOR_SETTINGS = {
    "OPENAI_ORG_ID": "org-operator-PRIVATE",
    "OPENAI_PROJECT_ID": "proj-operator-PRIVATE",
    "OPENAI_CUSTOM_HEADERS": "Authorization: Bearer sk-header-PRIVATE\nX-Gateway-Key: gw-PRIVATE",
}


def _private_headers(server: Any) -> list[str]:
    return [
        f"{name}: {value}"
        for request in server.requests
        for name, value in request.headers.items()
        if "PRIVATE" in value
    ]


def test_operator_openai_settings_never_reach_a_visitor_endpoint(app, servers, monkeypatch):
    """Issue 27, finding 2: the openai client reads OPENAI_ORG_ID, OPENAI_PROJECT_ID and
    OPENAI_CUSTOM_HEADERS by itself; a visitor's endpoint must get none of them (and the
    custom Authorization line must not replace the visitor's key), while the operator's
    allowed endpoint, called with the server's key, still gets them."""
    allowed, other = servers
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("COMPACTLENS_MODELS", "test-model")
    _visitor_endpoints_on(monkeypatch)
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", allowed.base_url)
    for name, value in OPERATOR_SETTINGS.items():
        monkeypatch.setenv(name, value)
    at = _lab(app, other.base_url)
    at.text_input(key="sb_api_key").set_value(VISITOR_KEY).run()
    no_exceptions(at)
    assert len(other.requests) == 1
    assert _private_headers(other) == []
    assert _keys_sent(other) == {f"Bearer {VISITOR_KEY}"}
    # With the server's key on the operator's endpoint the operator's settings apply.
    at = _lab(app, allowed.base_url)
    assert len(allowed.requests) == 1
    assert "openai-organization: org-operator-PRIVATE" in _private_headers(allowed)
