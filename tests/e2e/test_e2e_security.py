"""Transcript content is inert in a real browser: nothing in it runs or becomes HTML.

``injection_attempt.json`` holds ``<script>alert(1)</script>``, ``<img src=x
onerror=alert(1)>``, the Markdown link ``[click](javascript:alert(1))`` and a stray
``</div><style>body{display:none}</style>``. Any executed ``alert`` would open a
dialog, which the page fixture records; the DOM is searched for the elements the
payloads would create; the payloads must be readable as text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e_support import SAMPLES, StreamlitApp

pytestmark = pytest.mark.e2e

INJECTION = SAMPLES / "injection_attempt.json"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
JS_LINK = "[click](javascript:alert(1))"

# Elements the payloads would create if any of them were rendered as HTML.
_INJECTED = """() => {
  const bad = [];
  const snip = (el) => el.outerHTML.slice(0, 160);
  for (const s of document.querySelectorAll('script')) {
    if ((s.textContent || '').includes('alert(')) bad.push('script ' + snip(s));
  }
  for (const img of document.querySelectorAll('img')) {
    if (img.getAttribute('src') === 'x') bad.push('img ' + snip(img));
  }
  for (const el of document.querySelectorAll('[onerror], [onload], [onclick], [onmouseover]')) {
    bad.push('handler ' + snip(el));
  }
  for (const a of document.querySelectorAll('a[href], area[href]')) {
    const href = (a.getAttribute('href') || '').replace(/[\\s\\u0000-\\u001f]/g, '').toLowerCase();
    if (/^(javascript|vbscript|data):/.test(href)) bad.push('link ' + snip(a));
  }
  for (const st of document.querySelectorAll('style')) {
    if ((st.textContent || '').replace(/\\s/g, '').includes('body{display:none}')) {
      bad.push('style ' + snip(st));
    }
  }
  for (const f of document.querySelectorAll('iframe')) {
    const doc = (f.getAttribute('srcdoc') || '') + (f.getAttribute('src') || '');
    if (doc.includes('alert(')) bad.push('iframe ' + snip(f));
  }
  return bad;
}"""


def injected(page: Any) -> list[str]:
    found = page.evaluate(_INJECTED)
    assert isinstance(found, list)
    return [str(x) for x in found]


def expand_all(app: StreamlitApp) -> None:
    """Open every closed expander in the main area (tool calls, results, reasoning), and
    those an opened one shows (a folded run of groups holds their message cards)."""
    closed = app.main().locator('[data-testid="stExpander"] details:not([open]) > summary')
    for _ in range(4):  # nesting depth
        count = closed.count()
        if count == 0:
            return
        for _ in range(count):
            closed.first.click()


def assert_inert(app: StreamlitApp, where: str) -> None:
    # An <img onerror> fires after the image request fails: wait until every image has
    # loaded or failed and the queued events have run.
    app.settle_images()
    assert app.dialogs == [], f"{where}: a dialog opened: {app.dialogs}"
    found = injected(app.page)
    assert found == [], f"{where}: transcript content became HTML: {found}"
    hidden = app.page.evaluate("() => getComputedStyle(document.body).display === 'none'")
    assert not hidden, f"{where}: the page body was hidden by injected CSS"
    assert app.main().is_visible(), f"{where}: the main area is not visible"
    assert app.page_errors == [], f"{where}: page errors: {app.page_errors}"


def load_injection(app: StreamlitApp) -> None:
    app.open("load")
    app.upload(INJECTION)
    assert_inert(app, "load page")


def test_transcript_text_is_inert_and_readable(app: StreamlitApp) -> None:
    load_injection(app)
    app.nav("Transcript")
    expand_all(app)
    assert_inert(app, "transcript page")
    text = app.main().inner_text()
    for payload in (SCRIPT, IMG, JS_LINK, "</div><style>body{display:none}</style>"):
        assert payload in text, f"{payload!r} is not shown as text"
    # The tool call's arguments are shown as text too.
    assert '"title": "<script>alert(1)</script>"' in text


def test_markdown_rendering_stays_inert(app: StreamlitApp) -> None:
    load_injection(app)
    app.nav("Transcript")
    if app.keyed("tx_markdown").count() == 0:
        pytest.fail("the transcript page has no Markdown switch (key tx_markdown)")
    assert app.toggle("tx_markdown"), "the Markdown switch did not turn on"
    expand_all(app)
    assert_inert(app, "transcript page with Markdown on")
    main = app.main()
    text = main.inner_text()
    assert SCRIPT in text, "the <script> text is not visible with Markdown on"
    assert "onerror=alert(1)" in text, "the <img> text is not visible with Markdown on"
    # The javascript: link keeps its text but is not a link.
    assert "click" in text
    assert main.get_by_role("link", name="click").count() == 0


def test_other_views_of_the_transcript_are_inert(app: StreamlitApp, tmp_path: Path) -> None:
    load_injection(app)
    app.nav("Strategy lab")
    # Drop old groups so the diff shows original text next to its decision.
    app.apply_preset("Truncation only", 100)
    assert "dropped" in app.main().inner_text(), "the budget dropped nothing"
    assert_inert(app, "strategy lab")
    for title in ("Diff", "Event timeline", "Analysis", "Export", "Overview"):
        app.nav(title, heading="compactlens inspector" if title == "Overview" else None)
        expand_all(app)
        assert_inert(app, title)
    app.nav("Diff")
    expand_all(app)  # a run of identical decisions is one row; its groups open on demand
    # Each group's card is a <details> of its own: open them all to read the messages.
    app.page.evaluate(
        "() => document.querySelectorAll('[data-testid=\"stMain\"] details')"
        ".forEach(d => { d.open = true; })"
    )
    assert_inert(app, "Diff, every group open")
    assert "alert(1)" in app.main().inner_text(), "the diff does not show the original text"

    # The self-contained HTML report, opened in the browser, is inert too.
    app.nav("Export")
    html = app.download("export_report", tmp_path).read_text(encoding="utf-8")
    viewer = app.page.context.new_page()
    dialogs: list[str] = []
    viewer.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    viewer.route("**/*", lambda route: route.abort())  # the report must need no network
    viewer.set_content(html, wait_until="load")
    app.settle_images(viewer)
    assert dialogs == [], f"the HTML report ran a script: {dialogs}"
    assert injected(viewer) == []
    assert "alert(1)" in viewer.locator("body").inner_text()
    viewer.close()


def test_the_checks_catch_payloads_that_do_run(app: StreamlitApp) -> None:
    """The checks above can fail: on a page that renders the payloads as HTML they fire."""
    app.page.set_content(
        f'<div>{SCRIPT} {IMG} <a href=" javascript:alert(1)">click</a>'
        "<style>body{display:none}</style></div>"
    )
    app.settle_images()
    assert len(app.dialogs) == 2, app.dialogs
    kinds = sorted({entry.split(" ")[0] for entry in injected(app.page)})
    assert kinds == ["handler", "img", "link", "script", "style"]
