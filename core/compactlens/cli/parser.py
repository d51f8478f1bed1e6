"""The command line's argument parser: the commands, their flags (the guards, the size
limits) and an argparse parser that raises a :class:`~compactlens.cli.errors.CliError`
instead of exiting."""

from __future__ import annotations

import argparse
from typing import NoReturn

from compactlens.cli.errors import PROG, CliError
from compactlens.cli.loading import TOKENIZERS, parse_size
from compactlens.cli.params import TRIGGER_SHORTHANDS
from compactlens.cli.report import add_report_parser
from compactlens.cli.watch import add_watch_parser
from compactlens.engine.profiles import PROFILE_NAMES
from compactlens.engine.providers import PROVIDERS
from compactlens.engine.strategies.config import (
    STRATEGY_TYPES,
)
from compactlens.formats import FORMATS
from compactlens.transcript import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_STRING,
)


class _ArgumentParser(argparse.ArgumentParser):
    """An argparse parser that raises instead of exiting on bad arguments."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see '{self.prog} --help')")


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


def add_verdict_flags(parser: argparse.ArgumentParser) -> None:
    """``compact``'s flags for the verdict and its fixes: ``--explain``, the model's
    ``--context-window`` and ``--include-destructive``."""
    parser.add_argument(
        "--explain",
        action="store_true",
        help="search configuration changes that fit and print them ranked, with their costs",
    )
    parser.add_argument(
        "--context-window",
        type=int,
        metavar="TOKENS",
        help="the model's context window: the verdict names a compacted history over it "
        "as a cost and no fix raises the target past it (default: the --config file's "
        "analysis.context_window, else 128,000, as in the inspector; 0: no check)",
    )
    parser.add_argument(
        "--include-destructive",
        action="store_true",
        help="with --explain: also list fixes that drop the latest request or most facts",
    )


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
            help="how to count tokens (default: estimate, ceil(characters / 4); calibrated: "
            "estimated per kind of content, within 15%% of o200k_base on the bundled samples)",
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
    add_verdict_flags(p_compact)
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
    p_postmortem.add_argument(
        "--context-window",
        type=int,
        metavar="TOKENS",
        help="the model's context window: every side's verdict names a kept history over "
        "it as a cost (default: 128,000, as in the inspector; 0: no check)",
    )
    add_report_parser(sub)
    add_watch_parser(sub)
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
