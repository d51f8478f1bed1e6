"""Screens that read (issue 25, build item 6): every page of the sidebar, at 1440x900 and
1280x800, shows no literal ``None``, no Markdown backslash escape (``coding\\_agent\\.json``)
and no cut table column or metric label, on four diverse bundled samples, on two real agent
logs of the shared corpus (Claude Code, OpenHands) and on the bundled sample runs.

How the scan reads a page (``_SCAN``):

* *The page's own words*: every text node of the main area and of the sidebar's content,
  except transcript content (chat messages, code blocks, JSON, inputs), which may hold
  ``None`` or backslashes of its own.
* *Table cells*: ``st.dataframe`` is glide-data-grid, which draws its cells on a canvas
  (its accessible ``<table role="grid">`` holds only the rows in view and is written after
  a debounce). Every closed expander that holds a table is opened first (client side), so
  its grid is drawn. The scan reads the grid component's own props instead (found from the
  canvas through React's fiber): ``columns`` with the width each column is drawn at, and
  ``getCellContent``, the very function the grid draws from, whose ``displayData`` is the
  text drawn in a cell; a missing value is drawn as the element's ``placeholder`` (by
  default "None"). Every row is read, not only those in view. Should a Streamlit upgrade
  move those props, the scan says so and fails; it never passes blind.
* *Cut*: a cell (or header) is cut when its text, measured with the grid's own font
  (``theme.baseFontStyle``/``fontFamily``, through ``CanvasRenderingContext2D.measureText``),
  is wider than its column less the cell padding on both sides: glide clips such text at
  the column's edge. A table whose columns are wider than its frame (a column behind a
  scroll bar) is cut too, and so is a metric label or value that CSS ends with an ellipsis.
  Measured widths are exact for a given font, so the verdict does not depend on timing.
* *Settled*: after a page is drawn (the app's own idle signal, see ``e2e_support``) and
  after the window is resized, the scan waits until every visible grid's drawn width equals
  its frame's width and the fonts are loaded, then until the layout (sizes of the main
  area and of every grid) is unchanged over several animation frames. No fixed sleep.

Runtime: one browser context per transcript; each page is drawn once and scanned at both
sizes (the window is resized, the page is not reloaded); no screenshot per page (a
problem names its page and size; a failure still saves the last page).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from e2e_support import REPO_ROOT, SAMPLES, StreamlitApp

from compactlens_inspector.components.sidebar import picker_label

pytestmark = pytest.mark.e2e

#: Every page of the sidebar that shows the loaded transcript: (sidebar title, heading).
#: Story mode and Runs have their own data: see the last test.
PAGES = (
    ("Overview", "compactlens inspector"),
    ("Load", None),
    ("Transcript", None),
    ("Diff", None),
    ("Event timeline", None),
    ("Post-mortem", None),
    ("Strategy lab", None),
    ("Cannot-fit debugger", None),
    ("Analysis", None),
    ("Sweep & compare", None),
    ("Export", None),
)
#: The first size is the one each page is drawn at; the window is then resized.
VIEWPORTS = ({"width": 1440, "height": 900}, {"width": 1280, "height": 800})

#: Bundled samples of different shapes: a coding agent, a long support chat, one that cannot
#: fit 16k tokens, and a Claude Code log with the agent's own compactions.
SAMPLE_NAMES = ("coding_agent", "support_long", "cannot_fit_16k", "claude_code_compacted")
#: Real agent logs of the shared corpus (read-only, outside the repository).
CORPUS_NAMES = (
    "claude_code__ae4a77f8-aedd-4bc1-888f-c94edc91af04.json",
    "openhands_llmc__astropy__astropy-7671.json",
)
CORPUS_ENV = "COMPACTLENS_CORPUS"
STORY_STEPS = 5


def corpus_dir() -> Path:
    """``<repo root>/../shared/corpus``, or ``$COMPACTLENS_CORPUS`` (as tests/conftest.py)."""
    override = os.environ.get(CORPUS_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return (REPO_ROOT / ".." / "shared" / "corpus").resolve()


_SCAN = r"""() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const side = document.querySelector('[data-testid="stSidebarUserContent"]');
  const transcript = '[data-testid="stChatMessage"], [data-testid="stCode"], pre, code, '
    + '[data-testid="stDataFrame"], .js-plotly-plot, [data-testid="stJson"], '
    + '[data-testid="stText"], textarea, input';
  const noneRe = /(^|[^\w'"`.])None(?!,\s+[a-z])([^\w'"`(]|$)/;
  const escapeRe = /\\[_.*\-#\[\]()!`>+|{}~]/;
  const found = {none: [], escapes: [], cut: [], unread: []};
  for (const root of [main, side]) {
    if (!root) continue;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      const text = node.textContent.trim();
      if (!text || node.parentElement.closest(transcript)) continue;
      // A Python None shown as a value; "None, because ..." (a sentence) is prose.
      if (noneRe.test(text)) found.none.push(text);
      if (escapeRe.test(text)) found.escapes.push(text);
    }
  }
  const ctx = document.createElement('canvas').getContext('2d');
  const measure = (font, text) => { ctx.font = font; return ctx.measureText(text).width; };
  const gridProps = (frame) => {
    const canvas = frame.querySelector('canvas');
    if (!canvas) return null;
    const key = Object.keys(canvas).find((k) => k.startsWith('__reactFiber$'));
    for (let fiber = key && canvas[key], n = 0; fiber && n < 30; fiber = fiber.return, n++) {
      const p = fiber.memoizedProps;
      if (p && Array.isArray(p.columns) && typeof p.getCellContent === 'function' && p.theme) {
        return p;
      }
    }
    return null;
  };
  // The text a table draws for a missing value: st.dataframe's ``placeholder``, read
  // from the Streamlit element's props (null: the default, "None").
  const placeholder = (frame) => {
    const canvas = frame.querySelector('canvas');
    const key = Object.keys(canvas).find((k) => k.startsWith('__reactFiber$'));
    for (let fiber = key && canvas[key], n = 0; fiber && n < 60; fiber = fiber.return, n++) {
      const e = fiber.memoizedProps && fiber.memoizedProps.element;
      if (e && typeof e === 'object' && 'placeholder' in e) return e.placeholder;
    }
    return null;
  };
  const frames = Array.from(document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stDataFrame"], '
    + '[data-testid="stSidebar"] [data-testid="stDataFrame"]'));
  frames.forEach((frame, n) => {
    const visible = frame.checkVisibility() && frame.offsetWidth > 0;
    const p = gridProps(frame);
    if (!p) {
      if (visible) found.unread.push(`table ${n + 1}: no glide-data-grid props on its canvas`);
      return;
    }
    const name = `table ${n + 1} (${p.columns.slice(0, 3).map((c) => c.title).join(', ')}...)`;
    const missing = placeholder(frame);
    const t = p.theme;
    const font = `${t.baseFontStyle} ${t.fontFamily}`;
    const headerFont = `${t.headerFontStyle} ${t.fontFamily}`;
    const pad = t.cellHorizontalPadding;
    const rows = Math.min(p.rows, 5000);
    let total = 0;
    p.columns.forEach((column, i) => {
      total += column.width;
      let widest = '', widestPx = 0;
      for (let r = 0; r < rows; r++) {
        const cell = p.getCellContent([i, r]);
        if (!['text', 'number', 'uri', 'markdown'].includes(cell.kind)) continue;
        const text = String(cell.displayData ?? cell.data ?? '');
        // A missing value is drawn as the table's placeholder, by default "None".
        const drawn = cell.isMissingValue ? (missing ?? 'None') : text;
        if (drawn === 'None') {
          found.none.push(`${name} column ${column.title}, row ${r + 1}`);
        }
        if (escapeRe.test(text)) found.escapes.push(`${name} column ${column.title}: ${text}`);
        if (!visible || cell.allowWrapping) continue;
        const px = measure(font, text.replace(/\s+/g, ' '));
        if (px > widestPx) { widestPx = px; widest = text; }
      }
      if (!visible) return;
      const room = column.width - 2 * pad + 1;
      if (widestPx > room) {
        found.cut.push(`${name} column ${JSON.stringify(column.title)}: ${Math.ceil(widestPx)} px `
          + `of text in ${column.width - 2 * pad}: ${widest.slice(0, 80)}`);
      }
      const title = measure(headerFont, column.title)
        + (column.icon ? t.headerIconSize + pad : 0);
      if (title > room) found.cut.push(`${name} header ${JSON.stringify(column.title)}`);
    });
    if (visible && total > p.width + 2) {
      found.cut.push(`${name}: its columns are ${total} px wide in ${p.width}`);
    }
  });
  for (const label of document.querySelectorAll(
      '[data-testid="stMetricLabel"] *, [data-testid="stMetricValue"] *')) {
    const style = getComputedStyle(label);
    if (style.textOverflow === 'ellipsis' && label.scrollWidth > label.clientWidth + 1) {
      found.cut.push(`metric: ${label.textContent}`);
    }
  }
  return found;
}"""

# True once the fonts are loaded, every visible grid is drawn at its frame's width, and the
# layout (main area and grids) has been the same for 5 animation frames in a row.
_SETTLED = r"""() => {
  if (document.fonts.status !== 'loaded') return false;
  const grids = [];
  for (const frame of document.querySelectorAll('[data-testid="stDataFrame"]')) {
    if (!frame.checkVisibility() || frame.offsetWidth === 0) continue;
    const scroller = frame.querySelector('.dvn-scroller');
    if (!scroller) return false;
    grids.push(`${scroller.clientWidth}x${scroller.clientHeight}`);
  }
  const main = document.querySelector('[data-testid="stMain"]');
  const now = `${window.innerWidth} ${main ? main.clientWidth : 0} ${grids.join(' ')}`;
  if (window.__clLayout !== now) { window.__clLayout = now; window.__clSame = 0; return false; }
  window.__clSame = (window.__clSame || 0) + 1;
  return window.__clSame >= 5;
}"""


# Open every closed expander that holds a table (client side, no rerun), so its grid is
# drawn and read like the rest; the number opened.
_OPEN_TABLES = r"""() => {
  let opened = 0;
  for (const details of document.querySelectorAll('details:not([open])')) {
    if (!details.querySelector('[data-testid="stDataFrame"]')) continue;
    details.querySelector('summary').click();
    opened++;
  }
  return opened;
}"""


def settle(app: StreamlitApp) -> None:
    app.page.evaluate("() => { window.__clLayout = null; window.__clSame = 0; }")
    app.page.wait_for_function(_SETTLED, polling="raf")


def transcript_text(path: Path) -> str:
    """Every string of a transcript file (JSON or JSON lines), one per line, with the
    strings of JSON documents held in strings."""
    raw = path.read_text(encoding="utf-8")
    values: list[Any] = (
        [json.loads(line) for line in raw.splitlines() if line.strip()]
        if path.suffix == ".jsonl"
        else [json.loads(raw)]
    )
    strings: list[str] = []
    while values:
        value = values.pop()
        if isinstance(value, str):
            strings.append(value)
            # A tool call's arguments are often a JSON document in a string.
            if value[:1] in "{[":
                with contextlib.suppress(ValueError):
                    values.append(json.loads(value))
        elif isinstance(value, dict):
            values.extend(value.values())
        elif isinstance(value, list):
            values.extend(value)
    return "\n".join(strings)


def quoted(text: str, content: str) -> bool:
    """Whether every backslash in ``text`` is the transcript's own: each piece of text with
    a backslash (between spaces and ellipses) is found in the transcript as it is (a
    ``grep "a\\|b"`` the agent ran, shown in a call's label)."""
    pieces = [p for word in text.split() for p in word.split("…") if "\\" in p]
    return bool(pieces) and all(p in content for p in pieces)


def scan(app: StreamlitApp, content: str = "") -> dict[str, list[str]]:
    """The page's own text with ``None`` or a backslash escape (not the transcript's own),
    what is cut, and tables that could not be read."""
    found: dict[str, Any] = app.page.evaluate(_SCAN)
    found["escapes"] = [t for t in found["escapes"] if not quoted(t, content)]
    return {k: list(dict.fromkeys(v)) for k, v in found.items() if v}


def scan_sizes(app: StreamlitApp, where: str, content: str = "") -> list[str]:
    """Scan the page drawn now at each size of :data:`VIEWPORTS`; the problems found."""
    problems: list[str] = []
    for viewport in VIEWPORTS:
        app.page.set_viewport_size(viewport)
        settle(app)
        size = f"{viewport['width']}x{viewport['height']}"
        problems.extend(
            f"{where} at {size}, {kind}: {item[:200]!r}"
            for kind, items in scan(app, content).items()
            for item in items
        )
    return problems


def scan_every_page(app: StreamlitApp, transcript: Path) -> None:
    app.keep_visits = False  # each problem names its page and size
    content = transcript_text(transcript)
    problems: list[str] = []
    for title, heading in PAGES:
        app.page.set_viewport_size(VIEWPORTS[0])
        app.nav(title, heading)
        app.page.evaluate(_OPEN_TABLES)
        problems.extend(scan_sizes(app, f"{transcript.name} / {title}", content))
    assert app.page_errors == [], app.page_errors
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_every_page_reads_on_a_bundled_sample(app: StreamlitApp, sample: str) -> None:
    path = next(SAMPLES.glob(f"{sample}.json*"))
    app.page.set_viewport_size(VIEWPORTS[0])
    app.open(f"load?sample={sample}")
    scan_every_page(app, path)


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_every_page_reads_on_a_real_agent_log(app: StreamlitApp, name: str) -> None:
    path = corpus_dir() / name
    if not path.is_file():
        pytest.skip(f"{path} not found: the shared corpus is absent (set {CORPUS_ENV})")
    app.page.set_viewport_size(VIEWPORTS[0])
    app.open("load")
    app.upload(path)
    assert app.selected("sidebar_source") == picker_label(name)
    scan_every_page(app, path)


def test_every_story_step_and_the_runs_page_read(app: StreamlitApp) -> None:
    """Story mode tells its own bundled transcript (whatever is loaded), so each of its
    steps is scanned once; the Runs page reads the bundled sample runs."""
    problems: list[str] = []
    app.keep_visits = False  # each problem names its page and size
    app.page.set_viewport_size(VIEWPORTS[0])
    app.open("story?step=1")
    for step in range(1, STORY_STEPS + 1):
        if step > 1:
            app.click("story_next")
        app.page.evaluate(_OPEN_TABLES)
        problems.extend(scan_sizes(app, f"Story mode step {step}"))
    app.page.set_viewport_size(VIEWPORTS[0])
    app.nav("Runs")
    app.click("runs_open_sample")
    app.main().locator('[data-testid="stDataFrame"]').first.wait_for()
    app.page.evaluate(_OPEN_TABLES)
    problems.extend(scan_sizes(app, "sample runs / Runs"))
    assert app.page_errors == [], app.page_errors
    assert problems == [], "\n".join(problems)
