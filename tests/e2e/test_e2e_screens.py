"""Screens that read (issue 25, build item 6): every page, at 1280x800 and 1440x900 on a
bundled sample, shows no literal ``None``, no Markdown backslash escape
(``coding\\_agent\\.json``) and no cut table column or metric label.

The scan reads the page's own words: transcript content (chat messages, code blocks) may
hold ``None`` or backslashes of its own and is left out. A Streamlit table draws its cells
on a canvas, so a table is checked for being cut (wider than its frame: a column hidden
behind a scroll bar); its cells' text is scanned by tests/app/test_prose_vocabulary.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import StreamlitApp

pytestmark = pytest.mark.e2e

#: Every page, by its URL path.
PATHS = (
    "",
    "story",
    "load",
    "transcript",
    "diff",
    "timeline",
    "postmortem",
    "lab",
    "cannot-fit",
    "analysis",
    "sweep",
    "export",
)
VIEWPORTS = ({"width": 1280, "height": 800}, {"width": 1440, "height": 900})
SAMPLE = "coding_agent"

_SCAN = r"""() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const transcript = '[data-testid="stChatMessage"], [data-testid="stCode"], pre, code, '
    + '[data-testid="stDataFrame"], .js-plotly-plot, [data-testid="stJson"], textarea, input';
  const texts = [];
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const text = node.textContent.trim();
    if (text && !node.parentElement.closest(transcript)) texts.push(text);
  }
  // A Python None shown as a value; "None, because ..." (a sentence) is prose.
  const none = texts.filter((t) => /(^|[^\w'"`.])None(?!,\s+[a-z])([^\w'"`(]|$)/.test(t));
  const escapes = texts.filter((t) => /\\[_.*\-#\[\]()!`>+|{}~]/.test(t));
  const cut = [];
  for (const frame of main.querySelectorAll('[data-testid="stDataFrame"]')) {
    const scroller = frame.querySelector('.dvn-scroller');
    if (scroller && scroller.scrollWidth > scroller.clientWidth + 2) {
      const box = frame.closest('[class*="st-key-"]');
      const key = box ? Array.from(box.classList).find((c) => c.startsWith('st-key-')) : '';
      cut.push(`table ${key || '(no key)'}: ${scroller.scrollWidth} px in ${scroller.clientWidth}`);
    }
  }
  for (const label of main.querySelectorAll(
      '[data-testid="stMetricLabel"] *, [data-testid="stMetricValue"] *')) {
    const style = getComputedStyle(label);
    if (style.textOverflow === 'ellipsis' && label.scrollWidth > label.clientWidth + 1) {
      cut.push(`metric: ${label.textContent}`);
    }
  }
  return {none, escapes, cut};
}"""


def scan(app: StreamlitApp) -> dict[str, list[str]]:
    """The page's own text with ``None`` or a backslash escape, and what is cut."""
    found: dict[str, Any] = app.page.evaluate(_SCAN)
    return {k: list(dict.fromkeys(v)) for k, v in found.items() if v}


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=lambda v: f"{v['width']}x{v['height']}")
def test_every_page_reads_at_common_sizes(app: StreamlitApp, viewport: dict[str, int]) -> None:
    app.page.set_viewport_size(viewport)
    problems: list[str] = []
    for path in PATHS:
        app.open(f"{path}?sample={SAMPLE}")
        problems.extend(
            f"/{path} {kind}: {item[:160]!r}" for kind, items in scan(app).items() for item in items
        )
    assert app.page_errors == [], app.page_errors
    assert problems == [], "\n".join(problems)
