"""Claude Code session logs (``~/.claude/projects/*/<session>.jsonl``): one event a line.

``user`` and ``assistant`` events wrap an Anthropic message in ``message``; all
other events (``progress``, ``summary``, ``system``, ``queue-operation``,
``file-history-snapshot``...) are not messages and are passed through at their
positions. Claude Code logs each content block of one API response as its own
``assistant`` event with the same ``message.id``; those events are merged into
one message (its ``wire`` is the tuple of events, its meta ``positions`` their
indices), also across the tool-result events that arrive between them, until a
user event that is not only tool results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactlens.formats import anthropic
from compactlens.formats._common import (
    expect_map,
    fail,
    make_message,
    original_of,
    unknown,
)
from compactlens.formats._recorded import (
    first_positions,
    message_at,
    opt_int,
    opt_text,
    text_of_content,
)
from compactlens.formats.base import META_POSITIONS, Encoded, Split, WireFormat
from compactlens.model.messages import Message, Part, Role
from compactlens.model.recorded import RecordedCompaction

NAME = "claude-code"
MESSAGE_EVENTS = ("user", "assistant")
#: Event keys present on the message events of a session log.
ENVELOPE_KEYS = ("sessionId", "uuid", "parentUuid")
MESSAGE_KEYS = frozenset({"type", "message"})


@dataclass
class _Builder:
    role: Role
    message_id: str | None
    parts: list[Part] = field(default_factory=list)
    blocks: list[Mapping[str, Any] | None] = field(default_factory=list)
    events: list[Mapping[str, Any]] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)

    def build(self) -> Message:
        wire: Any = self.events[0] if len(self.events) == 1 else tuple(self.events)
        return make_message(
            self.role,
            self.parts,
            self.blocks,
            wire=wire,
            fmt=NAME,
            meta={META_POSITIONS: tuple(self.positions)},
        )


def split(items: Sequence[Any], source: str = "<input>") -> Split:
    """Messages (merged per API message) and the other events with their positions."""
    builders: list[_Builder] = []
    passthrough: list[tuple[int, Any]] = []
    open_assistant: _Builder | None = None
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        event = expect_map(raw, source, loc, "an event object")
        kind = event.get("type")
        if kind not in MESSAGE_EVENTS:
            if not isinstance(kind, str):
                fail("an event needs a string 'type'", source, f"{loc}.type")
            passthrough.append((i, event))
            continue
        message = expect_map(event.get("message"), source, f"{loc}.message")
        role = message.get("role")
        if role != kind:
            unknown("role", role, (str(kind),), source, f"{loc}.message.role")
        parts, blocks = anthropic.parse_blocks(
            message.get("content"), source, f"{loc}.message.content"
        )
        if kind == "assistant":
            mid = message.get("id")
            message_id = mid if isinstance(mid, str) else None
            if (
                open_assistant is not None
                and message_id is not None
                and open_assistant.message_id == message_id
            ):
                target = open_assistant
            else:
                target = _Builder("assistant", message_id)
                builders.append(target)
                open_assistant = target
        else:
            typed = anthropic.message_role("user", parts, source, f"{loc}.message.role")
            target = _Builder(typed, None)
            builders.append(target)
            if typed != "tool":
                open_assistant = None
        target.parts.extend(parts)
        target.blocks.extend(blocks)
        target.events.append(event)
        target.positions.append(i)
    if items and not builders:
        fail("no user or assistant events with a 'message'", source, "messages[0]")
    return Split([b.build() for b in builders], passthrough)


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """The messages of a session log's events (other events are skipped)."""
    return split(items, source).messages


def _envelope(message: Message) -> tuple[dict[str, Any], dict[str, Any]]:
    """Envelope keys and message keys of the (first) original event, if any."""
    wire = original_of(message)
    first = wire[0] if isinstance(wire, tuple) and wire else wire
    if message.wire_format != NAME or not isinstance(first, Mapping):
        return {}, {}
    env = {k: v for k, v in first.items() if k not in ("type", "message")}
    inner = first.get("message")
    extra = (
        {k: v for k, v in inner.items() if k not in anthropic.MESSAGE_KEYS}
        if isinstance(inner, Mapping)
        else {}
    )
    return env, extra


def encode(message: Message) -> Encoded:
    """A ``user`` or ``assistant`` event wrapping the Anthropic form of a message."""
    inner = anthropic.encode(_as_anthropic(message))
    notes = list(inner.notes)
    body = dict(inner.items[0])
    env, extra = _envelope(message)
    kind = "assistant" if message.role == "assistant" else "user"
    event: dict[str, Any] = {}
    for key, value in env.items():
        event[key] = value
    event["type"] = kind
    msg: dict[str, Any] = {}
    if kind == "assistant":
        msg.update({k: v for k, v in extra.items() if k != "role"})
    msg["role"] = kind
    msg["content"] = body["content"]
    event["message"] = msg
    if isinstance(original_of(message), tuple) and len(original_of(message)) > 1:
        notes.append(("approximated", "a changed merged assistant message is written as one event"))
    return Encoded((event,), tuple(notes))


def _as_anthropic(message: Message) -> Message:
    """The same message seen as an Anthropic message (blocks are Anthropic blocks)."""
    if message.wire_format != NAME:
        return message
    return Message(
        role=message.role,
        parts=message.parts,
        name=message.name,
        wire=None,
        wire_format=anthropic.NAME,
        meta=message.meta,
    )


def from_message(message: Message) -> dict[str, Any]:
    """Build a session event for a new or changed message."""
    item: dict[str, Any] = encode(message).items[0]
    return item


def _is_boundary(event: Any) -> bool:
    return (
        isinstance(event, Mapping)
        and event.get("type") == "system"
        and event.get("subtype") == "compact_boundary"
    )


def _is_summary_record(event: Any) -> bool:
    return (
        isinstance(event, Mapping)
        and event.get("type") == "summary"
        and isinstance(event.get("summary"), str)
    )


def _message_starting(starts: Sequence[int], pos: int) -> tuple[int, int | None]:
    """The message index an event at ``pos`` falls in, and that index again when the
    event starts the message (None otherwise)."""
    index = message_at(starts, pos)
    return index, index if index < len(starts) and starts[index] == pos else None


def _compact_summary_text(event: Mapping[str, Any]) -> str:
    inner = event.get("message")
    return text_of_content(inner.get("content")) if isinstance(inner, Mapping) else ""


def _summary_after(
    items: Sequence[Any], start: int, starts: Sequence[int]
) -> tuple[str | None, int | None, int | None]:
    """The summary a boundary recorded: the ``isCompactSummary`` user event right after
    it (its text, its message index and its position), else a ``summary`` record right
    after the boundary (some tools write the summary so), else nothing."""
    record: tuple[str, int] | None = None
    for pos in range(start + 1, min(len(items), start + 8)):
        event = items[pos]
        if _is_boundary(event):
            break
        if isinstance(event, Mapping) and event.get("isCompactSummary") is True:
            return _compact_summary_text(event), _message_starting(starts, pos)[1], pos
        if pos == start + 1 and _is_summary_record(event):
            record = (event["summary"], pos)
    if record is not None:
        return record[0], None, record[1]
    return None, None, None


def _at_boundary(
    event: Mapping[str, Any],
    pos: int,
    items: Sequence[Any],
    messages: Sequence[Message],
    previous: int,
) -> tuple[RecordedCompaction, int | None]:
    """The compaction a ``compact_boundary`` event records, and the position of the
    summary event it took (None: none found)."""
    starts = first_positions(messages)
    meta = event.get("compactMetadata")
    meta = meta if isinstance(meta, Mapping) else {}
    index = message_at(starts, pos)
    summary, summary_index, summary_pos = _summary_after(items, pos, starts)
    replaced = tuple(messages[previous:index])
    found = RecordedCompaction(
        index=index,
        source="claude_code.compact_boundary",
        trigger=opt_text(meta.get("trigger")),
        tokens_before=opt_int(meta.get("preTokens")),
        summary=summary,
        summary_index=summary_index,
        replaced=replaced or None,
        after=(messages[summary_index],) if summary_index is not None else None,
        timestamp=opt_text(event.get("timestamp")),
        note="" if replaced else "the replaced history is not in this file",
    )
    return found, summary_pos


def _at_lone_summary(
    event: Mapping[str, Any], pos: int, messages: Sequence[Message], previous: int
) -> RecordedCompaction:
    """The compaction an ``isCompactSummary`` user event records with no boundary."""
    index, at = _message_starting(first_positions(messages), pos)
    replaced = tuple(messages[previous:index])
    return RecordedCompaction(
        index=index,
        source="claude_code.compact_summary",
        summary=_compact_summary_text(event),
        summary_index=at,
        replaced=replaced or None,
        after=(messages[at],) if at is not None else None,
        timestamp=opt_text(event.get("timestamp")),
        note="no compact_boundary event before the summary"
        + ("" if replaced else "; the replaced history is not in this file"),
    )


def compactions(
    items: Sequence[Any], messages: Sequence[Message], document: Any = None, source: str = ""
) -> tuple[RecordedCompaction, ...]:
    """Compactions recorded in a session log.

    Claude Code records a compaction as a ``system`` event with subtype
    ``compact_boundary`` (``compactMetadata``: trigger, ``preTokens``) followed by a user
    event marked ``isCompactSummary`` (the summary; some tools write a ``summary`` record
    right after the boundary instead); an ``isCompactSummary`` event with no boundary
    before it is a compaction too. The replaced history is the messages between the
    previous compaction's summary (or the start) and the boundary.

    A ``summary`` record anywhere else (``{"type": "summary", "summary", "leafUuid"}``,
    at the top of a resumed log or between messages) is a session title for Claude
    Code's resume list, not a compaction: it stays among the file's other events.
    """
    out: list[RecordedCompaction] = []
    previous = 0
    taken: set[int] = set()
    for pos, event in enumerate(items):
        if not isinstance(event, Mapping):
            continue
        if _is_boundary(event):
            found, summary_pos = _at_boundary(event, pos, items, messages, previous)
            if summary_pos is not None:
                taken.add(summary_pos)
        elif event.get("isCompactSummary") is True and pos not in taken:
            found = _at_lone_summary(event, pos, messages, previous)
        else:
            continue
        out.append(found)
        previous = found.summary_index if found.summary_index is not None else found.index
    return tuple(out)


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="Claude Code session JSONL events",
    encode=encode,
    split=split,
    message_keys=MESSAGE_KEYS,
    block_keys=anthropic.BLOCK_KEYS,
)
