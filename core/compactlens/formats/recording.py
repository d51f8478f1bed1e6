"""compactlens recordings: what an agent-framework integration saw, one JSON line per event.

A recording (written by :mod:`compactlens.integrations.recording`) is JSON lines:

- a header ``{"type": "compactlens.recording", "version": 1, "format": F, "framework": ...}``
  naming the wire format ``F`` of every history in the file;
- ``{"type": "compactlens.history", "seq": n, "messages": [...]}`` for a model call
  that went out unchanged;
- ``{"type": "compactlens.compaction", "seq": n, "status": ..., "strategy": ...,
  "trigger": ..., "tokens_before": ..., "tokens_after": ..., "before": [...],
  "after": [...], "events": [...], "timestamp": ...}`` for a call whose history was
  changed (``before`` what the framework handed over, ``after`` what the model got;
  ``status`` is ``cannot-fit`` when the run shortened it but missed its target).

Version 2 (what the recorder writes now) stores each call's history as what was appended
since the previous call: ``keep`` leading items of the previous call's history (``base``:
``before``, or ``after`` when that call was compacted) followed by ``appended``; a
compaction record then holds ``after_parts`` (runs ``{"from": i, "to": j}`` of the history
the call saw and ``{"item": ...}`` for what it added) instead of ``before`` and ``after``.
Every call record also carries ``timestamp``, ``status``, ``strategy``, ``tokens_before`` /
``tokens_after``, the run's running ``totals``, and, when it changed, the ``config`` in
force.
Version 1 files (whole histories) still read.

The transcript's messages are the conversation as it grew: each call adds the messages
that extend what was sent the previous time. Each ``compactlens.compaction`` record
becomes one :class:`~compactlens.model.recorded.RecordedCompaction`
(``replaced`` = before, ``after`` = after).

Writing a transcript in this format (``dump_transcript(t, format="compactlens-recording")``)
gives one ``{"type": "compactlens.message", "message": {...}}`` record per message (the
canonical form, which carries every part); such records extend the conversation as they
are, and a file without a header reads its histories as canonical messages. Every message
of a recording has such a record as its wire object, so a recording converts to any
format from its parts; the histories in the file keep their own format in
``RecordedCompaction.replaced`` / ``after``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from compactlens.formats._common import expect_list, expect_map, expect_str, fail, unknown
from compactlens.formats.base import Encoded, Split, WireFormat
from compactlens.formats.canonical import FORMAT as CANONICAL
from compactlens.model.errors import TranscriptError
from compactlens.model.messages import Message
from compactlens.model.recorded import RecordedCompaction

NAME = "compactlens-recording"
HEADER = "compactlens.recording"
HISTORY = "compactlens.history"
COMPACTION = "compactlens.compaction"
MESSAGE = "compactlens.message"
RECORD_TYPES = (HEADER, HISTORY, COMPACTION, MESSAGE)
VERSION = 2


def _format_of(items: Sequence[Any], source: str) -> WireFormat:
    """The wire format the header names (canonical when there is no header)."""
    from compactlens.formats import get_format

    head = items[0] if items else None
    if not isinstance(head, Mapping) or head.get("type") != HEADER:
        return CANONICAL
    name = expect_str(head.get("format"), source, "messages[0].format")
    if name == NAME:
        fail("a recording cannot hold recordings", source, "messages[0].format")
    return get_format(name)


def _messages(fmt: WireFormat, value: Any, source: str, loc: str) -> tuple[Message, ...]:
    items = expect_list(value, source, loc)
    try:
        return tuple(fmt.split_items(items, source).messages)
    except TranscriptError as exc:
        where = exc.location
        inner = where.replace("messages", "", 1) if where.startswith("messages") else ""
        fail(exc.message, source, f"{loc}{inner}")


def _new_part(seen: Sequence[Message], previous: Sequence[Sequence[Message]]) -> Sequence[Message]:
    """The messages of ``seen`` that extend the longest earlier history it starts with
    (messages compare by role, name and parts, not by their wire objects)."""
    best = 0
    for earlier in previous:
        n = len(earlier)
        if n > best and tuple(seen[:n]) == tuple(earlier):
            best = n
    return seen[best:]


def _read(
    items: Sequence[Any], source: str
) -> tuple[list[tuple[Message, Mapping[str, Any] | None]], list[RecordedCompaction]]:
    """The conversation (each message with its ``compactlens.message`` record, if it came
    from one) and the compactions."""
    fmt = _format_of(items, source)
    grown: list[tuple[Message, Mapping[str, Any] | None]] = []
    compactions: list[RecordedCompaction] = []
    previous: list[Sequence[Message]] = []
    history = _Deltas()
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        record = expect_map(raw, source, loc)
        kind = record.get("type")
        if kind in (HISTORY, COMPACTION) and "appended" in record:
            record = history.whole(record, source, loc)
        if kind == MESSAGE:
            [one] = _messages(CANONICAL, [record.get("message")], source, f"{loc}.message")
            grown.append((one, record))
            previous = [tuple(m for m, _ in grown)]
        elif kind == HISTORY:
            seen = _messages(fmt, record.get("messages"), source, f"{loc}.messages")
            grown.extend((m, None) for m in _new_part(seen, previous))
            previous = [seen]
        elif kind == COMPACTION:
            before = _messages(fmt, record.get("before"), source, f"{loc}.before")
            after = _messages(fmt, record.get("after"), source, f"{loc}.after")
            grown.extend((m, None) for m in _new_part(before, previous))
            previous = [before, after]
            compactions.append(_compaction(record, len(grown), before, after))
        elif kind != HEADER or i > 0:
            unknown("record type", kind, RECORD_TYPES, source, f"{loc}.type")
    return grown, compactions


class _Deltas:
    """Rebuilds the whole histories of version 2 call records from their deltas."""

    def __init__(self) -> None:
        self.before: list[Any] = []
        self.after: list[Any] = []

    def whole(self, record: Mapping[str, Any], source: str, loc: str) -> Mapping[str, Any]:
        """``record`` with ``messages`` (or ``before``) holding the history the call saw."""
        seen = rebuild(self.before, self.after, record, source, loc)
        self.before = seen
        if record.get("type") == COMPACTION:
            self.after = rebuild_after(seen, record, source, loc)
            return {**record, "before": seen, "after": self.after}
        self.after = seen
        return {**record, "messages": seen}


def rebuild(
    before: Sequence[Any], after: Sequence[Any], record: Mapping[str, Any], source: str, loc: str
) -> list[Any]:
    """The history a version 2 call record saw, from the previous call's history
    (``before``) and what its model got (``after``)."""
    base = record.get("base", "before")
    if base not in ("before", "after"):
        unknown("base", base, ("before", "after"), source, f"{loc}.base")
    previous = before if base == "before" else after
    keep = record.get("keep", 0)
    if isinstance(keep, bool) or not isinstance(keep, int) or not 0 <= keep <= len(previous):
        fail(
            f"keep must be a whole number from 0 to {len(previous)} (the previous history's "
            f"length), got {keep!r}",
            source,
            f"{loc}.keep",
        )
    return [*previous[:keep], *expect_list(record.get("appended"), source, f"{loc}.appended")]


def rebuild_after(
    seen: Sequence[Any], record: Mapping[str, Any], source: str, loc: str
) -> list[Any]:
    """What the model got at a version 2 compaction record: ``after_parts`` (runs
    ``{"from": i, "to": j}`` of the history the call saw, and ``{"item": ...}``), or a whole
    ``after`` list."""
    if "after_parts" not in record:
        return list(expect_list(record.get("after"), source, f"{loc}.after"))
    out: list[Any] = []
    for i, part in enumerate(expect_list(record.get("after_parts"), source, f"{loc}.after_parts")):
        where = f"{loc}.after_parts[{i}]"
        part = expect_map(part, source, where)
        if "item" in part:
            out.append(part["item"])
            continue
        a, b = part.get("from"), part.get("to")
        if not (
            isinstance(a, int)
            and isinstance(b, int)
            and not isinstance(a, bool)
            and not isinstance(b, bool)
            and 0 <= a < b <= len(seen)
        ):
            fail(
                f"a run needs 0 <= from < to <= {len(seen)} (the history's length), "
                f"got from={a!r}, to={b!r}",
                source,
                where,
            )
        out.extend(seen[a:b])
    return out


def _as_recorded(message: Message, record: Mapping[str, Any] | None) -> Message:
    """``message`` as a message of this format: its wire is its ``compactlens.message``
    record (the one it was read from, or its canonical form)."""
    wire = (
        record
        if record is not None
        else {"type": MESSAGE, "message": CANONICAL.from_message(message)}
    )
    return replace(message, wire=wire, wire_format=NAME, meta={}, origin=wire)


def _opt(record: Mapping[str, Any], key: str, kind: type) -> Any:
    value = record.get(key)
    return value if isinstance(value, kind) and not isinstance(value, bool) else None


def _compaction(
    record: Mapping[str, Any], index: int, before: tuple[Message, ...], after: tuple[Message, ...]
) -> RecordedCompaction:
    strategy = _opt(record, "strategy", str) or "compactlens"
    return RecordedCompaction(
        index=index,
        source="compactlens.recording",
        kind="summary" if record.get("summarized") is True else "trim",
        trigger=_opt(record, "trigger", str),
        tokens_before=_opt(record, "tokens_before", int),
        tokens_after=_opt(record, "tokens_after", int),
        summary=_opt(record, "summary", str),
        replaced=before,
        after=after,
        timestamp=_opt(record, "timestamp", str),
        note=f"call {record.get('seq')}: {strategy}, {_opt(record, 'status', str) or 'compacted'}",
    )


def split(items: Sequence[Any], source: str = "<input>") -> Split:
    """The conversation as it grew over the recorded calls."""
    grown, _ = _read(items, source)
    return Split([_as_recorded(m, record) for m, record in grown], [])


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    return split(items, source).messages


def compactions(
    items: Sequence[Any], messages: Sequence[Message], document: Any = None, source: str = "<input>"
) -> tuple[RecordedCompaction, ...]:
    """One :class:`RecordedCompaction` per ``compacted`` record (indices into ``messages``)."""
    _, found = _read(items, source)
    return tuple(c for c in found if c.index <= len(messages))


def encode(message: Message) -> Encoded:
    """A ``compactlens.message`` record holding the canonical form of ``message``."""
    canonical = CANONICAL.encode_message(message)
    return Encoded(({"type": MESSAGE, "message": canonical.items[0]},), canonical.notes)


def from_message(message: Message) -> dict[str, Any]:
    item: dict[str, Any] = encode(message).items[0]
    return item


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="compactlens recording of an agent-framework run (JSON lines)",
    encode=encode,
    split=split,
)

__all__ = [
    "COMPACTION",
    "FORMAT",
    "HEADER",
    "HISTORY",
    "MESSAGE",
    "NAME",
    "VERSION",
    "compactions",
    "encode",
    "rebuild",
    "rebuild_after",
    "split",
]
