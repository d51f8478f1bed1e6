"""Coloured badges for kinds, decisions, statuses and token counts (Streamlit Markdown).

Only our own labels and numbers go into a badge; any transcript string is escaped
with :func:`~compactlens_inspector.style.safety.md_escape` first.
"""

from __future__ import annotations

from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.style.theme import DECISIONS
from compactlens_inspector.style.wording import KIND_TEXT, decision_words

KIND_BADGE = {
    "system": "gray",
    "user": "blue",
    "assistant_text": "green",
    "tool_call": "orange",
    "summary": "violet",
}
#: One colour per decision, the same in charts and diffs (``theme.DECISIONS``).
DECISION_BADGE = {action: accent.badge for action, accent in DECISIONS.items()}
STATUS_BADGE = {
    "unchanged": "gray",
    "compacted": "green",
    "cannot-fit": "red",
    "error": "red",
}
#: The badge colour of each verdict level (as the verdict bar colours it).
LEVEL_BADGE = {"safe": "green", "costs": "orange", "no-fit": "red"}
FLAG_BADGE = {
    "orphan": "red",
    "unresolved": "red",
    "approval_pending": "orange",
    "reasoning": "violet",
    "media": "blue",
    "opaque": "gray",
}


def badge(label: str, color: str) -> str:
    """``:color-badge[label]`` with the label escaped."""
    return f":{color}-badge[{md_escape(label)}]"


def kind(value: str) -> str:
    return badge(KIND_TEXT.get(value, value), KIND_BADGE.get(value, "gray"))


def decision(action: str) -> str:
    """A decision's badge, in the vocabulary's word (``dropped`` for ``excluded``)."""
    return badge(decision_words(action), DECISION_BADGE.get(action, "gray"))


def status(value: str) -> str:
    return badge(value, STATUS_BADGE.get(value, "gray"))


def verdict(headline: str, level: str) -> str:
    """A verdict's headline in its level's colour."""
    return badge(headline, LEVEL_BADGE.get(level, "gray"))


def tokens(n: int, label: str = "tokens") -> str:
    return badge(f"{num(n)} {label}", "blue")


def flag(name: str) -> str:
    return badge(name.replace("_", " "), FLAG_BADGE.get(name, "gray"))


def turn(value: int | None) -> str:
    return badge("no turn" if value is None else f"turn {value}", "gray")
