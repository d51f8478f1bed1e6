"""The command line's text output: the groups table of ``inspect``, the report of a
``compact`` run, the ranked fixes of ``--explain`` and the run's verdict, plus the JSON
shapes of groups and totals."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from compactlens.analysis.fix_verdicts import fix_mark
from compactlens.analysis.fixes import FixSearch
from compactlens.analysis.verdict import Verdict, group_counts
from compactlens.engine.explain import protected_amount
from compactlens.engine.index import MessageGroup, MessageIndex
from compactlens.engine.result import CompactionResult, summary_words
from compactlens.engine.vocabulary import (
    condition_words,
    pairing_words,
    plural,
    protection_words,
    stage_words,
)
from compactlens.transcript import (
    Transcript,
)


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
        *(f"warning: {w}" for w in transcript.warnings),
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
        f"Totals: {plural(t['messages'], 'message')}, {plural(t['groups'], 'group')}, "
        f"{plural(t['turns'], 'turn')}, {plural(t['tool_calls'], 'tool call')}, "
        f"{plural(t['tokens'], 'token')} "
        f"({t['system_tokens']:,} in system messages)"
    )
    return "\n".join(lines) + "\n"


def render_result(path: str, result: CompactionResult, output: str | None) -> str:
    """The report of a run, in the words every surface uses (groups by the verdict's
    labels, conditions as "at most 4,300 tokens"). It names no change to make: the
    verdict printed after it gives the run's one next step (the explanation's own
    single-change suggestions, made with the triggers as they are, could disagree with
    it: "a target of at least 978 tokens fits" above a next step that raises the target
    to 1,075 and the trigger with it)."""
    lines = [
        f"{path}: {result.strategy} (tokenizer: {tokenizer_note(result.tokenizer)})",
        f"status: {result.status}",
    ]
    if result.reason:
        lines.append(f"reason: {result.reason}")
    lines.append(
        f"tokens: {result.tokens_before:,} → {result.tokens_after:,} "
        f"(saved {result.tokens_saved:,})"
    )
    lines.append(f"messages: {result.messages_before:,} → {result.messages_after:,}")
    # The verdict's counts and labels ("dropped", never "excluded"), as its summary reads.
    counts = group_counts(result)
    lines.append("groups: " + ", ".join(f"{n:,} {label}" for label, n in counts.items()))
    if result.events:
        lines.append("")
        lines.append("stages:")
        rows = []
        for e in result.events:
            values = ", ".join(f"{v:,} {k}" for k, v in e.trigger_values.items())
            rows.append(
                [
                    str(e.stage),
                    "  " * e.depth + stage_words(e.strategy),
                    e.event,
                    condition_words(e.trigger) + (f" (seen: {values})" if values else ""),
                    condition_words(e.target),
                    f"{e.tokens_before:,} → {e.tokens_after:,}",
                    f"{e.messages_before:,} → {e.messages_after:,}",
                    f"{e.duration_ms:.1f} ms",
                ]
            )
        headers = ("#", "strategy", "event", "trigger", "target", "tokens", "messages", "time")
        lines += ["  " + row for row in _table(headers, rows, {0, 5, 6, 7})]
    ex = result.explanation
    lines.append("")
    lines.append(f"explanation: {summary_words(ex)}")
    if result.status == "cannot-fit":
        for item in ex.protected:
            detail = f" - {item.detail}" if item.detail else ""
            # The protection's plain label (the vocabulary's), never its code name.
            lines.append(
                f"  protected, {protection_words(item.why)}: {protected_amount(item)}{detail}"
            )
        if ex.target_tokens is not None:
            lines.append(f"  target: {ex.target_tokens:,} tokens")
        if ex.smallest_target is not None:
            lines.append(
                "  best the current parameters reach (the triggers as they are): "
                f"{ex.smallest_target:,} tokens"
            )
    if result.problems:
        lines.append(f"pairing problems in the result: {len(result.problems)}")
        lines += [
            f"  {pairing_words(p.kind)} at message {p.message_index}: {p.detail}"
            for p in result.problems
        ]
    if output is not None:
        note = (
            " (best effort: it does not meet the target)" if result.status == "cannot-fit" else ""
        )
        where = "stdout" if output == "-" else output
        lines.append(f"wrote {plural(result.messages_after, 'message')} to {where}{note}")
    return "\n".join(lines) + "\n"


#: Why ``--explain`` lists no fix for a run that fits and passes every check.
NOTHING_TO_FIX = "the run fits and every check passed"


def render_fixes(found: FixSearch) -> str:
    """The ranked fixes of ``--explain``, each with its cost and how to reproduce it,
    marked as every surface marks them (:func:`~compactlens.analysis.fix_mark`); for a
    run that fits and is safe (no change re-run), "nothing to fix"."""
    if not found.tried and found.none_reason == NOTHING_TO_FIX:
        return f"\nfixes: nothing to fix: {NOTHING_TO_FIX}\n"
    lines = ["", f"fixes ({plural(found.tried, 'change')} re-run, {found.duration_ms:,.0f} ms):"]
    if not found.fixes:
        why = found.none_reason or (
            "no single change the search re-ran removes one of the costs without adding another"
        )
        lines.append(f"  none: {why}")
    for n, fix in enumerate(found.fixes, 1):
        mark = fix_mark(fix)
        label = f" [{mark.upper()}]" if mark else ""
        lines.append(f"  {n}.{label} {fix.plain_summary}")
        v = fix.verdict
        if v is None:
            lines.append(f"     costs: {fix.costs()}")
            lines += [f"     warning: {w}" for w in fix.warnings]
        else:  # judged: the verdict of the run it gives, as the run's own verdict reads
            lines.append(f"     gives: {v.headline}: {v.summary}")
            lines += [f"     cost: {r.text}" for r in v.costs]
        lines.append(f"     config: {json.dumps(fix.config, separators=(',', ':'))}")
    if found.hidden_destructive:
        lines.append(
            f"  ({plural(found.hidden_destructive, 'destructive change')} not shown: "
            "--include-destructive lists them)"
        )
    return "\n".join(lines) + "\n"


#: How a verdict line marks each check.
_REASON_MARKS = {"safe": "ok", "costs": "cost", "no-fit": "no fit"}


def render_verdict(v: Verdict) -> str:
    """The verdict of a run: the level and its numbers, one line per check, the next step."""
    lines = ["", f"verdict: {v.level} - {v.headline}: {v.summary}"]
    lines += [f"  [{_REASON_MARKS[r.level]}] {r.text}" for r in v.reasons]
    lines.append(v.next_step_line)
    return "\n".join(lines) + "\n"
