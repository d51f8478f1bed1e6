"""compactlens' own JSON: each message as ``{"role", "name"?, "parts": [{"kind", ...}]}``.

A part is its dataclass fields with ``kind`` first; fields equal to their default
may be left out. A document is ``{"format": "compactlens", "version": 1,
"messages": [...]}``. Every part type and every field is carried, so this format
loses nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from compactlens.formats._common import (
    ROLE_OF,
    expect_list,
    expect_map,
    fail,
    json_type,
    make_message,
    opt_str,
    unknown,
)
from compactlens.formats.base import Encoded, WireFormat
from compactlens.model.messages import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

NAME = "canonical"
DOCUMENT_FORMAT = "compactlens"
VERSION = 1
PART_CLASSES: dict[str, type[Any]] = {
    "text": TextPart,
    "reasoning": ReasoningPart,
    "tool_call": ToolCallPart,
    "tool_result": ToolResultPart,
    "approval_request": ApprovalRequestPart,
    "approval_response": ApprovalResponsePart,
    "media": MediaPart,
    "opaque": OpaquePart,
}
MESSAGE_KEYS = frozenset({"role", "name", "parts"})
BLOCK_KEYS: dict[str, frozenset[str]] = {}


def _field_ok(value: Any, annotation: str) -> bool:
    if value is None:
        return "None" in annotation
    if "bool" in annotation:
        return isinstance(value, bool)
    return isinstance(value, str)


def _part(raw: Any, source: str, loc: str) -> Part:
    block = expect_map(raw, source, loc, "a part object")
    kind = block.get("kind")
    cls = PART_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        unknown("part kind", kind, tuple(PART_CLASSES), source, f"{loc}.kind")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name == "kind":
            continue
        if f.name not in block:
            if f.default is dataclasses.MISSING:
                fail(f"a {kind} part needs {f.name!r}", source, f"{loc}.{f.name}")
            continue
        value = block[f.name]
        if not _field_ok(value, str(f.type)):
            fail(f"{f.name} must be {f.type}, got {json_type(value)}", source, f"{loc}.{f.name}")
        values[f.name] = value
    extra = set(block) - {f.name for f in dataclasses.fields(cls)}
    if extra:
        fail(f"unknown field {sorted(extra)[0]!r} in a {kind} part", source, loc)
    part: Part = cls(**values)
    return part


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """Convert canonical message dicts to messages."""
    out: list[Message] = []
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        item = expect_map(raw, source, loc, "a message object")
        role = item.get("role")
        if not isinstance(role, str) or role not in ROLE_OF:
            unknown("role", role, tuple(ROLE_OF), source, f"{loc}.role")
        extra = sorted(set(item) - MESSAGE_KEYS)
        if extra:
            fail(f"unknown message field {extra[0]!r}", source, f"{loc}.{extra[0]}")
        name = opt_str(item.get("name"), source, f"{loc}.name")
        raw_parts = expect_list(item.get("parts"), source, f"{loc}.parts")
        parts = [_part(p, source, f"{loc}.parts[{j}]") for j, p in enumerate(raw_parts)]
        out.append(make_message(ROLE_OF[role], parts, [], wire=item, fmt=NAME, name=name))
    return out


def part_to_dict(part: Part) -> dict[str, Any]:
    """A part as a dict: ``kind`` first, then the fields that differ from their default."""
    out: dict[str, Any] = {"kind": part.kind}
    for f in dataclasses.fields(part):
        if f.name == "kind":
            continue
        value = getattr(part, f.name)
        if f.default is not dataclasses.MISSING and value == f.default:
            continue
        out[f.name] = value
    return out


def encode(message: Message) -> Encoded:
    """The canonical dict of a message."""
    out: dict[str, Any] = {"role": message.role}
    if message.name is not None:
        out["name"] = message.name
    out["parts"] = [part_to_dict(p) for p in message.parts]
    return Encoded((out,))


def from_message(message: Message) -> dict[str, Any]:
    """The canonical dict of a message."""
    item: dict[str, Any] = encode(message).items[0]
    return item


def document(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A canonical document holding ``items``."""
    return {"format": DOCUMENT_FORMAT, "version": VERSION, "messages": list(items)}


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="compactlens canonical JSON",
    encode=encode,
    message_keys=MESSAGE_KEYS,
    block_keys=BLOCK_KEYS,
)
