"""The OpenAI-compatible summarizer through the app (against a 127.0.0.1 test server), and
the API key: used, but never displayed, put in the URL, or exported."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from apptest_helpers import REPO_ROOT, go, no_exceptions, plain, texts

from compactlens_inspector.lab.config import LabConfig, default_stage, encode_config, preset

KEY = "sk-test-DO-NOT-SHOW-0123456789abcdef"


def _chat_server_module() -> ModuleType:
    path = REPO_ROOT / "tests" / "compact" / "chat_server.py"
    if not path.is_file():
        pytest.skip(f"the local chat completions test server is missing at {path}")
    name = "compactlens_app_tests_chat_server"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def server() -> Iterator[Any]:
    module = _chat_server_module()
    with module.ChatServer() as srv:
        yield srv


def _everything(at: Any) -> str:
    parts = [texts(at), json.dumps(dict(at.query_params))]
    parts += [str(w.value) for w in at.text_input] + [str(w.value) for w in at.text_area]
    return "\n".join(parts)


def _choose_openai(at: Any) -> Any:
    at.radio(key="sb_summarizer").set_value("openai").run()
    return at


def set_base_url(at: Any, base_url: str) -> None:
    """Type ``base_url`` (visitors' endpoints on), or pick it from the operator's allowed
    ones (off, the default); the caller runs the app."""
    if any(w.key == "sb_base_url" for w in at.text_input):
        at.text_input(key="sb_base_url").set_value(base_url)
    else:
        at.selectbox(key="sb_base_url").set_value(base_url)


def _openai_lab(app: Any, server: Any, config: LabConfig) -> Any:
    at = go(app(cfg=encode_config(config)).run(), "lab")
    _choose_openai(at)
    set_base_url(at, server.base_url)
    at.text_input(key="sb_model").set_value("test-model").run()
    return at


def test_summaries_come_from_the_endpoint_with_usage(app, server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", server.base_url)  # the operator's choice
    monkeypatch.setenv("COMPACTLENS_MODELS", "test-model")  # the default list is OpenAI's
    config = LabConfig(stages=({**default_stage("summarization", 1500), "minimum_preserved": 3},))
    at = _openai_lab(app, server, config)
    no_exceptions(at)
    body = plain(texts(at))
    assert "compacted" in body or "cannot-fit" in body
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request.body["model"] == "test-model"
    assert request.headers.get("authorization") == f"Bearer {KEY}"
    assert "usage: 123 in + 45 out = 168 tokens" in body
    # The key is used, but it is nowhere on the page or in the URL.
    assert KEY not in _everything(at)
    assert "environment (OPENAI_API_KEY)" in body
    # Re-rendering uses the cached run: no second request.
    at.run()
    assert len(server.requests) == 1


def test_an_endpoint_error_is_a_failed_stage_without_the_key(app, server, monkeypatch) -> None:
    module = _chat_server_module()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", server.base_url)
    monkeypatch.setenv("COMPACTLENS_MODELS", "test-model")
    server.default = module.Reply(mode="http500")
    config = LabConfig(stages=(default_stage("summarization", 1500),))
    at = _openai_lab(app, server, config)
    no_exceptions(at)
    body = plain(texts(at))
    assert "summarizer failed" in body
    assert KEY not in _everything(at)


def test_a_link_never_switches_to_the_paid_endpoint_by_itself(app, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    at = app(cfg=encode_config(preset("reference", 1500)), summ="openai").run()
    no_exceptions(at)
    assert "extractive (offline) summarizer is used" in plain(at.warning[0].value)
    at = go(at, "lab")
    assert at.radio(key="sb_summarizer").value == "extractive"
    assert "extractive (offline)" in plain(texts(at))


def test_exports_and_url_never_hold_the_key(app, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # The summarizer is chosen in the lab's builder (the only page that has it).
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "lab")
    _choose_openai(at)
    at = go(at, "export")
    no_exceptions(at)
    assert at.query_params.get("summ") in ("openai", ["openai"])
    everything = _everything(at) + "\n".join(c.value for c in at.code)
    assert KEY not in everything
    assert 'os.environ.get("OPENAI_API_KEY")' in everything
