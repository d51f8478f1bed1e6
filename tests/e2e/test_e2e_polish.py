"""The demo's polish in a real browser: every page in the navigation renders with no
error at 1440x900 and at 1024x768 without sideways scrolling, the story mode walks from
the first step to the last and back, and hostile text stays inert in the new message
rendering. Screenshots go to ``test-artifacts/polish/`` (kept, never compared)."""

from __future__ import annotations

import re

import pytest
from e2e_support import ARTIFACTS, StreamlitApp, slug
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_e2e_pages import assert_no_error_box
from test_e2e_security import IMG, SCRIPT, assert_inert

from compactlens_inspector.views.story import STEPS

pytestmark = pytest.mark.e2e

SHOTS = ARTIFACTS / "polish"
SIZES = ((1440, 900), (1024, 768))

#: Pages whose metric cards wrap rather than cut their numbers (components/metric_row.py).
WRAPPING_CARDS = {"Overview", "Story mode", "Transcript", "Diff"}
#: Pages where only some metric cards wrap: the container (its key) that holds them.
WRAPPING_ROWS = {"Strategy lab": "lab_metrics"}

# Metric cards whose text is cut (an element narrower than its content), in ``scope``.
_CUT_METRICS = """(scope) => Array.from(
    document.querySelectorAll(scope + ' [data-testid="stMetric"]'))
  .filter((m) => Array.from(m.querySelectorAll('*')).some((e) => e.scrollWidth > e.clientWidth + 1))
  .map((m) => m.innerText.replace(/\\s+/g, ' '))"""

_OVERFLOW = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  return main ? main.scrollWidth - main.clientWidth : -1;
}"""

# True once the main area has not scrolled sideways for 5 animation frames in a row.
# Charts and tables resize themselves after a viewport change (plotly observes its
# container and re-lays out a frame or more later), so one reading right after the
# resize can see the old width: the page is judged once its layout has settled.
_FITS_FOR_A_WHILE = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const fits = main !== null && main.scrollWidth - main.clientWidth <= 1;
  window.__fitFrames = fits ? (window.__fitFrames || 0) + 1 : 0;
  return window.__fitFrames >= 5;
}"""

#: How long a page may take to settle into the new width after a resize (ms).
SETTLE_MS = 10_000


def shoot(app: StreamlitApp, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    app.page.screenshot(path=str(SHOTS / f"{slug(name)}.png"), timeout=15_000)


def nav_titles(app: StreamlitApp) -> list[str]:
    links = app.page.locator('[data-testid="stSidebarNav"] a')
    # A link's text is its icon's name (a font ligature) and, last, its title.
    return [str(t).strip().splitlines()[-1].strip() for t in links.all_inner_texts() if t.strip()]


def visit(app: StreamlitApp, title: str) -> None:
    """Open a page by its navigation link and wait for its run (any heading)."""
    link = app.page.locator('[data-testid="stSidebarNav"] a').filter(
        has_text=re.compile(rf"{re.escape(title)}\s*$")
    )
    current = link.first.get_attribute("aria-current")
    if current != "page":
        app.rerun(lambda: link.first.click(), what=f"the page {title!r} to run")
    app.main().locator("h1").first.wait_for()


def assert_fits(app: StreamlitApp, where: str) -> None:
    """The main area settles without sideways scrolling within :data:`SETTLE_MS`."""
    app.page.evaluate("() => { window.__fitFrames = 0; }")
    try:
        app.page.wait_for_function(_FITS_FOR_A_WHILE, timeout=SETTLE_MS, polling="raf")
    except PlaywrightTimeout:
        overflow = app.page.evaluate(_OVERFLOW)
        raise AssertionError(f"{where}: the main area scrolls sideways by {overflow} px") from None


def test_every_page_renders_at_two_sizes(app: StreamlitApp) -> None:
    app.page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    app.open("?sample=coding_agent")
    titles = nav_titles(app)
    assert {"Overview", "Story mode", "Transcript", "Strategy lab", "Diff"} <= set(titles)
    for title in titles:
        visit(app, title)
        for width, height in SIZES:
            app.page.set_viewport_size({"width": width, "height": height})
            app.wait_idle(what=f"{title} at {width}x{height}")
            where = f"{title} at {width}x{height}"
            assert_no_error_box(app, where)
            assert_fits(app, where)
            if title in WRAPPING_CARDS:
                assert app.page.evaluate(_CUT_METRICS, "") == [], f"{where}: a metric is cut"
            if title in WRAPPING_ROWS:
                scope = f".st-key-{WRAPPING_ROWS[title]}"
                assert app.page.locator(scope).count() == 1, f"{where}: no {scope}"
                assert app.page.evaluate(_CUT_METRICS, scope) == [], f"{where}: a metric is cut"
            shoot(app, f"{width}x{height}-{title}")
        app.page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})


def heading(app: StreamlitApp) -> str:
    return str(app.main().locator("h3").first.inner_text()).strip()


def test_story_mode_walks_from_problem_to_fix(app: StreamlitApp) -> None:
    app.open("story?sample=coding_agent")
    assert heading(app) == f"1. {STEPS[0].title}"
    for n in range(2, len(STEPS) + 1):
        app.click("story_next")
        assert heading(app) == f"{n}. {STEPS[n - 1].title}"
        app.page.wait_for_url(re.compile(rf"[?&]step={n}(&|$)"))
        assert_no_error_box(app, f"story step {n}")
        shoot(app, f"story-step-{n}")
    assert app.keyed("story_next").count() == 0, "the last step still offers Next"
    assert "cannot-fit" in app.main().inner_text()
    # A step is a deep link: the URL opens the same step in a new session.
    url = app.page.url
    app.click("story_back")
    assert heading(app).startswith(f"{len(STEPS) - 1}.")
    app.page.goto(url)
    app.main().locator("h3").first.wait_for()
    app.wait_idle(what="the deep-linked step")
    assert heading(app) == f"{len(STEPS)}. {STEPS[-1].title}"
    # The fix step leads to the debugger on the cannot-fit sample.
    app.click("story_open_debugger")
    app.main().get_by_role("heading", name="Cannot-fit debugger").wait_for()
    assert "cannot_fit_16k" in app.selected("sidebar_source")
    assert_no_error_box(app, "the debugger opened from the story")


def test_hostile_text_is_inert_in_chat_messages(app: StreamlitApp) -> None:
    # test_e2e_security opens every fold after an upload; here: the bundled sample by link.
    app.open("transcript?sample=injection_attempt")
    assert app.main().locator('[data-testid="stChatMessage"]').count() > 0
    assert_inert(app, "transcript as chat messages")
    text = app.main().inner_text()
    assert SCRIPT in text and IMG in text
    shoot(app, "hostile-transcript")
