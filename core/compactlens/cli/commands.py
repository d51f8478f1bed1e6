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
from typing import Any, TextIO

from compactlens.analysis.fix_verdicts import searched_advice, shown_fixes
from compactlens.analysis.fixes import FixSearch
from compactlens.analysis.postmortem import (
    REFERENCE_LABEL,
    StrategyFactory,
    postmortem,
    reference_pipeline,
    sized_factory,
)
from compactlens.analysis.protocol import (
    DEFAULT_PROVIDERS,
    transcript_provider,
    verdict_provider,
)
from compactlens.analysis.report import analyze
from compactlens.analysis.retrigger import strategy_triggers
from compactlens.analysis.verdict import Verdict, verdict
from compactlens.cli.errors import (
    EXIT_CANNOT_FIT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CliError,
    cli_error_text,
)
from compactlens.cli.loading import TOKENIZERS, load_file, load_input, make_tokenizer, parse_size
from compactlens.cli.params import (
    SIMPLE_STRATEGIES,
    TRIGGER_SHORTHANDS,
    build_analysis,
    build_guards,
    build_strategy,
    load_config,
    parse_param,
    parse_trigger,
    read_config,
    strategy_part,
)
from compactlens.cli.parser import add_guard_flags, add_limits, build_parser
from compactlens.cli.postmortem import render_postmortem
from compactlens.cli.render import (
    group_dict,
    message_range,
    render_fixes,
    render_inspect,
    render_result,
    render_verdict,
    tokenizer_note,
    totals_dict,
)
from compactlens.cli.report import run_report
from compactlens.engine.guards import Guards
from compactlens.engine.index import MessageIndex
from compactlens.engine.profiles import get_profile
from compactlens.engine.result import CompactionResult
from compactlens.engine.run import run_strategy
from compactlens.engine.strategies.base import Strategy
from compactlens.engine.strategies.config import (
    strategy_from_config,
    with_profile,
)
from compactlens.engine.vocabulary import plural
from compactlens.model.errors import TranscriptError
from compactlens.model.files import write_atomically
from compactlens.model.tokens import Tokenizer
from compactlens.summarizers.extractive import ExtractiveSummarizer
from compactlens.transcript import (
    Transcript,
    dump_transcript,
)


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
                "warnings": [str(w) for w in transcript.warnings],
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
    """Write ``text`` to ``path`` (``-``: to ``out``), atomically: a failed write leaves
    the file as it was (``-o`` may name the input)."""
    if path == "-":
        out.write(text)
        return
    try:
        write_atomically(path, text)
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
    analysis = build_analysis(args, document)
    strategy = with_profile(strategy, args.profile)
    _warn_read(transcript, err)
    # The CLI always counts with an explicit tokenizer (the estimate by default), so
    # count-style parameters such as max_n mean tokens, as they read.
    result = run_strategy(index, strategy, tokenizer_given=True, guards=guards)
    judged = run_verdict(transcript, result, strategy, guards, tokenizer, analysis=analysis)
    wanted = args.include_destructive
    found: FixSearch | None = None
    if judged.level != "safe" or args.explain:
        # The run's one next step, as the notebook's debug() and the inspector give it:
        # the fixes judged by the verdicts of their runs, with the one-click larger target
        # when the library's rule offers it. The text, --json and --explain all show it;
        # only --explain lists the fixes.
        judged, found = searched_advice(
            index,
            strategy,
            judged,
            guards=guards,
            summaries=result.summaries,
            include_destructive=wanted,
            analysis=analysis,
        )
    if found is not None and args.explain:
        shown = shown_fixes(found.fixes, judged, include_destructive=wanted)
        found = replace(
            found, fixes=shown.fixes, hidden_destructive=found.hidden_destructive + shown.hidden
        )
    else:
        found = None
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
        data["verdict"] = judged.to_dict()
        _dump_json(data, report)
    else:
        report.write(render_result(args.file, result, args.output))
        if found is not None:
            report.write(render_fixes(found))
        report.write(render_verdict(judged))
    return EXIT_CANNOT_FIT if result.status == "cannot-fit" else EXIT_OK


def run_verdict(
    transcript: Transcript,
    result: CompactionResult,
    strategy: Strategy,
    guards: Guards,
    tokenizer: Tokenizer,
    fixes: FixSearch | None = None,
    *,
    analysis: Mapping[str, Any] | None = None,
) -> Verdict:
    """The verdict of a ``compact`` run: analyzed with the run's own tokenizer, triggers
    (count-style parameters mean tokens, as in the run), the provider the verdict counts
    for (the transcript's own API, else the provider guard) and the ``analysis``
    settings (:func:`~compactlens.cli.params.build_analysis`: the context window...)."""
    provider = verdict_provider(transcript_provider(transcript), guards.provider)
    settings = dict(analysis or {})
    chosen = settings.pop("providers", None)
    report = analyze(
        transcript,
        result,
        triggers=strategy_triggers(strategy, tokenizer_given=True),
        tokenizer=tokenizer,
        providers=chosen or ((provider,) if provider is not None else DEFAULT_PROVIDERS),
        **settings,
    )
    return verdict(result, report, provider=provider, fixes=fixes)


def _warn_read(transcript: Transcript, err: TextIO) -> None:
    """What reading left out (a JSON-lines file's cut-off last line), one line each."""
    for warning in transcript.warnings:
        err.write(f"{PROG}: warning: {transcript.source}: {warning}\n")


def cmd_convert(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    transcript = load_input(args)
    _warn_read(transcript, err)
    warnings: list[str] = []
    text = dump_transcript(transcript, format=args.to, on_warning=lambda w: warnings.append(str(w)))
    output = args.output or "-"
    write_output(output, text, out)
    for warning in warnings:
        err.write(f"{PROG}: warning: {warning}\n")
    if output != "-":
        out.write(
            f"converted {args.file} ({transcript.format}, "
            f"{plural(len(transcript.messages), 'message')}) "
            f"to {args.to}: wrote {output}"
            + (f" with {plural(len(warnings), 'warning')}" if warnings else "")
            + "\n"
        )
    return EXIT_OK


def cmd_postmortem(args: argparse.Namespace, out: TextIO) -> int:
    strategies: list[tuple[str, StrategyFactory]] = [(REFERENCE_LABEL, reference_pipeline)]
    if args.config:
        config = load_config(args.config)
        try:  # checked once here, as given; each compaction runs it at the agent's size
            strategy_from_config(config, summarizer=ExtractiveSummarizer(), where=args.config)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        strategies.insert(0, (Path(args.config).name, sized_factory(config)))
    transcript = load_input(args)
    found = postmortem(
        transcript,
        strategies,
        tokenizer=make_tokenizer(args.tokenizer),
        context_window=build_analysis(args, None).get("context_window"),
    )
    if args.json:
        _dump_json({"file": args.file, **found.to_dict()}, out)
    else:
        out.write(render_postmortem(found))
    return EXIT_OK


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.command == "inspect":
        return cmd_inspect(args, out)
    if args.command == "convert":
        return cmd_convert(args, out, err)
    if args.command == "report":
        return run_report(args)
    if args.command == "postmortem":
        return cmd_postmortem(args, out)
    if args.command == "watch":
        from compactlens.cli.watch import run_watch

        return run_watch(args, out, err)
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


__all__ = [
    "EXIT_CANNOT_FIT",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "PROG",
    "SIMPLE_STRATEGIES",
    "TOKENIZERS",
    "TRIGGER_SHORTHANDS",
    "CliError",
    "add_guard_flags",
    "add_limits",
    "build_guards",
    "build_parser",
    "build_strategy",
    "cli_error_text",
    "cmd_compact",
    "cmd_convert",
    "cmd_inspect",
    "cmd_postmortem",
    "group_dict",
    "load_config",
    "load_file",
    "load_input",
    "main",
    "make_tokenizer",
    "message_range",
    "parse_param",
    "parse_size",
    "parse_trigger",
    "read_config",
    "render_fixes",
    "render_inspect",
    "render_result",
    "render_verdict",
    "run_verdict",
    "strategy_part",
    "tokenizer_note",
    "totals_dict",
    "write_output",
]


if __name__ == "__main__":
    raise SystemExit(main())
