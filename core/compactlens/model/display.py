"""Rich display in notebooks: one compact card for every result-like value.

Jupyter (and VS Code) calls ``_repr_html_`` on the last value of a cell. Each compactlens
value that has one (transcripts, indexes, results, explanations, reports) builds a
:class:`Card` of plain strings and numbers and renders it here, so the look is one idea in
one place and every string is escaped once: transcript text is untrusted, and the card
renders it inert. The decision and status colours live here because this is the lowest
layer that shows them; :mod:`compactlens.viz` uses the same ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from compactlens.model.errors import MissingDependencyError, install_hint

#: One colour per group decision (figures and cards).
DECISION_COLORS: dict[str, str] = {
    "kept": "#8DA0B6",
    "excluded": "#E4572E",
    "collapsed": "#F2A541",
    "summarized": "#7B61FF",
    "inserted": "#2BB673",
}
#: One colour per run status (figures and cards).
STATUS_COLORS: dict[str, str] = {
    "unchanged": "#6C757D",
    "compacted": "#2BB673",
    "cannot-fit": "#E4572E",
    "error": "#B00020",
}

#: The budget bar's colour within the budget when no verdict gives one.
NEUTRAL_BAR = DECISION_COLORS["kept"]

#: Colours of a card's status badge without a verdict: only the failures are coloured (a
#: green "compacted" read as "safe" over a run that lost half its facts).
_BADGE_COLORS = {name: STATUS_COLORS[name] for name in ("cannot-fit", "error")}

#: Colours of a card's group counts (``dropped`` is the ``excluded`` decision).
_COUNT_COLORS = {**DECISION_COLORS, "dropped": DECISION_COLORS["excluded"]}

#: Colours of a card's frame, text and bar, from JupyterLab's theme variables (so a dark
#: theme reads), with the light values where no theme defines them (VS Code, a code host).
THEME = {
    "border": "var(--jp-border-color2, #DEE2E6)",
    "muted": "var(--jp-ui-font-color2, #6C757D)",
    "bar": "var(--jp-layout-color2, #F8F9FA)",
    "track": "var(--jp-layout-color3, #E9ECEF)",
    "mark": "var(--jp-ui-font-color1, #343A40)",
}

#: Longest text a card shows from one field before cutting it with an ellipsis.
CARD_TEXT_LIMIT = 240


@dataclass(frozen=True, slots=True, kw_only=True)
class Card:
    """What a card shows. Every field is optional except the title."""

    title: str
    """What the value is, e.g. ``CompactionResult`` or ``Transcript``."""

    status: str | None = None
    """The run's status (``compacted``, ``cannot-fit``...), shown as a coloured badge."""

    tokens_before: int | None = None
    tokens_after: int | None = None
    budget: int | None = None
    """The target in tokens; with ``tokens_after`` it draws the budget bar."""

    counts: Mapping[str, int] = field(default_factory=dict)
    """Groups per decision (kept, collapsed, summarized, dropped...), in display order."""

    facts: tuple[tuple[str, str], ...] = ()
    """Other lines as (label, value)."""

    reason: str = ""
    """Why the run ended as it did (cannot-fit reason, explanation summary)."""

    fix: str = ""
    """The top fix, when there is one."""

    fix_label: str = "top fix"
    """How the ``fix`` line is labelled (a verdict's card: ``next step``)."""

    accent: str | None = None
    """A colour for the card's left edge (a verdict's level: green, amber, red)."""

    status_color: str | None = None
    """The badge's colour (a verdict's level); default: red for a run that did not fit
    or failed, grey otherwise (green is the verdict's "Fits and safe", never a status's)."""


def clip(text: str, limit: int = CARD_TEXT_LIMIT) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def card_text(card: Card) -> str:
    """A short one-line ``repr``: the title, status, tokens and group counts (line breaks
    in any text become spaces)."""
    bits = [card.status] if card.status else []
    if card.tokens_before is not None and card.tokens_after is not None:
        bits.append(f"{card.tokens_before:,} → {card.tokens_after:,} tokens")
    elif card.tokens_before is not None:
        bits.append(f"{card.tokens_before:,} tokens")
    if card.budget is not None:
        bits.append(f"budget {card.budget:,}")
    counts = ", ".join(f"{n:,} {name}" for name, n in card.counts.items() if n)
    if counts:
        bits.append(counts)
    bits.extend(f"{label} {value}" for label, value in card.facts[:2])
    if card.reason:
        bits.append(clip(card.reason, 80))
    return " ".join(f"<{card.title}: {'; '.join(bits)}>".split())


def card_html(card: Card) -> str:
    """The card as one ``<div>`` with inline styles (notebook front ends strip ``<style>``
    blocks inconsistently); every string is escaped."""
    rows = [_header(card)]
    if card.tokens_before is not None:
        rows.append(_tokens_line(card))
    if card.tokens_after is not None and card.budget:
        # Within the budget the bar takes the verdict's colour when the card has one; a card
        # without a verdict (a result's) draws it neutral: meeting the target is not "safe".
        rows.append(
            budget_bar_html(card.tokens_after, card.budget, card.tokens_before, color=card.accent)
        )
    if card.counts:
        rows.append(_counts_line(card.counts))
    muted = THEME["muted"]
    rows.extend(
        f'<div><span style="color:{muted}">{escape(label)}</span> {escape(clip(value))}</div>'
        for label, value in card.facts
    )
    if card.reason:
        rows.append(f'<div data-role="reason"><b>why</b> {escape(clip(card.reason))}</div>')
    if card.fix:
        # The next step is shown whole (on one line): a choice of two, or a fix with its
        # cost, cut short would hide the half that matters.
        step = " ".join(card.fix.split())
        rows.append(f'<div data-role="fix"><b>{escape(card.fix_label)}:</b> {escape(step)}</div>')
    style = (
        "font-family:system-ui,sans-serif;font-size:13px;line-height:1.5;max-width:640px;"
        f"border:1px solid {THEME['border']};border-radius:6px;padding:8px 12px"
    )
    if card.accent:
        style += f";border-left:6px solid {card.accent}"
    return f'<div class="compactlens-card" style="{style}">' + "".join(rows) + "</div>"


def budget_bar_html(
    tokens: int, budget: int, before: int | None = None, *, color: str | None = None
) -> str:
    """A bar of ``tokens`` against ``budget`` (red when over), with ``before`` as a grey
    track when given. Within the budget the bar is ``color`` (a verdict's level), or a
    neutral grey: a bar that only knows the target was met does not say green ("safe")."""
    top = max(budget, tokens, before or 0, 1)
    over = tokens > budget
    color = STATUS_COLORS["cannot-fit"] if over else (color or NEUTRAL_BAR)
    track = (
        f'<div style="position:absolute;height:100%;width:{100 * (before or 0) / top:.1f}%;'
        f'background:{THEME["track"]}"></div>'
    )
    fill = (
        f'<div style="position:absolute;height:100%;width:{100 * tokens / top:.1f}%;'
        f'background:{color}"></div>'
    )
    mark = (
        f'<div style="position:absolute;height:100%;left:{100 * budget / top:.1f}%;'
        f'border-left:2px dashed {THEME["mark"]}"></div>'
    )
    words = f"{tokens:,} of {budget:,} tokens ({'over' if over else 'within'} budget)"
    return (
        f'<div data-role="budget" title="{words}" style="position:relative;height:10px;'
        f'margin:4px 0;background:{THEME["bar"]};border-radius:3px">{track}{fill}{mark}</div>'
        f'<div style="color:{THEME["muted"]};font-size:12px">{words}</div>'
    )


def _header(card: Card) -> str:
    head = f"<b>{escape(card.title)}</b>"
    if card.status:
        color = card.status_color or _BADGE_COLORS.get(card.status, STATUS_COLORS["unchanged"])
        head += (
            f' <span data-role="status" style="background:{color};color:white;'
            f'border-radius:3px;padding:0 6px">{escape(card.status)}</span>'
        )
    return f"<div>{head}</div>"


def _tokens_line(card: Card) -> str:
    text = f"{card.tokens_before:,}"
    if card.tokens_after is not None:
        text += f" → {card.tokens_after:,}"
    return f'<div data-role="tokens">{text} tokens</div>'


def _counts_line(counts: Mapping[str, int]) -> str:
    cells = [
        f'<span style="color:{_COUNT_COLORS.get(name, "#6C757D")}">■</span> {n:,} {escape(name)}'
        for name, n in counts.items()
    ]
    return '<div data-role="counts">' + " · ".join(cells) + "</div>"


def data_frame(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], *, integers: Sequence[str] = ()
) -> Any:
    """A ``pandas.DataFrame`` of ``rows`` with ``columns`` in order; ``integers`` are columns
    of whole numbers that may be missing (pandas' nullable ``Int64``, not floats). pandas is
    imported here, on first use (the notebook extra: :func:`install_hint`)."""
    try:
        import pandas as pd  # type: ignore[import-untyped]
    except ModuleNotFoundError as exc:
        raise MissingDependencyError(
            "to_pandas() needs pandas: " + install_hint("notebook")
        ) from exc
    frame = pd.DataFrame(list(rows), columns=list(columns))
    return frame.astype(dict.fromkeys(integers, "Int64"))
