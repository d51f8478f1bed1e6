"""Plain rows for the compactions a transcript recorded (the Event timeline's first
section when ``Transcript.compactions`` is not empty). No Streamlit here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compactlens import Transcript
from compactlens.analysis import agent_kept
from compactlens.model import Tokenizer, count_messages
from compactlens_inspector.style.wording import source_words


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedEntry:
    """One recorded compaction as the timeline shows it: what the agent recorded (the
    tokens it logged, when it did) and what the counter measures, as the Post-mortem
    measures them (the history it replaced, what it kept). ``source`` is in words."""

    seq: int
    index: int
    source: str
    kind: str
    trigger: str
    tokens_before: int | None
    tokens_after: int | None
    messages_before: int | None
    messages_after: int | None
    timestamp: str
    note: str
    summary: str | None
    history_tokens: int | None = None  # the replaced history, counted (None: not recorded)
    kept_tokens: int | None = None  # what the agent continued with, counted

    @property
    def label(self) -> str:
        tokens = ""
        if self.history_tokens is not None and self.kept_tokens is not None:
            tokens = f": {self.history_tokens:,} → {self.kept_tokens:,} tokens"
        return f"{self.seq + 1}. at message {self.index} ({self.kind}){tokens}"

    def row(self, *, recorded_before: bool = True, recorded_after: bool = True) -> dict[str, Any]:
        """The table row: counted tokens beside the recorded ones ("not recorded" when the
        agent did not log them, never an empty cell); ``recorded_after``: whether the
        "tokens after (recorded)" column is shown (no agent of the table logged one)."""
        row: dict[str, Any] = {
            "#": self.seq + 1,
            "at message": self.index,
            "kind": self.kind,
            "source": self.source,
            "trigger": self.trigger,
            "history tokens": _counted(self.history_tokens),
            "agent kept (tokens)": _counted(self.kept_tokens),
        }
        if recorded_before:
            row["tokens before (recorded)"] = recorded_count(self.tokens_before)
        if recorded_after:
            row["tokens after (recorded)"] = recorded_count(self.tokens_after)
        before, after = _counted(self.messages_before), _counted(self.messages_after)
        row["messages"] = (
            f"{before:,} → {after:,}"
            if isinstance(before, int) and isinstance(after, int)
            else f"{before} → {after}"
        )
        row["when (UTC)"] = _minute(self.timestamp)
        return row


def recorded_count(tokens: int | None) -> str:
    """A count the agent recorded, or "not recorded" (never an empty ``None`` cell; the
    timeline and the Post-mortem word it alike)."""
    return f"{tokens:,}" if tokens is not None else "not recorded"


def _counted(n: int | None) -> int | str:
    """A counted number (a number, so the column sorts), or "—" when there is none."""
    return n if n is not None else "—"


def _minute(timestamp: str) -> str:
    """``2026-11-18T09:26:00.000Z`` as ``2026-11-18 09:26``; other text as it is."""
    if len(timestamp) >= 16 and timestamp[10] == "T":
        return f"{timestamp[:10]} {timestamp[11:16]}"
    return timestamp


def rows(entries: Sequence[RecordedEntry]) -> list[dict[str, Any]]:
    """The table of ``entries``, so that it fits a 1280-pixel window: without a "when"
    or "trigger" column when no entry has one, and without "tokens before (recorded)" or
    "tokens after (recorded)" when no agent recorded one."""
    before = any(e.tokens_before is not None for e in entries)
    after = any(e.tokens_after is not None for e in entries)
    out = [e.row(recorded_before=before, recorded_after=after) for e in entries]
    for column, present in (
        ("when (UTC)", any(e.timestamp for e in entries)),
        ("trigger", any(e.trigger for e in entries)),
    ):
        if not present:
            for row in out:
                row.pop(column)
    # A kind or source every entry shares is said once, above the table (:func:`shared`).
    for column in shared(entries):
        for row in out:
            row.pop(column)
    return out


def shared(entries: Sequence[RecordedEntry]) -> dict[str, str]:
    """The kind and the source when every entry has the same one (said once, not in each
    row: the table then fits a 1280-pixel window)."""
    same: dict[str, str] = {}
    for column, values in (
        ("kind", {e.kind for e in entries}),
        ("source", {e.source for e in entries}),
    ):
        if len(values) == 1:
            same[column] = next(iter(values))
    return same


def _count(messages: Sequence[Any] | None) -> int | None:
    return None if messages is None else len(messages)


def recorded_entries(transcript: Transcript, tokenizer: Tokenizer) -> list[RecordedEntry]:
    """One entry per recorded compaction, in order, its history and what the agent kept
    counted with ``tokenizer`` (the counter every page counts with)."""

    def counted(messages: Sequence[Any]) -> int | None:
        return sum(count_messages(messages, tokenizer)) if messages else None

    return [
        RecordedEntry(
            seq=i,
            index=c.index,
            source=source_words(c.source),
            kind=c.kind,
            trigger=c.trigger or "",
            tokens_before=c.tokens_before,
            tokens_after=c.tokens_after,
            messages_before=_count(c.replaced),
            messages_after=_count(c.after),
            timestamp=c.timestamp or "",
            note=c.note,
            summary=c.summary,
            history_tokens=counted(c.replaced or ()),
            kept_tokens=counted(agent_kept(c)),
        )
        for i, c in enumerate(transcript.compactions)
    ]


__all__ = ["RecordedEntry", "recorded_count", "recorded_entries", "rows", "shared"]
