"""The ``compactlens report`` command: one configuration over a folder of transcripts.

Wire it into a CLI with::

    sub = parser.add_subparsers(dest="command")
    add_report_parser(sub)          # sets ``func=run_report`` on its namespace
    args = parser.parse_args()
    return args.func(args)

or run it on its own: ``python -m compactlens.cli.report DIR --config C.json``.
Exit status: 0 when the run finished (failed files are rows, not errors; with
``--fail-on-error`` any failed row gives 1), 2 for a bad configuration or folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from compactlens.analysis.corpus import (
    ENGINES,
    OUTPUT_SUFFIXES,
    CorpusRow,
    rows_table,
    run_corpus_report,
)

DESCRIPTION = """\
Run one compaction configuration over every transcript in DIR and write a table:
file, format, messages, tokens before/after, status, reason, fact recall, the
cache-surviving prefix and protocol problems. CONFIG is JSON:
{"strategy": {...}} (a strategy or pipeline, as strategy_from_config reads it) or
{"compact": {"target_tokens": 20000, "keep_last_messages": 4}}, with optional
"tokenizer" and "analysis" ({"context_window": ..., "model": ..., "further_turns": ...}).
A failure on one file is recorded in its row and never stops the run; with -o the run
resumes, skipping files already in the output."""


class ProgressLine:
    """A one-line progress display on ``stream`` (a line every 5% when it is not a terminal)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.failed = 0
        self.last_step = -1

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
        report = run_corpus_report(
            args.directory,
            args.config,
            jobs=args.jobs,
            engine=args.engine,
            output=args.output,
            resume=not args.no_resume,
            progress=progress,
            pattern=args.pattern,
            ray_address=args.ray_address,
        )
    except (ValueError, FileNotFoundError, RuntimeError, OSError) as exc:
        err.write(f"compactlens report: error: {exc}\n")
        return 2
    if args.output is None:
        out.write(rows_table(report.rows) + "\n")
    summary = report.summary()
    err.write("compactlens report: " + json.dumps(summary) + "\n")
    if args.fail_on_error and report.failed:
        return 1
    return 0


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
