"""Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``): one record a line.

Each line is ``{"timestamp", "type", "payload"}``. ``response_item`` records hold a
Responses API item (message, function call and output, reasoning, compaction...) and
become messages; ``session_meta``, ``turn_context``, ``event_msg`` and ``compacted``
records (and response items of kinds the Responses API does not define, such as
``ghost_snapshot``) are not messages and go back to their positions when dumped.

A compaction is a ``compacted`` record (``message``: the summary in older files;
``replacement_history``: the Responses items the agent continued with in newer ones),
followed by an ``event_msg`` of type ``context_compacted``.

Codex writes each output item of one model response as its own ``response_item``:
reasoning, text and every call of a turn with parallel tool calls, then the calls'
outputs. The assistant items of one model turn (consecutive ``response_item`` records
read as assistant messages, with only records that are not messages between them) are
one assistant message, as the Responses and Chat Completions APIs see the turn: its
``wire`` is the tuple of records and its meta ``positions`` their indices, so an
unchanged turn is written back record by record at its positions. A ``turn_context``
or ``compacted`` record ends a turn.

What the person typed is recorded twice by the Codex CLI (``codex-tui``): as a
``response_item`` user message (what the model saw) and, right after it, as an
``event_msg`` of type ``user_message`` (what the UI shows). Some rollouts (Codex Desktop
files trimmed to their events, for example) have only the event. A ``user_message``
event whose text no ``response_item`` user message carries becomes a user message at
its position (its record is written back unchanged); one that repeats a response item
stays a record that is not a message. Images recorded only as local paths cannot be
loaded and are named in the split's notes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from compactlens.formats import openai_responses as responses
from compactlens.formats._common import blocks_for, expect_map, fail, make_message, original_of
from compactlens.formats._recorded import first_positions, message_at, opt_int, opt_text
from compactlens.formats.base import (
    META_PART_BLOCKS,
    META_POSITIONS,
    ConversionWarning,
    Encoded,
    Split,
    WireFormat,
)
from compactlens.model.errors import TranscriptError
from compactlens.model.messages import (
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
)
from compactlens.model.recorded import RecordedCompaction

NAME = "codex"
RECORD_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
MESSAGE_KEYS = frozenset({"timestamp", "type", "payload"})


def _item(payload: Mapping[str, Any], source: str, loc: str) -> Message:
    """The message of one Responses item, located at ``loc`` (errors name the record)."""
    try:
        return responses.to_messages([payload], source)[0]
    except TranscriptError as exc:
        rest = exc.location.removeprefix("messages[0]")
        raise TranscriptError(exc.message, source=source, location=f"{loc}{rest}") from None


#: Records that end an assistant turn although they are not messages.
TURN_ENDS = ("turn_context", "compacted")


def _turn(run: Sequence[tuple[int, Mapping[str, Any], Message]]) -> Message:
    """One message for the records of ``run`` (one record, or an assistant turn)."""
    if len(run) == 1:
        pos, record, message = run[0]
        meta = {**message.meta, META_POSITIONS: (pos,)}
        return dataclasses.replace(message, wire=record, wire_format=NAME, meta=meta, origin=record)
    parts: list[Part] = []
    blocks: list[Any] = []
    for _, _, m in run:
        parts.extend(m.parts)
        blocks.extend(blocks_for(m, responses.NAME))
    records = tuple(record for _, record, _ in run)
    positions = tuple(pos for pos, _, _ in run)
    return make_message(
        "assistant", parts, blocks, wire=records, fmt=NAME, meta={META_POSITIONS: positions}
    )


def _user_item_texts(items: Sequence[Any]) -> list[str]:
    """The stripped texts of the ``response_item`` user messages of a rollout."""
    out: list[str] = []
    for record in items:
        if not isinstance(record, Mapping) or record.get("type") != "response_item":
            continue
        payload = record.get("payload")
        if not isinstance(payload, Mapping) or payload.get("role") != "user":
            continue
        content = payload.get("content")
        entries = [content] if isinstance(content, str) else content
        if isinstance(entries, list):
            texts = (e if isinstance(e, str) else e.get("text") for e in entries if e)
            out.append("\n".join(t for t in texts if isinstance(t, str)).strip())
    return out


def _event_message(
    payload: Mapping[str, Any], seen: Sequence[str], source: str, loc: str
) -> tuple[Message | None, str]:
    """The user message of a ``user_message`` event no response item repeats, or None;
    and a note on what of it could not be loaded."""
    text = payload.get("message")
    text = text if isinstance(text, str) else ""
    stripped = text.strip()
    if stripped and any(stripped in other for other in seen):
        return None, ""  # the response item is the message the model saw
    images = payload.get("images")
    urls = [u for u in images if isinstance(u, str)] if isinstance(images, list) else []
    local = payload.get("local_images")
    paths = len(local) if isinstance(local, list) else 0
    images_text = "an image" if paths == 1 else f"{paths} images"
    note = f"{images_text} recorded only as a local file path" if paths else ""
    if not stripped and not urls:
        return None, note
    content: list[dict[str, Any]] = [{"type": "input_text", "text": text}] if stripped else []
    content += [{"type": "input_image", "image_url": url} for url in urls]
    item = {"type": "message", "role": "user", "content": content}
    return _item(item, source, loc), note


def split(items: Sequence[Any], source: str = "<input>") -> Split:
    """Messages of the ``response_item`` records (one per assistant turn) and of the
    ``user_message`` events no response item repeats; every other record passes through."""
    messages: list[Message] = []
    passthrough: list[tuple[int, Any]] = []
    notes: list[ConversionWarning] = []
    run: list[tuple[int, Mapping[str, Any], Message]] = []
    seen = _user_item_texts(items)
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        record = expect_map(raw, source, loc, "a rollout record object")
        kind = record.get("type")
        if not isinstance(kind, str):
            fail("a rollout record needs a string 'type'", source, f"{loc}.type")
        payload = expect_map(record.get("payload"), source, f"{loc}.payload", "a payload object")
        is_item = kind == "response_item" and (
            payload.get("type") in responses.ITEM_TYPES or "role" in payload
        )
        event: Message | None = None
        if kind == "event_msg" and payload.get("type") == "user_message":
            event, note = _event_message(payload, seen, source, f"{loc}.payload")
            if note:
                detail = f"{note} in the user message at {loc}"
                notes.append(ConversionWarning(kind="dropped", detail=detail))
        if not is_item and event is None:  # other records, ghost snapshots, local items
            passthrough.append((i, record))
            if kind in TURN_ENDS and run:
                messages.append(_turn(run))
                run = []
            continue
        message = event if event is not None else _item(payload, source, f"{loc}.payload")
        if run and not (message.role == "assistant" == run[-1][2].role):
            messages.append(_turn(run))
            run = []
        run.append((i, record, message))
    if run:
        messages.append(_turn(run))
    if items and not messages and not passthrough:
        fail("no rollout records", source, "messages[0]")
    return Split(messages, passthrough, notes)


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """The messages of a rollout's ``response_item`` records."""
    return split(items, source).messages


def _as_responses(message: Message) -> Message:
    """The same message seen as a Responses item (its blocks are Responses blocks)."""
    if message.wire_format != NAME:
        return message
    record = original_of(message)
    payload = record.get("payload") if isinstance(record, Mapping) else None
    return dataclasses.replace(
        message, wire=None, wire_format=responses.NAME, origin=payload if payload else None
    )


def _stage(part: Part) -> int:
    """Where the Responses encoder writes a part: reasoning, then the message, then calls."""
    if isinstance(part, ReasoningPart):
        return 0
    if isinstance(part, OpaquePart) and part.type == "encrypted_reasoning":
        return 0
    if isinstance(part, (TextPart, MediaPart)):
        return 1
    return 2


def _segments(message: Message) -> list[Message]:
    """A changed assistant turn as Responses messages the encoder writes in their order
    (a new one wherever a part comes before the previous part's kind of item, and for
    each reasoning item)."""
    out: list[list[tuple[Part, Any]]] = []
    last, last_block = 3, None
    for pair in zip(message.parts, blocks_for(message, NAME), strict=True):
        stage, block = _stage(pair[0]), pair[1]
        other_item = stage == last == 0 and block is not None and block is not last_block
        if stage < last or other_item or not out:
            out.append([])
        out[-1].append(pair)
        last, last_block = stage, block
    return [
        Message(
            role=message.role,
            parts=tuple(p for p, _ in run),
            name=message.name,
            wire_format=responses.NAME,
            meta={META_PART_BLOCKS: tuple(b for _, b in run)},
        )
        for run in out
    ]


def _stamps(record: Any) -> list[tuple[Any, Any]]:
    """(payload, timestamp) of the record or records a message was read from."""
    records = record if isinstance(record, tuple) else (record,)
    return [(r.get("payload"), r.get("timestamp")) for r in records if isinstance(r, Mapping)]


def encode(message: Message) -> Encoded:
    """``response_item`` records wrapping the Responses items of a message.

    A changed assistant turn read from several records is written as one record per
    item again; an item equal to one it was read from keeps that record's timestamp.
    """
    record = original_of(message) if message.wire_format == NAME else None
    if isinstance(record, tuple):
        items: list[Any] = []
        notes: list[tuple[str, str]] = []
        for segment in _segments(message):
            encoded = responses.encode(segment)
            items.extend(encoded.items)
            notes.extend(n for n in encoded.notes if n not in notes)
        inner = Encoded(tuple(items), tuple(notes))
    else:
        inner = responses.encode(_as_responses(message))
    stamps = _stamps(record)
    stamp = stamps[0][1] if stamps else None
    out: list[dict[str, Any]] = []
    for item in inner.items:
        stamp = next((s for payload, s in stamps if payload == item), stamp)
        line: dict[str, Any] = {} if stamp is None else {"timestamp": stamp}
        line.update({"type": "response_item", "payload": item})
        out.append(line)
    return Encoded(tuple(out), inner.notes)


def from_message(message: Message) -> dict[str, Any]:
    """A ``response_item`` record for a new or changed message (the first, if several)."""
    item: dict[str, Any] = encode(message).items[0]
    return item


# ----------------------------------------------------------------------------- compactions


def _last_tokens(items: Sequence[Any], end: int) -> int | None:
    """Input tokens of the last ``token_count`` event before ``end``, if any."""
    for pos in range(end - 1, -1, -1):
        record = items[pos]
        payload = record.get("payload") if isinstance(record, Mapping) else None
        if not isinstance(payload, Mapping) or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        usage = info.get("last_token_usage") if isinstance(info, Mapping) else None
        if isinstance(usage, Mapping):
            return opt_int(usage.get("input_tokens")) or opt_int(usage.get("total_tokens"))
        return None
    return None


def _replacement(value: Any, source: str, loc: str) -> tuple[Message, ...] | None:
    if not isinstance(value, list):
        return None
    out: list[Message] = []
    for j, raw in enumerate(value):
        item = expect_map(raw, source, f"{loc}[{j}]", "an item object")
        if item.get("type") in responses.ITEM_TYPES or "role" in item:
            out.append(_item(item, source, f"{loc}[{j}]"))
    return tuple(out)


def _summary_of(payload: Mapping[str, Any], after: tuple[Message, ...] | None) -> str | None:
    text = payload.get("message")
    if isinstance(text, str) and text.strip():
        return text
    for m in reversed(after or ()):
        if any(isinstance(p, OpaquePart) and p.type == "compaction" for p in m.parts):
            return None  # the summary is the encrypted compaction item
        if m.role == "user" and m.text.strip():
            return m.text
    return None


def compactions(
    items: Sequence[Any], messages: Sequence[Message], document: Any = None, source: str = ""
) -> tuple[RecordedCompaction, ...]:
    """The ``compacted`` records of a rollout, with their replaced and replacement histories."""
    starts = first_positions(messages)
    out: list[RecordedCompaction] = []
    previous = 0
    for pos, record in enumerate(items):
        if not isinstance(record, Mapping) or record.get("type") != "compacted":
            continue
        payload = expect_map(record.get("payload"), source, f"messages[{pos}].payload")
        after = _replacement(
            payload.get("replacement_history"),
            source,
            f"messages[{pos}].payload.replacement_history",
        )
        summary = _summary_of(payload, after)
        index = message_at(starts, pos)
        replaced = tuple(messages[previous:index])
        encrypted = summary is None and after is not None
        out.append(
            RecordedCompaction(
                index=index,
                source="codex.compacted",
                trigger=None,
                tokens_before=_last_tokens(items, pos),
                summary=summary,
                replaced=replaced or None,
                after=after,
                timestamp=opt_text(record.get("timestamp")),
                note="the summary is encrypted (a compaction item)" if encrypted else "",
            )
        )
        previous = index
    return tuple(out)


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="Codex CLI rollout JSONL records",
    encode=encode,
    split=split,
    message_keys=MESSAGE_KEYS,
    block_keys=responses.BLOCK_KEYS,
)
