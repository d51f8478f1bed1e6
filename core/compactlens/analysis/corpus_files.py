"""The files of a corpus run: writing the rows as CSV, Parquet, HTML or JSON lines
(atomically), reading them back to resume (reporting the rows that are not valid), and
a plain-text table for a terminal."""

from __future__ import annotations

import csv
import html
import importlib
import io
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compactlens.analysis.corpus_rows import COLUMN_TYPES, COLUMNS, CorpusRow
from compactlens.analysis.verdict import HEADLINES, percent
from compactlens.engine.vocabulary import money, plural
from compactlens.model.errors import ConfigError, UsageError
from compactlens.model.files import atomic_binary_file, atomic_text_file

OUTPUT_SUFFIXES = (".csv", ".parquet", ".html", ".htm", ".jsonl")
_HTML_DATA_ID = "compactlens-rows"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


#: First characters that make a spreadsheet read a cell as a formula (and the quote that
#: marks an escaped cell, so escaping can be undone exactly).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def csv_escape(text: str) -> str:
    """A text cell safe to open in a spreadsheet: a leading ``'`` before ``= + - @``, tab,
    CR or ``'`` (undone by :func:`csv_unescape`)."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_unescape(text: str) -> str:
    return text[1:] if text.startswith("'") else text


def csv_cells(row: CorpusRow) -> list[str]:
    """The CSV cells of ``row``: numbers as they are, text escaped with :func:`csv_escape`."""
    d = row.to_dict()
    return [csv_escape(_cell(d[c])) if COLUMN_TYPES[c] is str else _cell(d[c]) for c in COLUMNS]


def write_csv(rows: Sequence[CorpusRow], path: Path) -> None:
    with atomic_text_file(path, newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow(csv_cells(row))


def _strict_json(value: Any) -> str:
    """JSON text with no ``NaN`` / ``Infinity`` (written as null), which strict parsers reject."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), ensure_ascii=False, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def write_jsonl(rows: Sequence[CorpusRow], path: Path) -> None:
    with atomic_text_file(path) as handle:
        for row in rows:
            handle.write(_strict_json(row.to_dict()) + "\n")


def _pyarrow() -> Any:
    try:
        pyarrow = importlib.import_module("pyarrow")
        importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise UsageError(
            "writing or reading Parquet needs pyarrow: pip install pyarrow "
            "(or write .csv / .html instead)"
        ) from None
    return pyarrow


def write_parquet(rows: Sequence[CorpusRow], path: Path) -> None:
    pa = _pyarrow()
    types = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
    schema = pa.schema([(c, types[COLUMN_TYPES[c]]) for c in COLUMNS])
    table = pa.Table.from_pylist([r.to_dict() for r in rows], schema=schema)
    with atomic_binary_file(path) as handle:
        pa.parquet.write_table(table, handle)


def _summary(rows: Sequence[CorpusRow]) -> dict[str, Any]:
    ok = [r for r in rows if not r.failed]
    recalls = [r.fact_recall for r in ok if r.fact_recall is not None]
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    return {
        "files": len(rows),
        "failed": len(rows) - len(ok),
        "statuses": statuses,
        "mean_fact_recall": round(sum(recalls) / len(recalls), 6) if recalls else None,
        "tokens_before": sum(r.tokens_before or 0 for r in ok),
        "tokens_after": sum(r.tokens_after or 0 for r in ok),
        "files_with_problems": sum(1 for r in ok if r.problems),
    }


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5rem;color:#1d1d1f}
h1{font-size:1.3rem} table{border-collapse:collapse;font-size:.82rem}
th,td{border:1px solid #d0d0d7;padding:.25rem .45rem;vertical-align:top;text-align:left}
th{background:#f0f0f5;position:sticky;top:0;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.text{min-width:16rem;max-width:32rem} td.word{white-space:nowrap}
tr.failed td{background:#fde8e8} tr.cannot-fit td{background:#fff6dd}
pre{background:#f6f6f9;padding:.5rem;font-size:.78rem;overflow:auto;max-width:100%}
dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}
.rows{overflow-x:auto;max-width:100%;border:1px solid #d0d0d7}
"""

#: The table of the HTML report: (column, header in words), the verdict first. The
#: machine files (CSV, JSON lines, Parquet, the rows embedded in the page) keep the
#: column names.
HTML_COLUMNS: tuple[tuple[str, str], ...] = (
    ("file", "file"),
    ("verdict", "verdict"),
    ("costs", "costs"),
    ("next_step", "next step"),
    ("status", "status"),
    ("format", "format"),
    ("tokens_before", "tokens before"),
    ("tokens_after", "tokens after"),
    ("messages_before", "messages before"),
    ("messages_after", "messages after"),
    ("fact_recall", "fact recall"),
    ("facts_extracted", "facts found"),
    ("facts_lost", "facts lost"),
    ("latest_request_lost", "latest request lost"),
    ("turns_until_trigger", "turns until the next trigger"),
    ("problems", "protocol problems"),
    ("problems_introduced", "new protocol problems"),
    ("problem_kinds", "kinds of problem"),
    ("warnings", "warnings"),
    ("cache_prefix_messages", "cached prefix (messages)"),
    ("cache_prefix_tokens", "cached prefix (tokens)"),
    ("cache_rewrite_tokens", "cache rewrite (tokens)"),
    ("break_even_turn", "breaks even at turn"),
    ("savings_usd", "savings"),
    ("reason", "reason"),
    ("error", "error"),
    ("duration_ms", "time"),
)
assert {c for c, _ in HTML_COLUMNS} == set(COLUMNS)

#: The verdict's headline by level (a row holds the level).
_HEADLINES: dict[str, str] = {str(k): v for k, v in HEADLINES.items()}

#: Columns of sentences: wide enough to read, wrapped inside the scrolling table; and
#: columns of a word or two, never wrapped.
_TEXT_COLUMNS = frozenset({"costs", "next_step", "reason", "error", "warnings"})
_WORD_COLUMNS = frozenset({"verdict", "status", "format"})


def _cell_class(column: str) -> str:
    if COLUMN_TYPES[column] in (int, float):
        return ' class="num"'
    if column in _TEXT_COLUMNS:
        return ' class="text"'
    return ' class="word"' if column in _WORD_COLUMNS else ""


def _recall_words(row: CorpusRow) -> str:
    """The row's fact recall as the verdict says it (``78%``, ``over 99%``)."""
    if row.facts_extracted:
        return percent(row.facts_extracted - (row.facts_lost or 0), row.facts_extracted)
    return _share(row.fact_recall)


def _share(value: float | None) -> str:
    """A share from 0 to 1 as a whole percentage (empty when not a number)."""
    if value is None or not math.isfinite(value):
        return ""
    return percent(round(value * 1000), 1000)


def _shown(row: CorpusRow, column: str) -> str:
    """One cell of the HTML table in words: numbers with thousands separators, recall as
    a percentage, the verdict's headline, yes/no, costs one per line."""
    value = row.to_dict()[column]
    if value is None:
        return ""
    if column == "verdict":
        return _HEADLINES.get(str(value), str(value))
    if column == "fact_recall":
        return _recall_words(row)
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    if column == "savings_usd":
        return money(value)
    if column == "duration_ms":
        return f"{float(value):,.0f} ms"
    if column == "costs":
        return "\n".join(c for c in str(value).split(" | ") if c)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _summary_words(rows: Sequence[CorpusRow]) -> list[tuple[str, str]]:
    """The report's summary as (label, words): counts by verdict and status, the mean
    recall as a percentage, token totals with separators."""
    numbers = _summary(rows)
    verdicts: dict[str, int] = {}
    for r in rows:
        if r.verdict is not None:
            verdicts[r.verdict] = verdicts.get(r.verdict, 0) + 1
    statuses = ", ".join(f"{n:,} {name}" for name, n in numbers["statuses"].items())
    out = [("files", f"{numbers['files']:,}"), ("failed", f"{numbers['failed']:,}")]
    if verdicts:
        out.append(
            (
                "verdicts",
                ", ".join(f"{n:,} {_HEADLINES.get(v, v)}" for v, n in verdicts.items()),
            )
        )
    out.append(("runs", statuses or "none"))
    mean = numbers["mean_fact_recall"]
    if _share(mean):
        out.append(("mean fact recall", _share(mean)))
    out += [
        ("tokens before", f"{numbers['tokens_before']:,}"),
        ("tokens after", f"{numbers['tokens_after']:,}"),
        ("files with protocol problems", f"{numbers['files_with_problems']:,}"),
    ]
    return out


def render_html(
    rows: Sequence[CorpusRow], *, title: str = "compactlens corpus report", config: Any = None
) -> str:
    """A self-contained HTML page in words: a summary, the table (plain headers, numbers
    with separators, the verdict's headline; it scrolls inside its box) and the
    configuration file. The rows are embedded as JSON with their column names, for
    resuming. All text is escaped."""
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1><dl>",
    ]
    parts += [f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in _summary_words(rows)]
    parts.append('</dl><div class="rows"><table><thead><tr>')
    parts.extend(f"<th>{esc(label)}</th>" for _, label in HTML_COLUMNS)
    parts.append("</tr></thead><tbody>")
    for row in rows:
        parts.append(f'<tr class="{esc(row.status)}">')
        for c, _ in HTML_COLUMNS:
            parts.append(f"<td{_cell_class(c)}>{esc(_shown(row, c)).replace(chr(10), '<br>')}</td>")
        parts.append("</tr>")
    parts.append("</tbody></table></div>")
    if config is not None:
        parts.append(
            "<h2>Configuration</h2><details><summary>The configuration file (JSON)</summary>"
            f"<pre>{esc(json.dumps(config, indent=2))}</pre></details>"
        )
    payload = _strict_json([r.to_dict() for r in rows])
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    parts.append(f'<script type="application/json" id="{_HTML_DATA_ID}">{payload}</script>')
    parts.append("</body></html>")
    return "\n".join(parts)


def write_html(rows: Sequence[CorpusRow], path: Path, *, config: Any = None) -> None:
    with atomic_text_file(path) as handle:
        handle.write(render_html(rows, config=config))


def write_rows(rows: Sequence[CorpusRow], path: Path, *, config: Any = None) -> None:
    """Write ``rows`` in the format of ``path``'s suffix."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        write_csv(rows, path)
    elif suffix == ".parquet":
        write_parquet(rows, path)
    elif suffix in (".html", ".htm"):
        write_html(rows, path, config=config)
    elif suffix == ".jsonl":
        write_jsonl(rows, path)
    else:
        raise ConfigError(f"unknown output type {suffix!r}; use one of {OUTPUT_SUFFIXES}")


def read_rows(path: Path, on_problem: Callable[[str], None] | None = None) -> list[CorpusRow]:
    """The valid rows of an earlier output file (empty when it does not exist).

    A row that is not valid (a partial last row, the wrong number of fields, an unknown
    status, a value of the wrong type) is left out and described to ``on_problem``
    (naming the file and line), so its file is processed again. ConfigError (a ValueError)
    naming the file when it cannot be read at all (not UTF-8, not a compactlens output).
    """
    if not path.exists():
        return []
    problems: list[str] = []
    try:
        rows = _read_rows(path, problems)
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: cannot resume from it: not UTF-8 text (byte {exc.start}); "
            "move it away or pass --no-resume"
        ) from None
    for problem in problems:
        if on_problem is not None:
            on_problem(problem)
    return rows


def _read_rows(path: Path, problems: list[str]) -> list[CorpusRow]:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _read_csv(path, problems)
    if suffix == ".parquet":
        pa = _pyarrow()
        try:
            records = pa.parquet.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow raises its own error types
            raise ConfigError(
                f"{path}: cannot resume from it: not a Parquet table ({exc})"
            ) from None
        return _valid_rows(path, [(f"row {i + 1}", r) for i, r in enumerate(records)], problems)
    if suffix in (".html", ".htm"):
        text = path.read_text(encoding="utf-8")
        marker = f'<script type="application/json" id="{_HTML_DATA_ID}">'
        start = text.find(marker)
        end = text.find("</script>", start)
        if start < 0 or end < 0:
            raise ConfigError(f"{path}: no embedded rows; it was not written by compactlens")
        try:
            records = json.loads(text[start + len(marker) : end])
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: the embedded rows are not valid JSON ({exc})") from None
        if not isinstance(records, list):
            raise ConfigError(f"{path}: the embedded rows are not a JSON list")
        return _valid_rows(path, [(f"row {i + 1}", r) for i, r in enumerate(records)], problems)
    if suffix == ".jsonl":
        return _read_jsonl(path, problems)
    raise ConfigError(f"unknown output type {suffix!r}; use one of {OUTPUT_SUFFIXES}")


def _valid_rows(
    path: Path, records: Iterable[tuple[str, Any]], problems: list[str]
) -> list[CorpusRow]:
    rows = []
    for where, record in records:
        if not isinstance(record, Mapping):
            problems.append(f"{path}: {where}: not an object; its file is processed again")
            continue
        try:
            rows.append(CorpusRow.from_dict(record))
        except ValueError as exc:
            problems.append(f"{path}: {where}: {exc}; its file is processed again")
    return rows


def _read_jsonl(path: Path, problems: list[str]) -> list[CorpusRow]:
    rows: list[CorpusRow] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(
                f"{path}: line {n}: not JSON ({exc.msg}; a partial row?); "
                "its file is processed again"
            )
            continue
        rows.extend(_valid_rows(path, [(f"line {n}", record)], problems))
    return rows


def _read_csv(path: Path, problems: list[str]) -> list[CorpusRow]:
    with path.open(encoding="utf-8", newline="") as handle:  # a CR inside a cell stays
        text = handle.read()
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        records = [(reader.line_num, cells) for cells in reader]
    except csv.Error as exc:
        raise ConfigError(f"{path}: line {reader.line_num}: not CSV ({exc})") from None
    if header is None:
        return []
    if "file" not in header or "status" not in header:
        raise ConfigError(f"{path}: line 1: not a compactlens report (no file/status columns)")
    if records and not text.endswith(("\n", "\r")):
        line, _ = records.pop()  # written up to a kill: its last field may be cut short
        problems.append(
            f"{path}: line {line}: the last row is incomplete (no line end); "
            "its file is processed again"
        )
    valid: list[tuple[str, Any]] = []
    for line, cells in records:
        if len(cells) != len(header):
            problems.append(
                f"{path}: line {line}: {len(cells)} of {len(header)} fields (a partial "
                "row); its file is processed again"
            )
            continue
        record = {
            name: csv_unescape(value) if COLUMN_TYPES.get(name) is str else value
            for name, value in zip(header, cells, strict=True)
        }
        valid.append((f"line {line}", record))
    return _valid_rows(path, valid, problems)


class _CsvAppender:
    """Appends finished rows to a CSV output so that an interrupted run can resume.

    The file is first rewritten with the ``kept`` rows alone (atomically), so a partial
    row left by a killed run never has a new row appended to it.
    """

    def __init__(self, path: Path, *, kept: Sequence[CorpusRow]) -> None:
        write_csv(kept, path)
        self.handle = path.open("a", encoding="utf-8", newline="")
        self.writer = csv.writer(self.handle)

    def add(self, row: CorpusRow) -> None:
        self.writer.writerow(csv_cells(row))
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


def rows_table(rows: Iterable[CorpusRow], columns: Sequence[str] | None = None) -> str:
    """A plain-text table of ``rows`` (for a terminal)."""
    cols = list(
        columns
        or (
            "file",
            "status",
            "tokens_before",
            "tokens_after",
            "fact_recall",
            "cache_prefix_messages",
            "problems",
            "error",
        )
    )
    data = [[_cell(r.to_dict()[c]) for c in cols] for r in rows]
    widths = [min(60, max([len(c)] + [len(row[i]) for row in data])) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))]
    for row in data:
        lines.append("  ".join(v[:w].ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def rows_text(rows: Iterable[CorpusRow]) -> str:
    """What ``compactlens report`` prints without ``-o``: a block per file, its name in
    full, then the run's verdict and numbers on one line, each cost, and the next step
    (the same sentences the output files hold; nothing cut to a column width)."""
    blocks = [_row_block(r) for r in rows]
    return "\n\n".join(blocks) if blocks else "(no transcript found)"


def _row_block(row: CorpusRow) -> str:
    if row.failed:
        return f"{row.file}\n  failed: {row.error or 'no reason recorded'}"
    headlines: dict[str | None, str] = {k: v for k, v in HEADLINES.items()}
    head = [headlines.get(row.verdict), row.status]
    before, after = row.tokens_before, row.tokens_after
    if before is not None and after is not None:
        # As the verdict's summary says it: a history nothing changed is left as it is.
        same = before == after and row.messages_before == row.messages_after
        head.append(
            f"{before:,} tokens, left as they are" if same else f"{before:,} to {after:,} tokens"
        )
    if row.facts_extracted:
        kept = row.facts_extracted - (row.facts_lost or 0)
        head.append(
            f"{percent(kept, row.facts_extracted)} fact recall "
            f"({kept:,} of {row.facts_extracted:,})"
        )
    if row.problems_introduced is not None:
        n = row.problems_introduced
        head.append("no new provider error" if n == 0 else plural(n, "new provider error"))
    lines = [row.file, "  " + " · ".join(h for h in head if h)]
    lines += [f"  cost: {c}" for c in (row.costs or "").split(" | ") if c]
    if row.next_step:
        lines.append(f"  next step: {row.next_step}")
    return "\n".join(lines)
