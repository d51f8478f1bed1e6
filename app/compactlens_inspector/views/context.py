"""The context picture: a ``/context``-style gauge of the budget, as plain data and HTML
(no Streamlit here).

The history's tokens are split by what they are (system, tools, user, assistant,
summary) before and after a compaction, against the budget the configuration sets: the
trigger (compaction starts above it) and the target (what it aims for). Free space is
what is left under the budget; a row over it says by how much. :func:`gauge_html` draws
it with our own labels and numbers only: no transcript text goes into the HTML.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from compactlens import CompactionResult, MessageIndex
from compactlens_inspector.style.numbers import num, share
from compactlens_inspector.style.theme import DECISIONS, GAUGE_COLORS

#: Gauge segment of each group kind (a collapsed tool result is still tool content).
KIND_SEGMENT = {
    "system": "system",
    "tool_call": "tools",
    "user": "user",
    "assistant_text": "assistant",
    "summary": "summary",
}
SEGMENT_LABELS = {
    "system": "System",
    "tools": "Tool calls and results",
    "user": "User messages",
    "assistant": "Assistant messages",
    "summary": "Summaries",
    "free": "Free space",
}
SEGMENTS = ("system", "tools", "user", "assistant", "summary")


@dataclass(frozen=True, slots=True)
class GaugeRow:
    """One bar: tokens per segment, the total, and free space (or overflow) to the budget."""

    label: str
    tokens: dict[str, int]
    used: int
    free: int
    over: int


@dataclass(frozen=True, slots=True)
class ContextGauge:
    """Rows (before, and after when there is a run) on one scale, with the budget lines."""

    rows: tuple[GaugeRow, ...]
    budget: int
    trigger: int | None
    target: int | None
    scale: int


def _row(label: str, tokens: dict[str, int], budget: int) -> GaugeRow:
    used = sum(tokens.values())
    return GaugeRow(label, tokens, used, max(0, budget - used), max(0, used - budget))


def before_tokens(index: MessageIndex) -> dict[str, int]:
    """The history's tokens by segment."""
    out = dict.fromkeys(SEGMENTS, 0)
    for g in index.groups:
        out[KIND_SEGMENT.get(g.kind.value, "assistant")] += g.tokens
    return out


def after_tokens(result: CompactionResult) -> dict[str, int]:
    """The compacted history's tokens by segment (an inserted summary is a summary)."""
    out = dict.fromkeys(SEGMENTS, 0)
    for d in result.decisions:
        key = "summary" if d.action == "inserted" else KIND_SEGMENT.get(d.kind, "assistant")
        out[key] += d.tokens_after
    return out


def context_gauge(
    index: MessageIndex,
    result: CompactionResult | None,
    *,
    trigger: int | None,
    target: int | None,
) -> ContextGauge:
    """The gauge of ``index`` (and of ``result`` after it) against the budget: the trigger,
    else the target, else the history's own size."""
    before = before_tokens(index)
    budget = trigger or target or sum(before.values()) or 1
    rows = [_row("Before", before, budget)]
    if result is not None:
        rows.append(_row("After", after_tokens(result), budget))
    scale = max([budget, target or 0, *(r.used for r in rows)]) or 1
    return ContextGauge(tuple(rows), budget, trigger, target, scale)


def _pct(tokens: int, scale: int) -> str:
    return f"{100 * tokens / scale:.3f}%"


def _bar(row: GaugeRow, gauge: ContextGauge) -> str:
    cells = []
    for key in SEGMENTS:
        n = row.tokens.get(key, 0)
        if n:
            tip = f"{SEGMENT_LABELS[key]}: {num(n)} tokens"
            cells.append(
                f'<div title="{escape(tip)}" style="width:{_pct(n, gauge.scale)};'
                f'background:{GAUGE_COLORS[key]}"></div>'
            )
    if row.free:
        tip = f"Free space: {num(row.free)} tokens"
        cells.append(
            f'<div title="{escape(tip)}" style="width:{_pct(row.free, gauge.scale)};'
            f'background:{GAUGE_COLORS["free"]}"></div>'
        )
    lines = []
    for name, value, color in (
        ("trigger", gauge.trigger, DECISIONS["collapsed"].text),
        ("target", gauge.target, DECISIONS["excluded"].text),
    ):
        if value:
            lines.append(
                f'<div title="{name}: {num(value)} tokens" style="position:absolute;top:-4px;'
                f'bottom:-4px;left:{_pct(value, gauge.scale)};border-left:2px dashed {color}">'
                "</div>"
            )
    return (
        '<div style="position:relative;display:flex;height:22px;border-radius:4px;'
        'background:#F4F6F9;overflow:visible">' + "".join(cells) + "".join(lines) + "</div>"
    )


def row_caption(row: GaugeRow, gauge: ContextGauge) -> str:
    """``8,667 tokens · 201% of the 4,300 budget · over by 4,367`` (plain text). When the
    budget is a trigger above the target, both are named: "of the 3,649 trigger (target
    2,713)", so a gauge never shows two budgets without saying which is which."""
    of = share(row.used / gauge.budget)
    text = f"{num(row.used)} tokens · {of} of the {num(gauge.budget)} budget"
    if gauge.trigger and gauge.target is not None and gauge.target != gauge.budget:
        text = (
            f"{num(row.used)} tokens · {of} of the {num(gauge.budget)} trigger "
            f"(target {num(gauge.target)})"
        )
    if row.over:
        return text + f" · over by {num(row.over)}"
    return text + f" · {num(row.free)} free"


def legend(gauge: ContextGauge) -> list[tuple[str, str, str]]:
    """(colour, label, tokens before → after) of each segment that is not empty."""
    out = []
    for key in SEGMENTS:
        values = [r.tokens.get(key, 0) for r in gauge.rows]
        if any(values):
            out.append((GAUGE_COLORS[key], SEGMENT_LABELS[key], " → ".join(num(v) for v in values)))
    return out


def gauge_html(gauge: ContextGauge) -> str:
    """The gauge as a small HTML block: a labelled bar per row, budget lines, a legend."""
    rows = []
    for row in gauge.rows:
        rows.append(
            '<div style="display:grid;grid-template-columns:4.5rem 1fr;gap:0.5rem;'
            'align-items:center;margin:0.35rem 0">'
            f'<strong style="font-size:0.85rem">{escape(row.label)}</strong>{_bar(row, gauge)}'
            f'<span></span><span style="font-size:0.8rem;color:#3D4B5C">'
            f"{escape(row_caption(row, gauge))}</span></div>"
        )
    keys = [
        f'<span style="margin-right:1rem;white-space:nowrap"><span style="display:inline-block;'
        f'width:0.7rem;height:0.7rem;border-radius:2px;background:{color};margin-right:0.3rem">'
        f"</span>{escape(label)} {escape(values)}</span>"
        for color, label, values in legend(gauge)
    ]
    marks = []
    if gauge.trigger:
        marks.append(f"┆ trigger {num(gauge.trigger)}")
    if gauge.target and gauge.target != gauge.trigger:
        marks.append(f"┆ target {num(gauge.target)}")
    # Each mark stays whole on its line (a wrap left a dangling "┆" at a line's end).
    keys.extend(
        f'<span style="margin-right:1rem;white-space:nowrap;color:#3D4B5C">{escape(m)}</span>'
        for m in marks
    )
    return (
        '<div class="cl-context-gauge" role="img" aria-label="context gauge">'
        + "".join(rows)
        + f'<div style="font-size:0.8rem;margin-top:0.4rem">{"".join(keys)}</div></div>'
    )
