"""Issue 27, finding 13: a visitor's API key does not outlive *Forget my key*.

Cached runs kept their strategy, the strategy its summarizer, and the summarizer the
OpenAI client with the visitor's key, in caches shared by the whole server. After a paid
run (through the real app, against a Chat Completions server on 127.0.0.1) and *Forget my
key*, the key string must be reachable from none of the server's caches and from nothing
the session keeps.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from types import FunctionType, ModuleType
from typing import Any

import pytest
from apptest_helpers import go, no_exceptions, plain, texts
from streamlit.runtime.caching import cache_resource_api
from test_security_summarizer import _chat_server_module

from compactlens_inspector.lab.config import LabConfig, default_stage, encode_config
from compactlens_inspector.state import products

VISITOR_KEY = "sk-visitor-FORGET-ME-0123456789abcdef"
CONFIG = LabConfig(stages=({**default_stage("summarization", 1500), "minimum_preserved": 3},))


def _strings(roots: Iterable[Any]) -> Iterator[str]:
    """Every string reachable from ``roots`` through the objects that hold them (not
    through modules, classes or a function's globals, which reach the whole process)."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, str):
            yield value
        elif isinstance(value, bytes | bytearray):
            yield bytes(value).decode("latin-1")
        elif isinstance(value, ModuleType | type):
            continue
        elif isinstance(value, FunctionType):
            cells = [c.cell_contents for c in value.__closure__ or () if _filled(c)]
            stack.extend([*cells, *(value.__defaults__ or ())])
        else:
            stack.extend(gc.get_referents(value))


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def _holders(at: Any) -> dict[str, list[Any]]:
    return {
        "shared caches": [products._shared()],
        "cache_resource caches": [cache_resource_api._resource_caches],
        "session state": [at.session_state],
    }


@pytest.fixture
def server() -> Iterator[Any]:
    with _chat_server_module().ChatServer() as chat:
        yield chat


def test_the_visitor_key_is_gone_after_forget_my_key(app, server, monkeypatch) -> None:
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", server.base_url)
    monkeypatch.setenv("COMPACTLENS_VISITOR_ENDPOINTS", "on")
    at = go(app(cfg=encode_config(CONFIG)).run(), "lab")
    at.radio(key="sb_summarizer").set_value("openai").run()
    at.text_input(key="sb_base_url").set_value(server.base_url)
    at.text_input(key="sb_model").set_value("forget-model").run()
    at.text_input(key="sb_api_key").set_value(VISITOR_KEY).run()
    no_exceptions(at)
    assert f"Bearer {VISITOR_KEY}" in {r.headers.get("authorization") for r in server.requests}
    assert "Key in use: yours (this session only)" in plain(texts(at))
    at = go(at, "analysis")  # the run's analysis and fixes are cached too
    no_exceptions(at)
    at = go(at, "lab")
    at.button(key="sb_forget_key").click().run()
    no_exceptions(at)
    assert "Key in use: yours" not in plain(texts(at))
    gc.collect()
    for where, roots in _holders(at).items():
        leaks = [s for s in _strings(roots) if VISITOR_KEY in s]
        assert leaks == [], f"the visitor's key is still reachable from the {where}"
