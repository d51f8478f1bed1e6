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
        return {
            "#": self.seq + 1,
            "at message": self.index,
            "kind": self.kind,
            "trigger": self.trigger,
            "tokens before": self.tokens_before,
            "tokens after": self.tokens_after,
            "messages before": self.messages_before,
            "messages after": self.messages_after,
            "when": self.timestamp,
            "source": self.source,
            "note": self.note,
        }


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
