"""Report outputs: only complete, valid rows are resumed from; CSV text cannot run as a
spreadsheet formula and reads back exactly; JSON is strict; files follow the umask; a
configuration or output that cannot be read is one line naming the file."""

from __future__ import annotations

import csv
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens.analysis.corpus import (
    COLUMNS,
    ROW_STATUSES,
    CorpusRow,
    read_rows,
    run_corpus_report,
    write_csv,
    write_html,
    write_jsonl,
    write_rows,
)
from compactlens.cli import main

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_transcripts"
CONFIG = {"strategy": {"type": "sliding_window", "keep_last_turns": 2}}


def row(file: str, **kw: Any) -> CorpusRow:
    return CorpusRow(file=file, status=kw.pop("status", "compacted"), **kw)


def corpus(tmp_path: Path, names: list[str]) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    for name in names:
        (root / name).write_bytes((SAMPLES / "shopping_assistant.json").read_bytes())
    return root


def strict_loads(text: str) -> Any:
    def reject(constant: str) -> Any:
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=reject)


# ----------------------------------------------------------------------------- resume


def test_a_partial_last_row_is_not_taken_as_done(tmp_path: Path) -> None:
    root = corpus(tmp_path, ["a.json", "b.json"])
    out = tmp_path / "report.csv"
    write_csv([row("a.json", tokens_before=10, tokens_after=5)], out)
    with out.open("a", encoding="utf-8", newline="") as handle:
        handle.write("b.json,compac")  # what a kill during the append leaves
    problems: list[str] = []
    assert [r.file for r in read_rows(out, problems.append)] == ["a.json"]
    assert problems == [
        f"{out}: line 3: the last row is incomplete (no line end); its file is processed again"
    ]
    warnings: list[str] = []
    report = run_corpus_report(root, CONFIG, jobs=1, output=out, on_warning=warnings.append)
    assert report.skipped == 1 and report.processed == 1
    assert report.summary()["statuses"] == {"compacted": 2}  # no "compac"
    assert warnings == problems
    assert sorted(r.file for r in read_rows(out)) == ["a.json", "b.json"]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("b.json,compac\r\n", f"2 of {len(COLUMNS)} fields"),
        (",".join(["b.json", "compac", *[""] * (len(COLUMNS) - 2)]) + "\r\n", "'status'"),
        (",".join(["b.json", "compacted", "x", "many", *[""] * (len(COLUMNS) - 4)]) + "\r\n",
         "'messages_before'"),
    ],
)  # fmt: skip
def test_an_invalid_row_is_reported_with_file_and_line(tmp_path: Path, line: str, why: str) -> None:
    out = tmp_path / "report.csv"
    write_csv([row("a.json")], out)
    with out.open("a", encoding="utf-8", newline="") as handle:
        handle.write(line)
    problems: list[str] = []
    assert [r.file for r in read_rows(out, problems.append)] == ["a.json"]
    assert len(problems) == 1 and problems[0].startswith(f"{out}: line 3: ")
    assert why in problems[0] and "processed again" in problems[0]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".html"])
def test_an_unreadable_output_is_one_error_line_naming_it(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = corpus(tmp_path, ["a.json"])
    out = tmp_path / f"report{suffix}"
    out.write_bytes(b"\xff\xfe\x00garbage\x80")
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG), encoding="utf-8")
    code = main(["report", str(root), "--config", str(config), "-o", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"compactlens report: error: {out}: ")


def test_a_missing_configuration_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = corpus(tmp_path, ["a.json"])
    code = main(["report", str(root), "--config", str(tmp_path / "absent.json"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert (
        err
        == f"compactlens report: error: {tmp_path / 'absent.json'}: no such configuration file\n"
    )


def test_jsonl_and_html_resume_skip_invalid_rows(tmp_path: Path) -> None:
    out = tmp_path / "report.jsonl"
    write_jsonl([row("a.json")], out)
    with out.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"file": "b.json", "status": "compac"}) + "\n")
        handle.write('{"file": "c.json", "sta')
    problems: list[str] = []
    assert [r.file for r in read_rows(out, problems.append)] == ["a.json"]
    assert [p.split(": ")[1] for p in problems] == ["line 2", "line 3"]


# ----------------------------------------------------------------------------- CSV cells

TEXT_COLUMNS = ("file", "format", "reason", "problem_kinds", "warnings", "error")


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(
        st.one_of(
            st.sampled_from(["=1+1", "+SUM(A1)", "-2", "@x", "\tx", "\rx", "'=x", "''", "=", "'"]),
            st.text(min_size=1, max_size=12).filter(lambda t: "\x00" not in t),
        ),
        min_size=len(TEXT_COLUMNS),
        max_size=len(TEXT_COLUMNS),
    ),
    savings=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
)
def test_csv_text_cannot_start_a_formula_and_reads_back_exactly(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], savings: float
) -> None:
    values = dict(zip(TEXT_COLUMNS, texts, strict=True))
    original = row(status="failed", savings_usd=savings, **values)  # type: ignore[arg-type]
    out = tmp_path_factory.mktemp("csv") / "report.csv"
    write_csv([original], out)
    with out.open(encoding="utf-8", newline="") as handle:
        cells = next(iter(csv.DictReader(handle)))
    for name in TEXT_COLUMNS:
        assert not cells[name].startswith(("=", "+", "-", "@", "\t", "\r")), cells[name]
    assert float(cells["savings_usd"]) == savings  # numbers stay numbers
    assert read_rows(out) == [original]


# ----------------------------------------------------------------------------- strict JSON


def test_json_outputs_are_strict(tmp_path: Path) -> None:
    rows = [row("a.json", fact_recall=math.nan, savings_usd=math.inf)]
    write_jsonl(rows, tmp_path / "r.jsonl")
    data = strict_loads((tmp_path / "r.jsonl").read_text(encoding="utf-8"))
    assert data["fact_recall"] is None and data["savings_usd"] is None
    write_html(rows, tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    payload = html.split('id="compactlens-rows">')[1].split("</script>")[0]
    assert strict_loads(payload)[0]["fact_recall"] is None
    assert "NaN" not in payload and "Infinity" not in payload


def test_a_non_finite_number_read_back_is_invalid(tmp_path: Path) -> None:
    out = tmp_path / "report.jsonl"
    out.write_text(json.dumps({"file": "a.json", "status": "compacted", "savings_usd": "inf"}))
    problems: list[str] = []
    assert read_rows(out, problems.append) == []
    assert "'savings_usd'" in problems[0]
    assert set(ROW_STATUSES) == {"compacted", "unchanged", "cannot-fit", "failed"}


# ----------------------------------------------------------------------------- umask


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".html"])
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_outputs_follow_the_umask(tmp_path: Path, suffix: str, umask: int) -> None:
    out = tmp_path / f"report{suffix}"
    previous = os.umask(umask)
    try:
        write_rows([row("a.json")], out)
    finally:
        os.umask(previous)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


# ----------------------------------------------------------------------------- HTML in words


def test_the_html_report_is_in_words_and_its_table_scrolls_in_its_box(tmp_path: Path) -> None:
    # Review 6: snake_case headers, "mean fact recall 0.783698", "469392", statuses as
    # JSON, verdict codes, a table off the right edge.
    rows = [
        row(
            "a.json",
            tokens_before=469392,
            tokens_after=40000,
            fact_recall=0.783698,
            facts_extracted=1000,
            facts_lost=216,
            verdict="costs",
            costs="Fact recall is 78% | Compaction fires again",
        ),
        row("b.json", status="unchanged", tokens_before=248, tokens_after=248, verdict="safe"),
    ]
    write_html(rows, tmp_path / "r.html", config={"strategy": {"type": "truncation"}})
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    shown = page.split('<script type="application/json"')[0]
    assert "<th>tokens before</th>" in shown and "<th>facts found</th>" in shown
    assert not re.search(r"<t[hd][^>]*>[a-z]+_[a-z_]+</t[hd]>", shown)  # no code names
    assert "469,392" in shown and "469392" not in shown
    assert "<dd>78%</dd>" in shown and "0.78" not in shown
    assert ">Fits, with costs<" in shown and "1 Fits, with costs, 1 Fits and safe" in shown
    assert ">costs<" not in shown.split("<tbody>")[1]  # the level code is not shown
    assert "<dd>1 compacted, 1 unchanged</dd>" in shown and "{&quot;" not in shown
    assert "Fact recall is 78%<br>Compaction fires again" in shown
    assert '<div class="rows"><table>' in shown and ".rows{overflow-x:auto" in shown
    assert "<summary>The configuration file (JSON)</summary>" in shown
    assert read_rows(tmp_path / "r.html") == rows  # the embedded rows keep their columns
