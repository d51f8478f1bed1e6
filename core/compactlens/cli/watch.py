"""``compactlens watch DIR``: one line per model call as agents write recordings to DIR.

Each line is the call's time, its run, its tokens before -> after and its status
(``unchanged``, ``compacted``, ``cannot-fit``...). The folder is read incrementally
(:class:`~compactlens.integrations.runs.RunsFolder`): each look reads only the bytes
appended since the previous one. ``--once`` prints every call already there and exits;
without it the command follows the folder until Ctrl-C (exit code 130).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any, TextIO

from compactlens.cli.errors import CliError
from compactlens.engine.vocabulary import plural
from compactlens.integrations.runs import CallSummary, RunsFolder
from compactlens.model.errors import ConfigError

EXIT_OK = 0


def add_watch_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``watch`` sub-command to an ``argparse`` sub-parsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "watch",
        help="follow a folder of recordings: one line per model call",
        description="Follow a folder an agent records to (record_to=DIR): one line per model "
        "call with its time, run, tokens before -> after and status. Ctrl-C stops it.",
    )
    parser.add_argument("directory", metavar="DIR", help="the folder of recordings")
    parser.add_argument(
        "--once", action="store_true", help="print the calls already recorded and exit"
    )
    parser.add_argument(
        "--all", action="store_true", help="print the calls already recorded before following"
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="how often to look for new calls (default 1)",
    )
    return parser


def _tokens(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def call_line(call: CallSummary) -> str:
    """``HH:MM:SS  run  #seq  before -> after tokens  status``."""
    stamp = call.timestamp or ""
    clock = stamp[11:19] if len(stamp) >= 19 else "--:--:--"
    return (
        f"{clock}  {call.run}  #{call.seq}  "
        f"{_tokens(call.tokens_before)} → {_tokens(call.tokens_after)} tokens  {call.status}"
    )


def watch(
    folder: RunsFolder,
    out: TextIO,
    err: TextIO,
    *,
    once: bool = False,
    show_existing: bool = False,
    interval: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Print the folder's calls as they arrive (see the module)."""
    reported: set[str] = set()

    def look(show: bool) -> None:
        update = folder.refresh()
        if show:
            for call in update.calls:
                out.write(call_line(call) + "\n")
        for problem in folder.problems:
            key = f"{problem.name}: {problem.reason}"
            if key not in reported and not problem.reason.startswith("partial"):
                reported.add(key)
                err.write(f"{problem.name}: skipped ({problem.reason})\n")
        out.flush()

    look(once or show_existing)
    if once:
        return EXIT_OK
    runs = folder.runs
    out.write(
        f"watching {folder.folder}: {plural(len(runs), 'run')}, "
        f"{plural(sum(r.calls for r in runs), 'call')} so far; Ctrl-C to stop\n"
    )
    out.flush()
    while True:
        sleep(interval)
        look(True)


def run_watch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.interval <= 0:
        raise CliError(f"--interval must be above 0, got {args.interval}")
    folder = RunsFolder(args.directory)
    try:
        return watch(
            folder, out, err, once=args.once, show_existing=args.all, interval=args.interval
        )
    except ConfigError as exc:
        raise CliError(str(exc)) from None


__all__ = ["add_watch_parser", "call_line", "run_watch", "watch"]
