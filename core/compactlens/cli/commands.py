"""The ``compactlens`` command line: inspect, compact and convert transcripts.

``compactlens inspect FILE`` prints the message groups, their tokens and any
tool-call pairing problems; ``compactlens compact FILE --strategy NAME`` runs one
strategy and writes the compacted transcript in the input's own format and
container shape; ``compactlens convert FILE --to FORMAT`` rewrites a transcript in
another wire format. Every supported format is read (detected, or named with
``--format``).

Exit codes: 0 when the command worked (a compaction that left the transcript
unchanged or compacted it), 1 when the result is ``cannot-fit``, 2 for usage
errors and unreadable input (one line on stderr naming the file and location),
130 when interrupted (Ctrl-C: one line, no traceback).

Token counts default to the estimate (``ceil(characters / 4)``, no download, no
dependency); ``--tokenizer o200k_base`` counts exactly as GPT-4o-class models do, so
the two give different numbers for the same file. The text output says which is used.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn, TextIO

from compactlens.analysis.fixes import FixSearch, search_fixes
from compactlens.analysis.postmortem import (
    REFERENCE_LABEL,
    StrategyFactory,
    postmortem,
    reference_pipeline,
)
from compactlens.cli.postmortem import render_postmortem
from compactlens.cli.report import add_report_parser, run_report
from compactlens.engine import triggers as _triggers
from compactlens.engine.guards import Guards
from compactlens.engine.index import MessageGroup, MessageIndex
from compactlens.engine.profiles import PROFILE_NAMES, get_profile, profile_guards
from compactlens.engine.providers import PROVIDERS
from compactlens.engine.result import CompactionResult
from compactlens.engine.run import run_strategy
from compactlens.engine.strategies.base import Strategy
from compactlens.engine.strategies.config import (
    STRATEGY_TYPES,
    strategy_from_config,
    with_profile,
)
from compactlens.engine.triggers import Trigger
from compactlens.formats import FORMATS
from compactlens.model.errors import CompactlensError, TranscriptError
from compactlens.model.tokens import CharEstimator, EncodingUnavailableError, TiktokenTokenizer
from compactlens.model.tokens import Tokenizer as _Tokenizer
from compactlens.summarizers.extractive import ExtractiveSummarizer
from compactlens.transcript import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_STRING,
    Transcript,
    dump_transcript,
    load_transcript,
)

PROG = "compactlens"
TOKENIZERS = ("estimate", "o200k_base", "cl100k_base")
#: Strategy names that can be built from ``--strategy`` and ``--param`` alone.
SIMPLE_STRATEGIES = (
    "truncation",
    "sliding_window",
    "tool_result_collapse",
    "selective_tool_calls",
    "summarization",
)
#: ``--param trigger=NAME:N`` shorthands (and ``NAME`` alone for those without a number).
TRIGGER_SHORTHANDS: Mapping[str, Any] = {
    "tokens_exceed": _triggers.tokens_exceed,
    "tokens_below": _triggers.tokens_below,
    "tokens_at_most": _triggers.tokens_at_most,
    "messages_exceed": _triggers.messages_exceed,
    "turns_exceed": _triggers.turns_exceed,
    "groups_exceed": _triggers.groups_exceed,
}
_NULLARY_TRIGGERS: Mapping[str, Trigger] = {
    "has_tool_calls": _triggers.has_tool_calls(),
    "always": _triggers.always,
    "never": _triggers.never,
}
_TRIGGER_KEYS = ("trigger", "target")

EXIT_OK = 0
EXIT_CANNOT_FIT = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it

#: How the library's hints about its keyword limits read on the command line.
_LIMIT_HINTS = {"pass max_bytes=": "pass --max-bytes", "pass max_string=": "pass --max-string"}
_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


class CliError(CompactlensError):
    """A usage or input error: printed as one line, exit code 2."""


class _ArgumentParser(argparse.ArgumentParser):
    """An argparse parser that raises instead of exiting on bad arguments."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see '{self.prog} --help')")


# --------------------------------------------------------------------------- loading


def load_file(
    path: str,
    format: str | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_string: int = DEFAULT_MAX_STRING,
) -> Transcript:
    """Read a transcript file in any supported format (detected unless ``format`` is given)."""
    return load_transcript(
        Path(path), format, source=path, max_bytes=max_bytes, max_string=max_string
    )


def load_input(args: argparse.Namespace) -> Transcript:
    """The transcript named by parsed ``args`` (file, --format, --max-bytes, --max-string)."""
    return load_file(args.file, args.format, max_bytes=args.max_bytes, max_string=args.max_string)


def parse_size(text: str) -> int:
    """``1000``, ``512K``, ``200M``, ``1G`` (binary units; ``_`` and a trailing ``B`` allowed)."""
    raw = text.strip().upper().replace("_", "").removesuffix("B")
    unit = raw[-1:] if raw[-1:] in _SIZE_UNITS else ""
    number = raw[: len(raw) - len(unit)]
    if not number.isdigit() or int(number) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size; use a positive number, optionally with K, M or G"
        )
    return int(number) * _SIZE_UNITS[unit]


def cli_error_text(exc: Exception) -> str:
    """The one-line error text, with the library's keyword hints as CLI flags."""
    text = str(exc)
    for library, flag in _LIMIT_HINTS.items():
        text = text.replace(library, flag)
    return text


def make_tokenizer(name: str) -> _Tokenizer:
    if name == "estimate":
        return CharEstimator()
    try:
        return TiktokenTokenizer(name)
    except (EncodingUnavailableError, ValueError, KeyError) as exc:
        raise CliError(f"--tokenizer {name}: {exc}") from None


# --------------------------------------------------------------------------- formatting


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    """Plain-text columns: right-aligned where ``right`` says, two spaces apart."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        out = [
            c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(cells)
        ]
        return "  ".join(out).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def message_range(indices: Sequence[int]) -> str:
    """``3`` / ``3-5`` for contiguous indices, ``3-4,7`` when the group has gaps."""
    runs: list[str] = []
    start = prev = indices[0]
    for k in (*indices[1:], None):
        if k is not None and k == prev + 1:
            prev = k
            continue
        runs.append(str(start) if start == prev else f"{start}-{prev}")
        if k is not None:
            start = prev = k
    return ",".join(runs)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _group_row(g: MessageGroup) -> list[str]:
    return [
        str(g.id),
        g.kind.value,
        "-" if g.turn is None else str(g.turn),
        message_range(g.indices),
        f"{g.tokens:,}",
        ",".join(sorted(g.flags)),
        _clip(", ".join(g.tool_names), 60),
    ]


def group_dict(g: MessageGroup) -> dict[str, Any]:
    return {
        "id": g.id,
        "kind": g.kind.value,
        "turn": g.turn,
        "messages": list(g.indices),
        "tokens": g.tokens,
        "bytes": g.bytes,
        "flags": sorted(g.flags),
        "tool_names": list(g.tool_names),
        "call_ids": list(g.call_ids),
    }


def totals_dict(index: MessageIndex) -> dict[str, int]:
    return {
        "messages": index.total_messages,
        "groups": index.total_groups,
        "non_system_groups": index.non_system_groups,
        "turns": index.total_turns,
        "tokens": index.total_tokens,
        "system_tokens": index.system_tokens,
        "tool_calls": len(index.links),
        "pairing_problems": len(index.problems),
    }


def tokenizer_note(name: str) -> str:
    """``estimate`` says what it is and how to count exactly; other names as they are."""
    if name == "estimate":
        return "estimate, ceil(characters / 4); --tokenizer o200k_base counts exactly"
    return name


def render_inspect(path: str, transcript: Transcript, index: MessageIndex) -> str:
    tokenizer = tokenizer_note(index.tokenizer_name)
    lines = [
        f"{path}  (format: {transcript.format}, tokenizer: {tokenizer})",
        f"detected: {transcript.detection}",
        "",
    ]
    headers = ("group", "kind", "turn", "messages", "tokens", "flags", "tools")
    lines += _table(headers, [_group_row(g) for g in index.groups], right={0, 2, 4})
    lines.append("")
    if index.problems:
        lines.append(f"Pairing problems ({len(index.problems)}):")
        rows = [[p.kind, str(p.message_index), p.call_id, p.detail] for p in index.problems]
        lines += ["  " + row for row in _table(("kind", "message", "call id", "detail"), rows, {1})]
    else:
        lines.append("Pairing problems: none")
    t = totals_dict(index)
    lines.append("")
    lines.append(
        f"Totals: {t['messages']:,} messages, {t['groups']:,} groups, {t['turns']:,} turns, "
        f"{t['tool_calls']:,} tool calls, {t['tokens']:,} tokens "
        f"({t['system_tokens']:,} in system messages)"
    )
    return "\n".join(lines) + "\n"


def render_result(
    path: str, result: CompactionResult, output: str | None, *, fixes_follow: bool = False
) -> str:
    """The report of a run; with ``fixes_follow`` (``--explain``) the single-change
    suggestions are left out: the ranked fixes printed after it replace them."""
    lines = [
        f"{path}: {result.strategy} (tokenizer: {tokenizer_note(result.tokenizer)})",
        f"status: {result.status}",
    ]
    if result.reason:
        lines.append(f"reason: {result.reason}")
    lines.append(
        f"tokens: {result.tokens_before:,} -> {result.tokens_after:,} "
        f"(saved {result.tokens_saved:,})"
    )
    lines.append(f"messages: {result.messages_before:,} -> {result.messages_after:,}")
    counts: dict[str, int] = {}
    for d in result.decisions:
        counts[d.action] = counts.get(d.action, 0) + 1
    order = ("kept", "excluded", "collapsed", "summarized", "inserted")
    lines.append("groups: " + ", ".join(f"{counts.get(a, 0)} {a}" for a in order))
    if result.events:
        lines.append("")
        lines.append("stages:")
        rows = []
        for e in result.events:
            values = ", ".join(f"{k}={v:,}" for k, v in e.trigger_values.items())
            rows.append(
                [
                    str(e.stage),
                    "  " * e.depth + e.strategy,
                    e.event,
                    e.trigger + (f" ({values})" if values else ""),
                    e.target,
                    f"{e.tokens_before:,} -> {e.tokens_after:,}",
                    f"{e.messages_before:,} -> {e.messages_after:,}",
                    f"{e.duration_ms:.1f} ms",
                ]
            )
        headers = ("#", "strategy", "event", "trigger", "target", "tokens", "messages", "time")
        lines += ["  " + row for row in _table(headers, rows, {0, 5, 6, 7})]
    ex = result.explanation
    lines.append("")
    lines.append(f"explanation: {ex.summary}")
    if result.status == "cannot-fit":
        for item in ex.protected:
            detail = f" - {item.detail}" if item.detail else ""
            lines.append(
                f"  protected ({item.why}): {item.tokens:,} tokens in "
                f"{len(item.group_ids)} groups{detail}"
            )
        if ex.target_tokens is not None:
            lines.append(f"  target: {ex.target_tokens:,} tokens")
        if ex.smallest_target is not None:
            lines.append(f"  smallest reachable: {ex.smallest_target:,} tokens")
        if ex.suggestions and not fixes_follow:
            lines.append("suggestions:")
            lines += [f"  - {s.change}" for s in ex.suggestions]
    if result.problems:
        lines.append(f"pairing problems in the result: {len(result.problems)}")
        lines += [f"  {p.kind} at message {p.message_index}: {p.detail}" for p in result.problems]
    if output is not None:
        note = (
            " (best effort: it does not meet the target)" if result.status == "cannot-fit" else ""
        )
        where = "stdout" if output == "-" else output
        lines.append(f"wrote {result.messages_after:,} messages to {where}{note}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- parameters


def parse_trigger(text: str, key: str) -> dict[str, Any]:
    """``tokens_exceed:32000`` (or ``has_tool_calls``) as a trigger dict."""
    name, sep, number = text.partition(":")
    name = name.strip()
    if name in _NULLARY_TRIGGERS and not sep:
        return _NULLARY_TRIGGERS[name].to_dict()
    if name not in TRIGGER_SHORTHANDS or not sep:
        known = sorted([*TRIGGER_SHORTHANDS, *_NULLARY_TRIGGERS])
        raise CliError(
            f"--param {key}={text}: expected NAME:N such as tokens_exceed:32000 "
            f"(NAME one of {', '.join(known)}) or a trigger JSON object"
        )
    try:
        n = int(number.replace("_", "").replace(",", ""))
        trigger: Trigger = TRIGGER_SHORTHANDS[name](n)
    except ValueError as exc:
        raise CliError(f"--param {key}={text}: {exc}") from None
    return trigger.to_dict()


def parse_param(text: str) -> tuple[str, Any]:
    """``key=value``: the value as JSON when it parses (ints, bools, null), else a string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise CliError(f"--param {text!r}: expected KEY=VALUE, for example minimum_preserved=8")
    value: Any
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    if key in _TRIGGER_KEYS and isinstance(value, str):
        value = parse_trigger(value, key)
    return key, value


def load_config(path: str) -> dict[str, Any]:
    """The strategy config of a ``--config`` file (the file itself, or its ``strategy``)."""
    return strategy_part(read_config(path), path)


def strategy_part(data: Any, path: str) -> dict[str, Any]:
    """The strategy config in a ``--config`` document read from ``path``."""
    if isinstance(data, dict) and isinstance(data.get("strategy"), dict):
        data = data["strategy"]
    if not isinstance(data, dict):
        raise CliError(f"{path}: $: a strategy config must be a JSON object (--config)")
    return data


def read_config(path: str) -> Any:
    """A ``--config`` file's JSON, or a :class:`CliError` naming the file and the problem."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise CliError(f"{path}: no such file (--config)") from None
    except OSError as exc:
        raise CliError(f"{path}: cannot read (--config): {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CliError(f"{path}: byte {exc.start}: not UTF-8 text (--config)") from None
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{path}: line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"
        ) from None
    return data


def build_guards(
    args: argparse.Namespace, document: Any, format_name: str | None, messages: int
) -> Guards:
    """The run's guards: the ``guards`` object of the ``--config`` ``document``, then the
    flags; the provider follows the transcript's format unless one is chosen."""
    base = profile_guards(args.profile)
    if isinstance(document, dict) and "guards" in document:
        try:
            base = Guards.from_dict(document["guards"])
        except (TypeError, ValueError) as exc:
            raise CliError(f"{args.config}: $.guards: {exc}") from None
    updates: dict[str, Any] = {}
    if args.provider is not None:
        updates["provider"] = args.provider
    if args.keep_latest_request is not None:
        updates["keep_latest_request"] = args.keep_latest_request
    if args.pin:
        updates["pins"] = base.pins | frozenset(args.pin)
    if args.keep_tool:
        updates["keep_tools"] = base.keep_tools | frozenset(args.keep_tool)
    if args.prunable_tool:
        updates["prunable_tools"] = base.prunable_tools | frozenset(args.prunable_tool)
    try:
        guards = replace(base, **updates).for_format(format_name)
    except ValueError as exc:
        raise CliError(f"guards: {exc}") from None
    missing = sorted(i for i in guards.pins if i >= messages)
    if missing:
        raise CliError(
            f"guards: pins: message {missing[0]} does not exist (the transcript has {messages})"
        )
    return guards


def render_fixes(found: FixSearch) -> str:
    """The ranked fixes of ``--explain``, each with its cost and how to reproduce it."""
    lines = ["", f"fixes ({found.tried} changes re-run, {found.duration_ms:,.0f} ms):"]
    if not found.fixes:
        lines.append(f"  none: {found.none_reason}")
    for n, fix in enumerate(found.fixes, 1):
        label = " [DESTRUCTIVE]" if fix.destructive else ""
        lines.append(f"  {n}.{label} {fix.summary}")
        lines.append(f"     costs: {fix.costs()}")
        lines += [f"     warning: {w}" for w in fix.warnings]
        lines.append(f"     config: {json.dumps(fix.config, separators=(',', ':'))}")
    if found.hidden_destructive:
        lines.append(
            f"  ({found.hidden_destructive} destructive changes not shown: "
            "--include-destructive lists them)"
        )
    return "\n".join(lines) + "\n"


def build_strategy(
    name: str | None, params: Sequence[str], config_path: str | None, document: Any
) -> tuple[Strategy, dict[str, Any]]:
    """The strategy config (``--config``, as read into ``document``, then ``--strategy``,
    then ``--param``) and its build."""
    config: dict[str, Any] = strategy_part(document, config_path) if config_path else {}
    if name is not None:
        config["type"] = name
    if "type" not in config:
        raise CliError("compact: give --strategy NAME or --config CONFIG.json")
    kind = config["type"]
    if kind in ("pipeline", "token_budget") and "strategies" not in config:
        raise CliError(
            f"--strategy {kind}: a composed strategy needs --config CONFIG.json with a "
            "'strategies' list"
        )
    for item in params:
        key, value = parse_param(item)
        if key == "type":
            raise CliError("--param type=...: use --strategy to choose the strategy")
        config[key] = value
    where = config_path or f"--strategy {kind}"
    try:
        strategy = strategy_from_config(config, summarizer=ExtractiveSummarizer(), where=where)
    except ValueError as exc:
        hint = "" if config_path else " (set parameters with --param KEY=VALUE)"
        raise CliError(f"{exc}{hint}") from None
    return strategy, config


def add_guard_flags(parser: argparse.ArgumentParser) -> None:
    """The guards every strategy keeps (see docs/guards.md)."""
    parser.add_argument(
        "--profile",
        choices=PROFILE_NAMES,
        help="the defaults and rules of the system you run (maf, deepagents; default: ours)",
    )
    group = parser.add_argument_group("guards (kept whatever the strategy does)")
    group.add_argument(
        "--provider",
        choices=PROVIDERS,
        help="the API the result must be valid for (default: the transcript's format's)",
    )
    group.add_argument(
        "--keep-latest-request",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="never drop or change the latest user request (default: on)",
    )
    group.add_argument(
        "--pin", type=int, action="append", default=[], metavar="N", help="keep message N"
    )
    group.add_argument(
        "--keep-tool",
        action="append",
        default=[],
        metavar="NAME",
        help="never collapse or clamp this tool's results",
    )
    group.add_argument(
        "--prunable-tool",
        action="append",
        default=[],
        metavar="NAME",
        help="collapse, clamp or remove this tool's calls first",
    )


# --------------------------------------------------------------------------- commands


def _dump_json(data: Any, stream: TextIO) -> None:
    stream.write(json.dumps(data, indent=2, ensure_ascii=False))
    stream.write("\n")


def cmd_inspect(args: argparse.Namespace, out: TextIO) -> int:
    transcript = load_input(args)
    index = MessageIndex.build(transcript.messages, make_tokenizer(args.tokenizer))
    if args.json:
        _dump_json(
            {
                "file": args.file,
                "format": transcript.format,
                "detection": transcript.detection,
                "tokenizer": index.tokenizer_name,
                "totals": totals_dict(index),
                "groups": [group_dict(g) for g in index.groups],
                "problems": [p.to_dict() for p in index.problems],
            },
            out,
        )
    else:
        out.write(render_inspect(args.file, transcript, index))
    return EXIT_OK


def write_output(path: str, text: str, out: TextIO) -> None:
    """Write ``text`` to ``path`` (``-``: to ``out``)."""
    if path == "-":
        out.write(text)
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"{path}: cannot write output: {exc.strerror or exc}") from None


def cmd_compact(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    document = read_config(args.config) if args.config else None  # read once
    strategy, _config = build_strategy(args.strategy, args.param, args.config, document)
    tokenizer = make_tokenizer(args.tokenizer)
    transcript = load_input(args)
    grouping = get_profile(args.profile).grouping
    index = MessageIndex.build(transcript.messages, tokenizer, grouping=grouping)
    guards = build_guards(args, document, transcript.format, len(transcript.messages))
    strategy = with_profile(strategy, args.profile)
    # The CLI always counts with an explicit tokenizer (the estimate by default), so
    # count-style parameters such as max_n mean tokens, as they read.
    result = run_strategy(index, strategy, tokenizer_given=True, guards=guards)
    found = (
        search_fixes(
            index,
            strategy,
            guards=guards,
            summaries=result.summaries,
            include_destructive=args.include_destructive,
        )
        if args.explain
        else None
    )
    # With ``-o -`` the transcript goes to stdout and the report to stderr.
    report = err if args.output == "-" else out
    if args.output is not None:
        # Same format and container as the input; unchanged messages keep their wire objects.
        text = dump_transcript(transcript.with_messages(result.projection))
        write_output(args.output, text, out)
    if args.json:
        data = result.to_dict(include_messages=False)
        data = {"file": args.file, "output": args.output, "config": strategy.to_dict(), **data}
        data["guards"] = guards.to_dict()
        if found is not None:
            data["fixes"] = found.to_dict()
        _dump_json(data, report)
    else:
        report.write(render_result(args.file, result, args.output, fixes_follow=found is not None))
        if found is not None:
            report.write(render_fixes(found))
    return EXIT_CANNOT_FIT if result.status == "cannot-fit" else EXIT_OK


def cmd_convert(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    transcript = load_input(args)
    warnings: list[str] = []
    text = dump_transcript(transcript, format=args.to, on_warning=lambda w: warnings.append(str(w)))
    output = args.output or "-"
    write_output(output, text, out)
    for warning in warnings:
        err.write(f"{PROG}: warning: {warning}\n")
    if output != "-":
        out.write(
            f"converted {args.file} ({transcript.format}, {len(transcript.messages):,} messages) "
            f"to {args.to}: wrote {output}"
            + (f" with {len(warnings)} warning(s)" if warnings else "")
            + "\n"
        )
    return EXIT_OK


def cmd_postmortem(args: argparse.Namespace, out: TextIO) -> int:
    strategies: list[tuple[str, StrategyFactory]] = [(REFERENCE_LABEL, reference_pipeline)]
    if args.config:
        config = load_config(args.config)
        try:
            fixed = strategy_from_config(
                config, summarizer=ExtractiveSummarizer(), where=args.config
            )
        except ValueError as exc:
            raise CliError(str(exc)) from None
        strategies.insert(0, (Path(args.config).name, lambda _budget: fixed))
    transcript = load_input(args)
    found = postmortem(transcript, strategies, tokenizer=make_tokenizer(args.tokenizer))
    if args.json:
        _dump_json({"file": args.file, **found.to_dict()}, out)
    else:
        out.write(render_postmortem(found))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog=PROG,
        description="Inspect, compact and convert LLM conversation transcripts.",
        epilog="Exit codes: 0 ok, 1 cannot-fit, 2 usage or input error.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)
    sub.required = True

    formats = sorted(FORMATS)

    def add_format(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--format",
            choices=formats,
            help="the input's wire format (default: detected)",
        )
        add_limits(p)

    def add_common(p: argparse.ArgumentParser) -> None:
        p.add_argument("file", metavar="FILE", help="a transcript file (JSON or JSON lines)")
        add_format(p)
        p.add_argument(
            "--tokenizer",
            choices=TOKENIZERS,
            default="estimate",
            help="how to count tokens (default: estimate, ceil(characters / 4))",
        )
        p.add_argument("--json", action="store_true", help="print machine-readable JSON")

    p_inspect = sub.add_parser(
        "inspect",
        help="show groups, tokens and pairing problems",
        description="Show the "
        "message groups of a transcript with their tokens, flags and tools, its tool-call "
        "pairing problems, and totals.",
    )
    add_common(p_inspect)

    p_compact = sub.add_parser(
        "compact",
        help="compact a transcript with one strategy",
        description="Run one strategy over a transcript, print what happened and optionally "
        "write the compacted transcript (same container shape as the input).",
        epilog="Examples:\n"
        "  compactlens compact chat.json --strategy truncation "
        "--param trigger=tokens_exceed:32000 --param target=tokens_at_most:16000 -o out.json\n"
        "  compactlens compact chat.json --strategy sliding_window --param keep_last_turns=5\n"
        "  compactlens compact chat.json --config pipeline.json --tokenizer o200k_base\n"
        "Parameter values are JSON where they parse (8, true, null, [1,2]), else strings; "
        "trigger/target accept NAME:N ("
        + ", ".join(sorted(TRIGGER_SHORTHANDS))
        + ") or has_tool_calls/always/never, or a trigger JSON object.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(p_compact)
    p_compact.add_argument(
        "--strategy",
        choices=STRATEGY_TYPES,
        help="the strategy (pipeline and token_budget need --config)",
    )
    p_compact.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a strategy parameter; repeat for more",
    )
    p_compact.add_argument(
        "--config", metavar="CONFIG.json", help="a strategy config object (as to_dict() gives)"
    )
    p_compact.add_argument(
        "-o", "--output", metavar="OUT", help="write the compacted transcript here ('-': stdout)"
    )
    add_guard_flags(p_compact)
    p_compact.add_argument(
        "--explain",
        action="store_true",
        help="search configuration changes that fit and print them ranked, with their costs",
    )
    p_compact.add_argument(
        "--include-destructive",
        action="store_true",
        help="with --explain: also list fixes that drop the latest request or most facts",
    )
    p_convert = sub.add_parser(
        "convert",
        help="rewrite a transcript in another wire format",
        description="Convert a transcript to another wire format. What cannot be carried "
        "over is reported as warnings on stderr.",
    )
    p_convert.add_argument("file", metavar="FILE", help="a transcript file (JSON or JSON lines)")
    add_format(p_convert)
    p_convert.add_argument("--to", required=True, choices=formats, help="the target format")
    p_convert.add_argument(
        "-o", "--output", metavar="OUT", help="write here instead of stdout ('-': stdout)"
    )
    p_postmortem = sub.add_parser(
        "postmortem",
        help="measure the compactions an agent already did",
        description="For every compaction recorded in the file (Claude Code, Codex, Inspect "
        "AI, Anthropic / OpenAI compaction items...): the history it replaced, the agent's "
        "summary, the fact recall of what the agent kept, and what compactlens would have "
        "kept from the same history (the reference pipeline, and --config if given).",
    )
    add_common(p_postmortem)
    p_postmortem.add_argument(
        "--config",
        metavar="CONFIG.json",
        help="also compare a strategy config (as compact --config takes)",
    )
    add_report_parser(sub)
    return parser


def add_limits(p: argparse.ArgumentParser) -> None:
    """``--max-bytes`` / ``--max-string``: the input size limits of ``load_transcript``."""
    p.add_argument(
        "--max-bytes",
        type=parse_size,
        default=DEFAULT_MAX_BYTES,
        metavar="SIZE",
        help=f"refuse inputs larger than this (default {DEFAULT_MAX_BYTES // 1024**2}M; "
        "K, M, G suffixes)",
    )
    p.add_argument(
        "--max-string",
        type=parse_size,
        default=DEFAULT_MAX_STRING,
        metavar="CHARS",
        help=f"refuse a JSON string longer than this (default {DEFAULT_MAX_STRING // 1024**2}M "
        "characters)",
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("compactlens")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown (not installed)"


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.command == "inspect":
        return cmd_inspect(args, out)
    if args.command == "convert":
        return cmd_convert(args, out, err)
    if args.command == "report":
        return run_report(args)
    if args.command == "postmortem":
        return cmd_postmortem(args, out)
    return cmd_compact(args, out, err)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 cannot-fit, 2 error, 130
    interrupted)."""
    out, err = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
        return _run(args, out, err)
    except SystemExit as exc:  # --help and --version exit through argparse
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except (TranscriptError, CliError) as exc:
        err.write(f"{PROG}: error: {cli_error_text(exc)}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.write(f"{PROG}: interrupted\n")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
