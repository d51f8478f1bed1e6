"""``compactlens postmortem FILE``: the compactions an agent recorded, measured.

The text form is one row per compaction (where, trigger, recorded tokens, the
history it replaced, the agent's recall and what each compared strategy would have
kept), then, per compaction, the facts the agent lost and the head of its summary.
``--json`` prints :meth:`compactlens.analysis.Postmortem.to_dict`.
"""

from __future__ import annotations

from compactlens.analysis.postmortem import CompactionPostmortem, Outcome, Postmortem
from compactlens.analysis.verdict import percent
from compactlens.engine.vocabulary import plural

#: Lost facts and summary characters shown per compaction in the text form.
SHOWN_LOST = 5
SHOWN_SUMMARY = 240
#: Under the table: how the compared strategies are sized.
SIZED = (
    "each strategy is sized to the tokens the agent kept at that compaction (agent kept): "
    "a --config's token thresholds are scaled so its first trigger is that budget"
)
#: Under the table, when a strategy could not get as small as the agent.
UNEQUAL = (
    "not at equal size: the strategy could not compact the history as far as the agent "
    "did, so its recall does not compare with the agent's"
)


def _num(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def recall_text(outcome: Outcome | None) -> str:
    """``60% (3/5)`` (a whole percentage that never rounds a loss away); ``encrypted``
    when the summary cannot be read; ``-`` when absent."""
    if outcome is None:
        return "-"
    if outcome.recall is None:
        return "encrypted"
    return (
        f"{percent(outcome.survived, outcome.extracted)} ({outcome.survived}/{outcome.extracted})"
    )


def verdict_lines(c: CompactionPostmortem) -> list[str]:
    """Each side's verdict at the agent's size: headline, the checks that failed."""
    lines = []
    for o in ([c.agent] if c.agent is not None else []) + list(c.strategies):
        v = o.verdict
        if v is None:
            continue
        lines.append(f"  verdict, {o.label}: {v.headline} ({v.summary})")
        if o is not c.agent and not c.at_equal_size(o):
            lines.append(f"    {c.size_note(o)}")
        lines.extend(f"    - {r.text}" for r in v.costs)
    return lines


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _row(c: CompactionPostmortem) -> list[str]:
    r = c.recorded
    row = [
        str(c.number),
        str(r.index),
        r.source,
        r.trigger or "-",
        _num(r.tokens_before),
        f"{len(c.history)} / {c.history_tokens:,}" if c.measured else "not in file",
        _num(c.budget),
        recall_text(c.agent),
    ]
    for o in c.strategies:
        unequal = "" if c.at_equal_size(o) else ", not at equal size"
        row.append(f"{recall_text(o)}, {o.tokens_after:,} tok, {o.status}{unequal}")
    return row


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for r in rows:
        lines.append("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    return lines


def render_postmortem(pm: Postmortem) -> str:
    """The text form of a post-mortem."""
    head = (
        f"postmortem of {pm.source} ({pm.format}, {plural(pm.messages, 'message')}, "
        f"{plural(len(pm.compactions), 'recorded compaction')}; tokens: {pm.tokenizer})"
    )
    if not pm.compactions:
        return head + "\nno recorded compactions in this file\n"
    labels = [o.label for o in pm.compactions[0].strategies]
    headers = [
        "#",
        "at msg",
        "source",
        "trigger",
        "tokens before (recorded)",
        "history msgs / tokens",
        "agent kept (tokens)",
        "agent recall",
        *labels,
    ]
    lines = [head, "", *_table(headers, [_row(c) for c in pm.compactions]), "", SIZED]
    if any(not c.at_equal_size(o) for c in pm.compactions for o in c.strategies):
        lines.append(UNEQUAL)
    for c in pm.compactions:
        lines.append("")
        lines.append(f"compaction {c.number} at message {c.recorded.index} ({c.recorded.source}):")
        if c.recorded.note:
            lines.append(f"  note: {c.recorded.note}")
        if c.recorded.summary:
            lines.append(f"  summary: {_clip(c.recorded.summary, SHOWN_SUMMARY)}")
        lines.extend(verdict_lines(c))
        if c.agent is not None and c.agent.lost:
            shown = ", ".join(_clip(v, 60) for v in c.agent.lost[:SHOWN_LOST])
            more = c.agent.extracted - c.agent.survived - min(len(c.agent.lost), SHOWN_LOST)
            lines.append(f"  lost by the agent: {shown}" + (f" and {more} more" if more else ""))
    return "\n".join(lines) + "\n"
