"""Prose speaks the vocabulary, not the code (issue 25, build item 2).

Every page's prose (Markdown, captions, alerts, headings, metric labels and values,
expander, tab and button labels, help texts, table headers and text cells) is scanned on
the bundled samples under each strategy preset: no parameter or stage type name
(``keep_last_tool_call_groups``, ``tool_result_collapse``), no ``<=``/``≤``/``>=`` condition
and no plural that disagrees with its count ("1 destructive fixes"). Code views
(``st.code``, ``st.json``, the configuration's own tables) keep the names a user types, so
they are not scanned.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apptest_helpers import PAGES, REPO_ROOT, no_exceptions
from google.protobuf.message import Message
from streamlit.testing.v1 import AppTest

from compactlens.engine.vocabulary import PARAMETERS, STAGES

BUNDLED = REPO_ROOT / "sample_transcripts"
PRESETS = (
    "reference",
    "compact",
    "context_window",
    "sliding_window",
    "tool_collapse",
    "truncation",
)
#: The pages that write prose about a run.
PROSE_PAGES = ("landing", "story", "lab", "diff", "timeline", "cannot_fit", "analysis", "sweep")

#: Code names: every parameter and stage type whose name is not already an English word.
CODE_NAMES = sorted(
    {name for name in (*PARAMETERS, *STAGES) if "_" in name}
    | {"keep_last_messages", "keep_latest_request", "target_count"}
)
_CODE = re.compile(r"(?<![\w/.-])(" + "|".join(map(re.escape, CODE_NAMES)) + r")(?![\w/.-])")
#: A comparison operator written as code in prose.
_OPERATOR = re.compile(r"(<=|>=|≤|≥|\b(?:tokens|messages|groups|turns) [<>] \d)")
#: "1 fixes", "1 groups are": a count of one with a plural noun.
_ONE_PLURAL = re.compile(r"(?<![\d.,])\b1 (?:\w+ )?(?:fixes|groups|messages|tokens|turns|calls)\b")

#: (proto type, field) pairs that are code views or not shown as text.
_SKIP_KINDS = {"Code", "Json", "PlotlyChart", "Arrow", "DataFrame", "Exception"}
_SKIP_FIELDS = {"id", "form_id", "key", "url", "page_script_hash", "data_id", "icon", "spec"}
#: Tables that are a configuration (a code view): their cells are what a user types.
CODE_TABLES = {"lab_config_json", "export_config"}


def _strings(msg: Message) -> Iterator[tuple[str, str, str]]:
    for field, value in msg.ListFields():
        values = value if isinstance(value, list) or hasattr(value, "extend") else [value]
        for v in values:
            if isinstance(v, Message):
                yield from _strings(v)
            elif isinstance(v, str):
                yield msg.DESCRIPTOR.name, field.name, v


def _nodes(node: Any) -> Iterator[Any]:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _nodes(child)


def prose(at: AppTest) -> list[str]:
    """Every piece of prose the page shows, code views left out."""
    out: list[str] = []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        if not isinstance(proto, Message) or proto.DESCRIPTOR.name in _SKIP_KINDS:
            continue
        for kind, field, value in _strings(proto):
            if kind not in _SKIP_KINDS and field not in _SKIP_FIELDS:
                out.append(value)
    for table in at.dataframe:
        if table.key in CODE_TABLES:
            continue
        frame = table.value
        out.extend(str(c) for c in frame.columns)
        for column in frame.columns:
            if frame[column].dtype == object or str(frame[column].dtype) in ("str", "string"):
                out.extend(str(v) for v in frame[column] if isinstance(v, str))
    return out


def problems(texts: list[str]) -> list[str]:
    """Each piece of prose that writes a code name, an operator or a wrong plural."""
    found: list[str] = []
    for text in texts:
        clean = text.replace("\\", "")
        checks = ((_CODE, "code name"), (_OPERATOR, "operator"), (_ONE_PLURAL, "plural"))
        for pattern, what in checks:
            m = pattern.search(clean)
            if m:
                found.append(f"{what} {m.group(0)!r} in {clean[:140]!r}")
    return found


def test_the_scan_finds_what_it_looks_for() -> None:
    bad = [
        "Tool-result collapse: keep_last_tool_call_groups 175",
        "trigger tokens <= 4300",
        "tool_result_collapse missed its own target",
        "1 destructive fixes are hidden",
    ]
    assert len(problems(bad)) == len(bad)
    good = [
        "Tool-result collapse: newest tool calls kept verbatim 175",
        "at most 4,300 tokens",
        "1 destructive fix is hidden; 2 groups; 11 fixes",
        "src/tool_result_collapse.py",  # a path in a transcript is not a code name of ours
    ]
    assert problems(good) == []


COMBOS = [("coding_agent", p) for p in PRESETS] + [
    (path.stem, "reference")
    for path in sorted([*BUNDLED.glob("*.json"), *BUNDLED.glob("*.jsonl")])
    if not path.name.startswith("_") and path.stem != "coding_agent"
]


@pytest.mark.parametrize(("sample", "preset"), COMBOS)
def test_prose_has_no_code_names(
    app: Any, sample: str, preset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(BUNDLED))
    at = app(sample=sample, preset=preset).run()
    no_exceptions(at)
    found: list[str] = []
    for page in PROSE_PAGES:
        at.switch_page(f"{PAGES}{page}.py").run()
        no_exceptions(at)
        found.extend(f"{page}: {p}" for p in problems(prose(at)))
    assert found == [], "\n".join(dict.fromkeys(found))


def test_bundled_samples_exist() -> None:
    assert Path(BUNDLED / "coding_agent.json").is_file()
