"""The ``compactlens report`` command: one configuration over a folder of transcripts.

Wire it into a CLI with::

    sub = parser.add_subparsers(dest="command")
    add_report_parser(sub)          # sets ``func=run_report`` on its namespace
    args = parser.parse_args()
    return args.func(args)

or run it on its own: ``python -m compactlens.cli.report DIR --config C.json``.
Exit status: 0 when the run finished (failed files are rows, not errors; with
``--fail-on-error`` any failed row gives 1), 2 for a bad configuration or folder,
130 on Ctrl-C (SIGINT) and 143 on SIGTERM: the run stops its workers, writes the rows
it has and prints one line; running the same command again resumes.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from compactlens.analysis.corpus import (
    ENGINES,
    OUTPUT_SUFFIXES,
    CorpusRow,
    rows_text,
    run_corpus_report,
)

DESCRIPTION = """\
Run one compaction configuration over every transcript in DIR and write a table:
file, format, messages, tokens before/after, status, reason, fact recall, the
cache-surviving prefix, protocol problems and the run's verdict (verdict, costs,
next_step). CONFIG is JSON:
{"strategy": {...}} (a strategy or pipeline, as strategy_from_config reads it) or
{"compact": {"target_tokens": 20000, "keep_last_messages": 4}}, with optional
"tokenizer" and "analysis" ({"context_window": ..., "model": ..., "further_turns": ...});
examples/report_config.json is one. A strategy run that is not safe gets the next
step `compactlens compact` gives: the fix search re-runs up to 160 configurations
of that file, which takes seconds on a long log (--no-fix-search, or
"fix_search": false in CONFIG, keeps the verdict's own step). A failure on one
file is recorded in its row and never stops the run; with -o the run resumes,
skipping files already in the output (a row that is not complete and valid is
reported and its file processed again). Ctrl-C or SIGTERM stops the workers and
keeps the rows written so far."""

EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


class Terminated(BaseException):
    """SIGTERM arrived during a run (raised in the main thread, like KeyboardInterrupt)."""


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` in the main thread, so the
    run stops its workers and writes its rows as on Ctrl-C (no-op outside the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise Terminated(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class ProgressLine:
    """A one-line progress display on ``stream`` (a line every 5% when it is not a terminal)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.failed = 0
        self.last_step = -1
        self.written = False

    def __call__(self, done: int, total: int, row: CorpusRow) -> None:
        self.failed += int(row.failed)
        width = len(str(total))
        failed = f", {self.failed} failed" if self.failed else ""
        text = f"[{done:>{width}}/{total}] {done * 100 // max(total, 1):3d}%{failed}  {row.file}"
        if self.tty:
            self.stream.write("\r\x1b[2K" + text[:160])
            if done == total:
                self.stream.write("\n")
        else:
            step = done * 20 // max(total, 1)
            if step == self.last_step and done != total:
                return
            self.last_step = step
            self.stream.write(text + "\n")
        self.written = True
        self.stream.flush()


def add_report_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``report`` sub-command to an ``argparse`` sub-parsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "report",
        help="run one configuration over a folder of transcripts and tabulate the results",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    configure_parser(parser)
    return parser


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the report arguments to ``parser`` (used by :func:`add_report_parser` and ``main``)."""
    parser.add_argument("directory", metavar="DIR", help="folder of transcript files")
    parser.add_argument("--config", required=True, metavar="CONFIG.json", help="configuration")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=f"output table ({', '.join(OUTPUT_SUFFIXES)}); without it a table is printed",
    )
    parser.add_argument(
        "--jobs", type=int, default=None, help="parallel workers (default: the number of cores)"
    )
    parser.add_argument(
        "--engine", choices=ENGINES, default="process", help="process pool (default) or Ray"
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        help="with --engine ray: a Ray cluster address (default: a local instance)",
    )
    parser.add_argument(
        "--pattern", default="*.json", help="file pattern in DIR (default *.json; **/*.json)"
    )
    parser.add_argument(
        "--no-resume", action="store_true", help="process every file even if already in FILE"
    )
    parser.add_argument(
        "--no-fix-search",
        action="store_true",
        help="rows keep the verdict's own next step (faster: no fix search per file)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument(
        "--fail-on-error", action="store_true", help="exit with 1 when any file failed"
    )
    parser.set_defaults(func=run_report)
    return parser


def run_report(args: argparse.Namespace, *, stdout: TextIO | None = None) -> int:
    """Run the ``report`` command for parsed ``args``; returns the exit status."""
    out = stdout if stdout is not None else sys.stdout
    err = sys.stderr
    progress = None if args.quiet else ProgressLine(err)
    try:
        with sigterm_raises():
            report = run_corpus_report(args.directory, args.config, **run_kwargs(args, progress))
    except (ValueError, FileNotFoundError, RuntimeError, OSError) as exc:
        err.write(f"compactlens report: error: {exc}\n")
        return 2
    except (KeyboardInterrupt, Terminated) as exc:
        err.write(interrupted_line(args, progress, exc))
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    if args.output is None:
        out.write(rows_text(report.rows) + "\n")
    summary = report.summary()
    err.write("compactlens report: " + json.dumps(summary) + "\n")
    if args.fail_on_error and report.failed:
        return 1
    return 0


def run_kwargs(args: argparse.Namespace, progress: ProgressLine | None) -> dict[str, Any]:
    """Keyword arguments of :func:`run_corpus_report` for parsed ``args``."""
    return {
        "jobs": args.jobs,
        "engine": args.engine,
        "output": args.output,
        "resume": not args.no_resume,
        "progress": progress,
        "pattern": args.pattern,
        "ray_address": args.ray_address,
        "fix_search": False if args.no_fix_search else None,
        "on_warning": lambda text: sys.stderr.write(f"compactlens report: warning: {text}\n"),
    }


def interrupted_line(
    args: argparse.Namespace, progress: ProgressLine | None, exc: BaseException
) -> str:
    """The one line printed when a run is interrupted (after a progress line, if any)."""
    what = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
    lead = "\n" if progress is not None and progress.tty and progress.written else ""
    if args.output is None:
        return f"{lead}compactlens report: {what}; no output file (-o) to resume from\n"
    where = Path(args.output)
    return (
        f"{lead}compactlens report: {what}; the rows done so far are in {where}; "
        "run the same command again to resume\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="compactlens report",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    configure_parser(parser)
    return run_report(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
