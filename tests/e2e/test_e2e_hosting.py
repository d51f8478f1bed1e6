"""The visitor's own API key in a real browser: a password field, sent once, and then
nowhere in the page, its HTML or the URL, while the visitor's endpoint (a Chat
Completions server on 127.0.0.1 started here) receives it."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import REPO_ROOT, StreamlitApp

from compactlens_inspector.lab.config import PRESETS

pytestmark = pytest.mark.e2e

VISITOR_KEY = "sk-visitor-E2E-fedcba9876543210"


@pytest.fixture
def chat_server() -> Iterator[Any]:
    path = REPO_ROOT / "tests" / "compact" / "chat_server.py"
    if not path.is_file():
        pytest.skip(f"the local chat completions test server is missing at {path}")
    name = "compactlens_e2e_chat_server"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, Path(path))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    with module.ChatServer() as server:
        yield server


def _commit(app: StreamlitApp, key: str, text: str) -> None:
    box = app.keyed(key).locator("input")
    app.wait_idle(what=f"quiet before typing into {key!r}")
    box.fill(text)
    app.rerun(lambda: box.press("Enter"), what=f"the rerun after typing into {key!r}")


def test_the_visitor_key_is_a_password_sent_once_and_never_shown(
    app: StreamlitApp, chat_server: Any
) -> None:
    # Truncation first: nothing asks for a summary until the endpoint and key are set.
    app.open("lab?preset=truncation&budget=1500&sample=coding_agent")
    app.open_expander(app.builder(), "Summarizer")
    option = app.keyed("sb_summarizer").get_by_text("OpenAI-compatible endpoint")
    app.rerun(lambda: option.click(), what="the rerun after choosing the endpoint")
    _commit(app, "sb_base_url", chat_server.base_url)
    field = app.keyed("sb_api_key").locator("input")
    assert field.get_attribute("type") == "password"
    _commit(app, "sb_api_key", VISITOR_KEY)
    assert chat_server.requests == []
    app.apply_preset(PRESETS["reference"], 1500)  # its summarization stage asks the endpoint
    app.builder().get_by_text("Your API key is set for this session only.").wait_for(
        state="attached"
    )
    # The visitor's endpoint got their key (the server has none of its own here).
    assert {r.headers.get("authorization") for r in chat_server.requests} == {
        f"Bearer {VISITOR_KEY}"
    }
    # The field is empty again; the key is in no text, no HTML and not in the URL.
    assert field.input_value() == ""
    assert VISITOR_KEY not in app.page.content()
    assert VISITOR_KEY not in app.page.inner_text("body")
    assert VISITOR_KEY not in app.page.url
    app.nav("Export")
    assert VISITOR_KEY not in app.page.content() and VISITOR_KEY not in app.page.url
