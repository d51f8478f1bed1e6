"""The verdict bar stays in view (issue 25): after the page scrolls far down, the bar is
still on screen, just under the app's header, on the Lab (where parameters are edited)
and on the Diff (a long page)."""

from __future__ import annotations

import pytest
from e2e_support import StreamlitApp

pytestmark = pytest.mark.e2e

# Scroll the main area by ``px`` and say how far it went.
_SCROLL = """(px) => {
  const main = document.querySelector('[data-testid="stMain"]');
  main.scrollTo(0, px);
  return main.scrollTop;
}"""


@pytest.mark.parametrize(("path", "key"), [("lab", "verdict_lab"), ("diff", "verdict_diff")])
def test_the_verdict_bar_stays_in_view_while_the_page_scrolls(
    app: StreamlitApp, path: str, key: str
) -> None:
    app.open(f"{path}?sample=coding_agent")
    bar = app.keyed(key)
    bar.wait_for()
    text = str(bar.inner_text())
    assert "Next step:" in text or "Nothing to change:" in text
    before = bar.bounding_box()
    assert before is not None
    scrolled = int(app.page.evaluate(_SCROLL, 1500))
    assert scrolled > before["y"] + before["height"], "the page did not scroll past the bar"
    app.page.wait_for_function(
        f"""() => {{
          const r = document.querySelector('.st-key-{key}').getBoundingClientRect();
          return r.top >= 0 && r.top < 120;
        }}"""
    )
    after = bar.bounding_box()
    assert after is not None and 0 <= after["y"] < 120, after
    assert bar.is_visible() and str(bar.inner_text()) == text
