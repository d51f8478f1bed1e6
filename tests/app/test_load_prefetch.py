"""The Load page plans the lab's preview after the summary (so the lab opens from the
cache), but only with the offline summarizer: it never sends a transcript to a model."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from apptest_helpers import coding_agent, go, no_exceptions
from streamlit.testing.v1 import AppTest
from test_security_summarizer import KEY, _chat_server_module, _openai_lab

from compactlens_inspector import state
from compactlens_inspector.lab.config import LabConfig, default_stage
from compactlens_inspector.state import products


def _count_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every configuration the app plans from now on (the real planner, observed where
    :mod:`~compactlens_inspector.state.products` calls it)."""
    planned: list[str] = []
    real = products.run_config

    def observed(*args: Any, **kwargs: Any) -> Any:
        planned.append(args[1].key())
        return real(*args, **kwargs)

    monkeypatch.setattr(products, "run_config", observed)
    return planned


def _paste_new_transcript(at: AppTest) -> AppTest:
    """Paste a transcript no other test has loaded (a new content hash: nothing cached)."""
    messages = coding_agent(4)
    messages[0] = {**messages[0], "content": f"{messages[0]['content']} {uuid.uuid4()}"}
    at.text_area(key="load_paste").set_value(json.dumps(messages))
    at.button(key="load_paste_button").click().run()
    no_exceptions(at)
    return at


def test_the_load_page_plans_the_lab_preview(
    app: Callable[..., AppTest], monkeypatch: pytest.MonkeyPatch
) -> None:
    at = go(app().run(), "load")
    planned = _count_runs(monkeypatch)
    at = _paste_new_transcript(at)
    assert planned, "the Load page planned nothing"
    assert planned[-1] == state_lab_key(at)
    before = len(planned)
    at = go(at, "lab")
    no_exceptions(at)
    assert [m.label for m in at.metric][:2] == ["Tokens before", "Tokens after"]
    # The verdict bar's next step re-runs the fix search's candidates (other keys); the
    # preview itself is not planned again.
    assert state_lab_key(at) not in planned[before:], "the lab planned its preview again"


def state_lab_key(at: AppTest) -> str:
    config = at.session_state[state.LAB]
    assert isinstance(config, LabConfig)
    return config.key()


def test_the_load_page_never_asks_a_model(
    app: Callable[..., AppTest], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _chat_server_module()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with module.ChatServer() as server:
        monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", server.base_url)
        config = LabConfig(
            stages=({**default_stage("summarization", 1500), "minimum_preserved": 3},)
        )
        at = _openai_lab(app, server, config)
        asked = len(server.requests)
        assert asked == 1  # the lab's own preview
        planned = _count_runs(monkeypatch)
        at = go(at, "load")
        _paste_new_transcript(at)
        assert planned == []
        assert len(server.requests) == asked
