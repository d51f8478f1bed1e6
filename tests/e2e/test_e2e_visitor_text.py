"""Visitor text is text in a real browser (issue 27, finding 3).

A shared link whose ``?preset=`` and ``?cfg=`` carry Markdown, and an uploaded transcript
whose file name, title, messages and tool names carry it, must draw no image or link to
the attacker's URL (remote images track, links phish: "Your session expired, sign in
again"), no HTML, colour, math or icon: the page shows the characters. Screenshots of the
pages are kept in test-artifacts/screenshots (visitor_text_*.png) to check how the text
reads (no backslashes).
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from e2e_support import SCREENSHOTS, StreamlitApp

pytestmark = pytest.mark.e2e

URL = "http://127.0.0.1:9/"
HOSTILE = (
    f"![x]({URL}t.png) [Sign in]({URL}) <img src=x onerror=alert(1)> "
    f'<a href="{URL}">Session expired</a> **bold** $x$ :red[red] :material/lock: {URL}bare'
)
#: What the page must show of HOSTILE, character for character.
SHOWN = ("![x](", "[Sign in](", "<img src=x onerror=alert(1)>", "**bold**", "$x$", ":red[red]")

# Images, links (HTML or SVG, as Plotly draws them) and elements the payload could create.
_ATTACK = """(url) => {
  const bad = [];
  for (const el of document.querySelectorAll('img, image, a, area, iframe, source, video')) {
    const html = el.outerHTML;
    if (html.includes(url) || el.getAttribute('src') === 'x') bad.push(html.slice(0, 160));
  }
  for (const el of document.querySelectorAll('[onerror], [onload], [onclick]')) {
    bad.push('handler ' + el.outerHTML.slice(0, 160));
  }
  for (const el of document.querySelectorAll('.katex, [data-testid="stIconMaterial"]')) {
    const near = (el.closest('[data-testid="stMarkdownContainer"]') || el).innerText || '';
    if (near.includes('Sign in')) bad.push('rendered ' + el.outerHTML.slice(0, 160));
  }
  return bad;
}"""


def _cfg(doc: dict[str, Any]) -> str:
    raw = json.dumps(doc).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def _check(app: StreamlitApp, where: str) -> str:
    """The main area's text (word joiners dropped) after checking nothing was drawn."""
    app.settle_images()
    found = app.page.evaluate(_ATTACK, URL.rstrip("/"))
    assert found == [], f"{where}: visitor text became elements: {found}"
    assert app.dialogs == [], f"{where}: a dialog opened: {app.dialogs}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    app.page.screenshot(path=str(SCREENSHOTS / f"visitor_text_{where}.png"), full_page=True)
    return str(app.page.inner_text("body")).replace("\u2060", "")


def test_shared_link_values_are_text(app: StreamlitApp) -> None:
    app.open(f"?preset={quote(HOSTILE)}")
    text = _check(app, "preset_link")
    assert "The link names a preset that does not exist" in text
    for piece in SHOWN:
        assert piece in text, f"{piece!r} is not shown as text"
    config = {
        "label": HOSTILE,
        "stages": [{"type": "sliding_window", "trigger": {"metric": HOSTILE, "n": 800}}],
    }
    app.open(f"sweep?cfg={_cfg(config)}")
    text = _check(app, "sweep_link")
    assert "[Sign in](" in text


def test_uploaded_transcript_text_is_text(app: StreamlitApp, tmp_path: Path) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"Please look at {HOSTILE}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": f"read {HOSTILE}", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": f"coding_agent.json {HOSTILE}"},
        {"role": "assistant", "content": "Done."},
    ]
    doc = {"title": HOSTILE, "description": HOSTILE, "messages": messages}
    path = tmp_path / f"{HOSTILE.replace('/', '_')}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    app.open("load")
    app.upload(path)
    text = _check(app, "load")
    for piece in SHOWN:
        assert piece in text, f"{piece!r} is not shown as text on Load"
    app.nav("Transcript")
    closed = app.main().locator('[data-testid="stExpander"] details:not([open]) > summary')
    for _ in range(closed.count()):
        closed.first.click()
    text = _check(app, "transcript")
    assert "coding_agent.json" in text and "coding\\_agent" not in text
    assert f"read {HOSTILE.split(' <a')[0]}" in text
