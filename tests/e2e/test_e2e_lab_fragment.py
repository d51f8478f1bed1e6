"""The Strategy lab's builder and preview are one fragment: a parameter change asks the
server to re-run only that fragment (not the whole app), and still updates the preview,
the configuration line and the URL; a token counter picked in the sidebar re-runs the page."""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import StreamlitApp, number
from streamlit.proto.BackMsg_pb2 import BackMsg

from compactlens_inspector.lab.config import TOKENIZERS

pytestmark = pytest.mark.e2e


def _record_sent(app: StreamlitApp) -> list[bytes]:
    """Every binary frame the page sends on its websocket (Streamlit's BackMsgs)."""
    sent: list[bytes] = []

    def on_socket(socket: Any) -> None:
        socket.on("framesent", lambda p: sent.append(p) if isinstance(p, bytes) else None)

    app.page.on("websocket", on_socket)
    return sent


def _reruns(sent: list[bytes]) -> list[Any]:
    """The rerun requests among the frames (their ``fragment_id`` is empty for a full run)."""
    msgs = [BackMsg.FromString(frame) for frame in sent]
    return [m.rerun_script for m in msgs if m.WhichOneof("type") == "rerun_script"]


def _configuration(app: StreamlitApp) -> str:
    line = app.main().locator('[data-testid="stMarkdownContainer"]')
    return str(line.filter(has_text="Configuration:").first.inner_text())


def test_a_parameter_change_reruns_only_the_lab_fragment(app: StreamlitApp) -> None:
    sent = _record_sent(app)
    app.open("lab?sample=coding_agent&preset=truncation&budget=1500")
    assert number(app.metric("Tokens after")) <= 1500
    before = _configuration(app)
    url = app.page.url

    sent.clear()
    app.set_number("sb_stage0_trigger_n_tokens", 1200)
    reruns = _reruns(sent)
    assert len(reruns) == 1 and reruns[0].fragment_id, reruns
    # The fragment drew everything that depends on the configuration.
    assert number(app.metric("Tokens after")) <= 1200
    assert number(app.metric("Target")) == 1200
    assert "1,200" in _configuration(app) and _configuration(app) != before
    app.page.wait_for_function("(old) => window.location.href !== old", arg=url)
    # The sidebar shows nothing a fragment run would leave stale.
    assert app.sidebar().get_by_text("Strategy:").count() == 0
    assert app.sidebar().locator(".st-key-lab_builder").count() == 0

    # A counter picked in the sidebar re-runs the whole page (and the preview follows).
    tokens_before = number(app.metric("Tokens before"))
    sent.clear()
    app.choose("sidebar_tokenizer", TOKENIZERS["o200k_base"])
    reruns = _reruns(sent)
    assert reruns and not any(r.fragment_id for r in reruns), reruns
    assert number(app.metric("Tokens before")) != tokens_before
