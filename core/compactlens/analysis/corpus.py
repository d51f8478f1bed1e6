"""Run one compaction configuration over every transcript of a folder and tabulate it.

:func:`run_corpus_report` compacts each ``*.json`` transcript with one setup, analyzes
the result (:func:`compactlens.analysis.report.analyze`) and writes one row per file:
file, format, messages, tokens before/after, status, reason, fact recall, the
cache-surviving prefix, protocol problems and more (:data:`COLUMNS`).

* **Configuration** (a dict or a JSON file)::

      {"strategy": {...strategy_from_config dict...}}
      {"compact": {"target_tokens": 20000, "keep_last_messages": 4}}

  plus optional ``"tokenizer"`` (``"estimate"``, ``"o200k_base"``, ``"cl100k_base"``
  or a model name), ``"format"`` (wire format name) and ``"analysis"``
  (``context_window``, ``further_turns``, ``model``, ``prices``, ``growth_per_turn``,
  ``max_fraction``, ``providers``), and ``"fix_search": false`` to skip the fix search.
  Summarization stages and ``compact`` use the offline
  :class:`~compactlens.summarizers.extractive.ExtractiveSummarizer`.
* **Next step**: the ``next_step`` of a strategy run that is not safe is the one
  ``compactlens compact``, ``debug()`` and the inspector give
  (:func:`~compactlens.analysis.advised` over the fix search, each fix judged as its own
  row would be). The search re-runs up to 160 configurations of that file: on the
  shared corpus of 14 agent logs the files' work takes about 3.5 times as long (3.4 s
  instead of 1.0 s on a busy 2-core machine; 1.5 s for the 100,000-token Claude Code
  log); ``fix_search`` off keeps the verdict's own step. ``compact`` runs have no
  search.
* **Parallel**: ``engine="process"`` uses a :class:`~concurrent.futures.ProcessPoolExecutor`
  with ``jobs`` workers (default: the number of cores; ``jobs=1`` runs in this
  process); ``engine="ray"`` sends the same function to Ray (optional dependency).
* **Robust**: a failure on one file (unreadable JSON, a bad transcript, even a crashed
  worker process) is recorded in that file's row with status ``failed`` and never
  stops the run.
* **No stray workers**: a worker exits as soon as the process that started it is gone
  (killed with SIGKILL included: ``PR_SET_PDEATHSIG`` on Linux, and a watch on the
  parent's PID everywhere) and ignores SIGINT, so a Ctrl-C reaches only the parent,
  which stops the pool, terminates the workers and writes what it has.
* **Resumable**: with ``resume=True`` the files already in ``output`` are skipped and
  their rows kept. Only valid rows count as done: a partial last row (a run killed
  while writing it), a row with the wrong number of fields, an unknown status or a
  value of the wrong type is reported (``on_warning``) and its file processed again;
  an output that cannot be read at all is an error naming the file. CSV rows are
  appended as they finish; every format is rewritten, sorted by file, when the run
  ends (or is interrupted).
* **Outputs** by suffix: ``.csv`` (the csv module; text cells that a spreadsheet would
  run as a formula, starting with ``= + - @``, tab or CR, are written with a leading
  ``'``, which reading removes), ``.parquet`` (pyarrow, optional), ``.html`` (one
  self-contained page, all text escaped, rows embedded as JSON for resuming) and
  ``.jsonl`` (strict JSON: no ``NaN``). Files are created with the mode the umask
  gives (as ``open()`` would), replaced atomically.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from compactlens.analysis.corpus_config import CorpusConfig
from compactlens.analysis.corpus_files import (
    OUTPUT_SUFFIXES,
    _CsvAppender,
    _summary,
    csv_cells,
    csv_escape,
    csv_unescape,
    read_rows,
    render_html,
    rows_table,
    rows_text,
    write_csv,
    write_html,
    write_jsonl,
    write_parquet,
    write_rows,
)
from compactlens.analysis.corpus_rows import (
    COLUMN_TYPES,
    COLUMNS,
    ROW_STATUSES,
    CorpusRow,
    failed_row,
    row_from_report,
)
from compactlens.analysis.corpus_workers import (
    ENGINES,
    RAY_LOCAL_ENV,
    Engine,
    Worker,
    _default_jobs,
    _run_inline,
    _run_processes,
    _run_ray,
    load_messages,
    process_file,
    worker_init,
)
from compactlens.model.display import card_html, card_text
from compactlens.model.errors import ConfigError
from compactlens.model.validation import check_int


@dataclass(frozen=True, slots=True)
class CorpusReport:
    """The rows of a corpus run (kept rows from a resumed output included), sorted by file."""

    rows: tuple[CorpusRow, ...]
    output: Path | None
    processed: int
    skipped: int
    duration_s: float
    engine: str
    jobs: int
    #: Whether rows that are not safe got their next step from the fix search.
    fix_search: bool = True

    @property
    def failed(self) -> tuple[CorpusRow, ...]:
        return tuple(r for r in self.rows if r.failed)

    def summary(self) -> dict[str, Any]:
        return {
            **_summary(self.rows),
            "processed": self.processed,
            "skipped": self.skipped,
            "duration_s": round(self.duration_s, 3),
            "engine": self.engine,
            "jobs": self.jobs,
            "fix_search": self.fix_search,
            "output": str(self.output) if self.output else None,
        }

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` with one row per transcript, the corpus table's columns
        (pandas: the notebook extra)."""
        from compactlens.analysis.display import corpus_frame

        return corpus_frame(self.rows)

    def __repr__(self) -> str:
        from compactlens.analysis.display import corpus_card

        return card_text(corpus_card(self))

    def _repr_html_(self) -> str:
        from compactlens.analysis.display import corpus_card

        return card_html(corpus_card(self))


Progress = Callable[[int, int, CorpusRow], None]


def find_transcripts(directory: Path, pattern: str = "*.json") -> list[Path]:
    """The files of ``directory`` matching ``pattern`` (``**/*.json`` to recurse), sorted.

    Names starting with ``.`` or ``_`` are skipped.
    """
    out = []
    for path in sorted(directory.glob(pattern)):
        rel = path.relative_to(directory)
        if path.is_file() and not any(part.startswith((".", "_")) for part in rel.parts):
            out.append(path)
    return out


def run_corpus_report(
    directory: str | os.PathLike[str],
    config: str | os.PathLike[str] | Mapping[str, Any] | CorpusConfig,
    *,
    jobs: int | None = None,
    engine: Engine = "process",
    output: str | os.PathLike[str] | None = None,
    resume: bool = True,
    progress: Progress | None = None,
    pattern: str = "*.json",
    checkpoint_seconds: float = 30.0,
    ray_address: str | None = None,
    on_warning: Callable[[str], None] | None = None,
    fix_search: bool | None = None,
) -> CorpusReport:
    """Run ``config`` over every transcript in ``directory`` (see the module docstring).

    ``progress(done, total, row)`` is called after each file; ``on_warning(text)`` for
    each row of ``output`` that could not be resumed from. With ``engine="ray"`` the
    run uses the Ray instance this process already initialized, else the cluster at
    ``ray_address``, else a new local instance (loopback only, usage stats off) that is
    shut down afterwards. ``fix_search`` (default: the configuration's, on) gives each row
    that is not safe the run's one next step from the fix search, as ``compactlens
    compact`` does; it re-runs up to :data:`~compactlens.analysis.fixes.MAX_CANDIDATES`
    configurations of that file. Returns the rows of all files, including those kept from
    ``output`` when resuming.
    """
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"not a directory: {root}")
    if engine not in ENGINES:
        raise ConfigError(f"engine must be one of {ENGINES}, got {engine!r}")
    cfg = CorpusConfig.load(config)
    if fix_search is not None:
        cfg = replace(cfg, fix_search=fix_search)
    cfg_dict = cfg.to_dict()
    n_jobs = _default_jobs() if jobs is None else check_int("jobs", jobs)
    out_path = Path(output) if output is not None else None
    if out_path is not None and out_path.suffix.lower() not in OUTPUT_SUFFIXES:
        raise ConfigError(f"unknown output type {out_path.suffix!r}; use one of {OUTPUT_SUFFIXES}")

    kept: dict[str, CorpusRow] = {}
    if out_path is not None and resume:
        kept = {r.file: r for r in read_rows(out_path, on_warning)}
    files = find_transcripts(root, pattern)
    tasks = [
        (str(p), p.relative_to(root).as_posix())
        for p in files
        if p.relative_to(root).as_posix() not in kept
    ]
    skipped = len(files) - len(tasks)
    rows: dict[str, CorpusRow] = dict(kept)
    total = len(tasks)
    start = time.perf_counter()
    done_count = 0
    last_checkpoint = time.monotonic()
    append = None
    if out_path is not None and out_path.suffix.lower() == ".csv":
        append = _CsvAppender(out_path, kept=sorted(kept.values(), key=lambda r: r.file))

    def finish() -> None:
        if out_path is not None:
            write_rows(sorted(rows.values(), key=lambda r: r.file), out_path, config=cfg_dict)

    def emit(row: CorpusRow) -> None:
        nonlocal done_count, last_checkpoint
        rows[row.file] = row
        done_count += 1
        if append is not None:
            append.add(row)
        elif out_path is not None and time.monotonic() - last_checkpoint > checkpoint_seconds:
            finish()
            last_checkpoint = time.monotonic()
        if progress is not None:
            progress(done_count, total, row)

    if engine == "ray":
        mode = "ray"
    elif n_jobs == 1 or total <= 1:
        mode = "inline"
    else:
        mode = "process"
    try:
        if not tasks:
            pass
        elif mode == "ray":
            _run_ray(tasks, cfg_dict, n_jobs, emit, ray_address)
        elif mode == "inline":
            _run_inline(tasks, cfg_dict, emit)
        else:
            _run_processes(tasks, cfg_dict, min(n_jobs, total), emit)
    finally:
        if append is not None:
            append.close()
        finish()
    return CorpusReport(
        rows=tuple(sorted(rows.values(), key=lambda r: r.file)),
        output=out_path,
        processed=done_count,
        skipped=skipped,
        duration_s=time.perf_counter() - start,
        engine=mode,
        jobs=n_jobs,
        fix_search=cfg.fix_search,
    )


__all__ = [
    "COLUMNS",
    "COLUMN_TYPES",
    "ENGINES",
    "OUTPUT_SUFFIXES",
    "RAY_LOCAL_ENV",
    "ROW_STATUSES",
    "CorpusConfig",
    "CorpusReport",
    "CorpusRow",
    "Engine",
    "Progress",
    "Worker",
    "csv_cells",
    "csv_escape",
    "csv_unescape",
    "failed_row",
    "find_transcripts",
    "load_messages",
    "process_file",
    "read_rows",
    "render_html",
    "row_from_report",
    "rows_table",
    "rows_text",
    "run_corpus_report",
    "worker_init",
    "write_csv",
    "write_html",
    "write_jsonl",
    "write_parquet",
    "write_rows",
]
