"""The canonical JSON of messages: stable, wire-free, used for hashing, estimates and prompts.

:func:`messages_to_json` is what the summarizer is sent, what :func:`estimate_tokens
<compactlens.model.tokens.estimate_tokens>` measures and what checkpoints hash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from compactlens.model.errors import DataError, InputTypeError
from compactlens.model.messages import (
    ROLES,
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


def part_to_dict(part: Part) -> dict[str, Any]:
    """The canonical JSON object of one part (no wire data, stable keys)."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ReasoningPart):
        return {"type": "reasoning", "text": part.text}
    if isinstance(part, ToolCallPart):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    if isinstance(part, ToolResultPart):
        out: dict[str, Any] = {"type": "tool_result", "call_id": part.call_id}
        if part.name is not None:
            out["name"] = part.name
        if part.is_error:
            out["is_error"] = True
        out["output"] = part.output
        return out
    if isinstance(part, ApprovalRequestPart):
        out = {"type": "approval_request", "id": part.id}
        if part.call_id is not None:
            out["call_id"] = part.call_id
        if part.name is not None:
            out["name"] = part.name
        return out
    if isinstance(part, ApprovalResponsePart):
        out = {"type": "approval_response", "id": part.id, "approved": part.approved}
        if part.reason is not None:
            out["reason"] = part.reason
        return out
    if isinstance(part, MediaPart):
        out = {"type": "media", "media_type": part.media_type}
        for key, value in (("url", part.url), ("data", part.data), ("filename", part.filename)):
            if value is not None:
                out[key] = value
        return out
    if isinstance(part, OpaquePart):
        return {
            "type": "opaque",
            "provider": part.provider,
            "opaque_type": part.type,
            "text": part.text,
        }
    raise InputTypeError(f"unknown part type {type(part).__name__}")


def message_to_dict(message: Message) -> dict[str, Any]:
    """The canonical JSON object of a message: ``role``, optional ``name``, ``content`` parts."""
    out: dict[str, Any] = {"role": message.role}
    if message.name is not None:
        out["name"] = message.name
    out["content"] = [part_to_dict(p) for p in message.parts]
    return out


def part_from_dict(data: Mapping[str, Any]) -> Part:
    """Inverse of :func:`part_to_dict`."""
    kind = data.get("type")
    if kind == "text":
        return TextPart(str(data["text"]))
    if kind == "reasoning":
        return ReasoningPart(str(data["text"]))
    if kind == "tool_call":
        return ToolCallPart(str(data["id"]), str(data["name"]), str(data.get("arguments", "")))
    if kind == "tool_result":
        return ToolResultPart(
            str(data["call_id"]),
            str(data.get("output", "")),
            name=data.get("name"),
            is_error=bool(data.get("is_error", False)),
        )
    if kind == "approval_request":
        return ApprovalRequestPart(str(data["id"]), data.get("call_id"), data.get("name"))
    if kind == "approval_response":
        return ApprovalResponsePart(str(data["id"]), bool(data["approved"]), data.get("reason"))
    if kind == "media":
        return MediaPart(
            str(data["media_type"]), data.get("url"), data.get("data"), data.get("filename")
        )
    if kind == "opaque":
        return OpaquePart(
            str(data["provider"]), str(data["opaque_type"]), str(data.get("text", ""))
        )
    raise DataError(f"unknown part type {kind!r}")


def message_from_dict(
    data: Mapping[str, Any], *, wire: Any = None, wire_format: str | None = None
) -> Message:
    """Inverse of :func:`message_to_dict` (``wire`` and ``wire_format`` may be given back)."""
    role = data.get("role")
    if role not in ROLES:
        raise DataError(f"unknown role {role!r}")
    content = data.get("content", [])
    if not isinstance(content, list):
        raise DataError("content must be a list of parts")
    name = data.get("name")
    return Message(
        role=role,
        parts=tuple(part_from_dict(p) for p in content),
        name=name if isinstance(name, str) else None,
        wire=wire,
        wire_format=wire_format,
    )


def messages_to_json(messages: Sequence[Message]) -> str:
    """Compact canonical JSON of messages (no spaces, non-ASCII kept as is)."""
    return json.dumps(
        [message_to_dict(m) for m in messages], ensure_ascii=False, separators=(",", ":")
    )


__all__ = [
    "message_from_dict",
    "message_to_dict",
    "messages_to_json",
    "part_from_dict",
    "part_to_dict",
]
