"""Plain rows for the compactions a transcript recorded (the Event timeline's first
section when ``Transcript.compactions`` is not empty). No Streamlit here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compactlens import Transcript


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedEntry:
    """One recorded compaction as the timeline shows it."""

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

    @property
    def label(self) -> str:
        tokens = ""
        if self.tokens_before is not None and self.tokens_after is not None:
            tokens = f": {self.tokens_before:,} → {self.tokens_after:,} tokens"
        return f"{self.seq + 1}. at message {self.index} ({self.kind}){tokens}"

    def row(self) -> dict[str, Any]:
        """The table row: before and after share a cell (``167,402 → —`` when the log does
        not say), the time is UTC to the minute, and the marker is in words (the table fits
        a 1280-pixel window)."""
        return {
            "#": self.seq + 1,
            "at message": self.index,
            "kind": self.kind,
            "trigger": self.trigger,
            "tokens": f"{_count_text(self.tokens_before)} → {_count_text(self.tokens_after)}",
            "messages": f"{_count_text(self.messages_before)} → {_count_text(self.messages_after)}",
            "when (UTC)": _minute(self.timestamp),
            "read from": marker_words(self.source),
            "note": self.note,
        }


def _count_text(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def _minute(timestamp: str) -> str:
    """``2026-11-18T09:26:00.000Z`` as ``2026-11-18 09:26``; other text as it is."""
    if len(timestamp) >= 16 and timestamp[10] == "T":
        return f"{timestamp[:10]} {timestamp[11:16]}"
    return timestamp


def marker_words(source: str) -> str:
    """The marker a compaction was read from, in words, without the agent's name (the
    whole log is that agent's): ``claude_code.compact_boundary`` as ``compact boundary``."""
    marker = source.partition(".")[2] or source
    return marker.replace("_", " ")


def _count(messages: Sequence[Any] | None) -> int | None:
    return None if messages is None else len(messages)


def recorded_entries(transcript: Transcript) -> list[RecordedEntry]:
    """One entry per recorded compaction, in order."""
    return [
        RecordedEntry(
            seq=i,
            index=c.index,
            source=c.source,
            kind=c.kind,
            trigger=c.trigger or "",
            tokens_before=c.tokens_before,
            tokens_after=c.tokens_after,
            messages_before=_count(c.replaced),
            messages_after=_count(c.after),
            timestamp=c.timestamp or "",
            note=c.note,
            summary=c.summary,
        )
        for i, c in enumerate(transcript.compactions)
    ]


__all__ = ["RecordedEntry", "recorded_entries"]
