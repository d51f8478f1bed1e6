"""Accept what the caller has (wire dicts or :class:`Message` objects) and give back the same kind.

Unchanged messages go back as the very same objects the caller passed in; only new
or changed messages are built again, in the caller's wire format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from compactlens.formats import OPENAI_CHAT, get_format
from compactlens.formats.base import WireFormat
from compactlens.model.errors import InputTypeError, TranscriptError
from compactlens.model.messages import Message


@dataclass(frozen=True, slots=True)
class CallerMessages:
    """The caller's input: canonical messages plus what is needed to answer in kind."""

    messages: tuple[Message, ...]
    originals: tuple[Any, ...]
    kind: Literal["messages", "wire"]
    format: WireFormat

    def emit(self, messages: Sequence[Message]) -> list[Any]:
        """Messages in the caller's kind; originals are returned as the same objects."""
        if self.kind == "messages":
            return list(messages)
        out: list[Any] = []
        fmt = self.format
        for m in messages:
            if m.wire is not None and m.wire_format == fmt.name:
                # A message merged from several wire items (Claude Code events) keeps a tuple.
                if isinstance(m.wire, tuple):
                    out.extend(m.wire)
                else:
                    out.append(m.wire)
            else:
                out.append(fmt.from_message(m))
        return out


def from_caller(
    items: Sequence[Any], *, format: str | WireFormat | None = None, source: str = "<list>"
) -> CallerMessages:
    """Read a list of wire dicts (default: OpenAI Chat Completions) or of :class:`Message`."""
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise InputTypeError(
            f"expected a list of messages, got {type(items).__name__}; "
            "use load_transcript() for files and raw JSON"
        )
    fmt = get_format(format) if isinstance(format, str) else (format or OPENAI_CHAT)
    originals = tuple(items)
    if not originals:
        return CallerMessages((), (), "wire", fmt)
    if all(isinstance(m, Message) for m in originals):
        wire_names = {m.wire_format for m in originals if m.wire_format}
        if format is None and len(wire_names) == 1:
            fmt = get_format(next(iter(wire_names)))
        return CallerMessages(originals, originals, "messages", fmt)
    if any(isinstance(m, Message) for m in originals):
        first = next(i for i, m in enumerate(originals) if not isinstance(m, Message))
        raise TranscriptError(
            "a list mixes Message objects and wire dicts",
            source=source,
            location=f"messages[{first}]",
        )
    return CallerMessages(tuple(fmt.to_messages(originals, source)), originals, "wire", fmt)


def caller_format(items: Sequence[Any]) -> str:
    """The wire format :func:`from_caller` reads ``items`` in (a list of :class:`Message`
    that all name one format: that one; else Chat Completions): the format
    ``apply_compaction`` over them runs and judges the provider of."""
    return from_caller(items).format.name
