"""OpenAI Chat Completions messages (``role``/``content``/``tool_calls``, legacy ``function_call``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from compactlens.errors import TranscriptError
from compactlens.formats.base import WireFormat
from compactlens.messages import (
    ROLES,
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

NAME = "openai-chat"
_REASONING_KEYS = ("reasoning_content", "reasoning")


def _require_str(value: Any, source: str, location: str) -> str:
    if not isinstance(value, str):
        raise TranscriptError(
            f"expected a string, got {type(value).__name__}", source=source, location=location
        )
    return value


def _content_parts(content: Any, source: str, loc: str) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextPart(content)] if content != "" else [TextPart("")]
    if not isinstance(content, list):
        raise TranscriptError(
            f"content must be a string, a list of parts or null, got {type(content).__name__}",
            source=source,
            location=loc,
        )
    parts: list[Part] = []
    for j, item in enumerate(content):
        ploc = f"{loc}[{j}]"
        if isinstance(item, str):
            parts.append(TextPart(item))
            continue
        if not isinstance(item, Mapping):
            raise TranscriptError(
                f"a content part must be an object, got {type(item).__name__}",
                source=source,
                location=ploc,
            )
        kind = item.get("type")
        if kind in ("text", "input_text", "output_text"):
            parts.append(TextPart(_require_str(item.get("text"), source, f"{ploc}.text")))
        elif kind == "refusal":
            parts.append(TextPart(_require_str(item.get("refusal"), source, f"{ploc}.refusal")))
        elif kind == "image_url":
            image = item.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            if not isinstance(url, str):
                raise TranscriptError(
                    "image_url needs a url string", source=source, location=f"{ploc}.image_url"
                )
            if url.startswith("data:"):
                parts.append(MediaPart("image", data=url))
            else:
                parts.append(MediaPart("image", url=url))
        elif kind == "input_audio":
            audio = item.get("input_audio")
            fmt = audio.get("format") if isinstance(audio, Mapping) else None
            data = audio.get("data") if isinstance(audio, Mapping) else None
            parts.append(MediaPart(f"audio/{fmt or 'unknown'}", data=data if isinstance(data, str) else None))
        elif kind == "file":
            file = item.get("file")
            filename = file.get("filename") if isinstance(file, Mapping) else None
            data = file.get("file_data") if isinstance(file, Mapping) else None
            file_id = file.get("file_id") if isinstance(file, Mapping) else None
            parts.append(
                MediaPart(
                    "file",
                    url=file_id if isinstance(file_id, str) else None,
                    data=data if isinstance(data, str) else None,
                    filename=filename if isinstance(filename, str) else None,
                )
            )
        else:
            raise TranscriptError(
                f"unknown content part type {kind!r}; expected text, image_url, input_audio, "
                "file or refusal",
                source=source,
                location=f"{ploc}.type",
            )
    return parts


def _tool_call(call: Any, source: str, loc: str) -> ToolCallPart:
    if not isinstance(call, Mapping):
        raise TranscriptError("a tool call must be an object", source=source, location=loc)
    call_id = _require_str(call.get("id"), source, f"{loc}.id")
    kind = call.get("type", "function")
    if kind == "custom":
        custom = call.get("custom")
        if not isinstance(custom, Mapping):
            raise TranscriptError("custom tool call needs 'custom'", source=source, location=loc)
        name = _require_str(custom.get("name"), source, f"{loc}.custom.name")
        args = custom.get("input", "")
        return ToolCallPart(call_id, name, args if isinstance(args, str) else json.dumps(args))
    fn = call.get("function")
    if not isinstance(fn, Mapping):
        raise TranscriptError(
            "a tool call needs a 'function' object", source=source, location=f"{loc}.function"
        )
    name = _require_str(fn.get("name"), source, f"{loc}.function.name")
    args = fn.get("arguments", "")
    if args is None:
        args = ""
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    return ToolCallPart(call_id, name, args)


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """Convert Chat Completions message dicts to messages.

    Legacy ``function_call`` messages get a stable synthetic id ``fc_<index>``;
    a later ``role: "function"`` message is paired with the nearest earlier
    pending legacy call of the same name.
    """
    out: list[Message] = []
    pending_legacy: dict[str, list[str]] = {}
    for i, item in enumerate(items):
        loc = f"messages[{i}]"
        if not isinstance(item, Mapping):
            raise TranscriptError(
                f"a message must be an object, got {type(item).__name__}", source=source, location=loc
            )
        role = item.get("role")
        if role == "function":
            name = _require_str(item.get("name"), source, f"{loc}.name")
            stack = pending_legacy.get(name)
            call_id = stack.pop(0) if stack else f"fc_orphan_{i}"
            output = item.get("content")
            text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
            out.append(
                Message(
                    role="tool",
                    parts=(ToolResultPart(call_id, text if output is not None else "", name=name),),
                    name=name,
                    wire=item,
                    wire_format=NAME,
                )
            )
            continue
        if role not in ROLES:
            raise TranscriptError(
                f"unknown role {role!r}; expected one of system, developer, user, assistant, "
                "tool or function",
                source=source,
                location=f"{loc}.role",
            )
        typed_role: Role = role
        parts: list[Part] = []
        for key in _REASONING_KEYS:
            reasoning = item.get(key)
            if isinstance(reasoning, str) and reasoning:
                parts.append(ReasoningPart(reasoning))
                break
        if typed_role == "tool":
            call_id = item.get("tool_call_id")
            if not isinstance(call_id, str):
                raise TranscriptError(
                    "a tool message needs a string tool_call_id",
                    source=source,
                    location=f"{loc}.tool_call_id",
                )
            content = _content_parts(item.get("content"), source, f"{loc}.content")
            output = "\n".join(p.text for p in content if isinstance(p, TextPart))
            parts.append(ToolResultPart(call_id, output, name=item.get("name")))
            parts.extend(p for p in content if not isinstance(p, TextPart))
        else:
            parts.extend(_content_parts(item.get("content"), source, f"{loc}.content"))
        tool_calls = item.get("tool_calls")
        if tool_calls is not None:
            if not isinstance(tool_calls, list):
                raise TranscriptError(
                    "tool_calls must be a list", source=source, location=f"{loc}.tool_calls"
                )
            for j, call in enumerate(tool_calls):
                parts.append(_tool_call(call, source, f"{loc}.tool_calls[{j}]"))
        legacy = item.get("function_call")
        if isinstance(legacy, Mapping):
            name = _require_str(legacy.get("name"), source, f"{loc}.function_call.name")
            args = legacy.get("arguments", "")
            call_id = f"fc_{i}"
            pending_legacy.setdefault(name, []).append(call_id)
            parts.append(ToolCallPart(call_id, name, args if isinstance(args, str) else json.dumps(args)))
        name_value = item.get("name")
        out.append(
            Message(
                role=typed_role,
                parts=tuple(parts),
                name=name_value if isinstance(name_value, str) else None,
                wire=item,
                wire_format=NAME,
            )
        )
    return out


def _media_to_part(part: MediaPart) -> dict[str, Any]:
    if part.media_type.startswith("audio/"):
        return {
            "type": "input_audio",
            "input_audio": {"data": part.data or "", "format": part.media_type.split("/", 1)[1]},
        }
    if part.media_type.startswith("image"):
        return {"type": "image_url", "image_url": {"url": part.url or part.data or ""}}
    file: dict[str, Any] = {}
    if part.filename:
        file["filename"] = part.filename
    if part.data:
        file["file_data"] = part.data
    if part.url:
        file["file_id"] = part.url
    return {"type": "file", "file": file}


def from_message(message: Message) -> dict[str, Any]:
    """Build a Chat Completions dict for a message (used for new or changed messages)."""
    texts = [p for p in message.parts if isinstance(p, TextPart)]
    media = [p for p in message.parts if isinstance(p, MediaPart)]
    reasoning = [p.text for p in message.parts if isinstance(p, ReasoningPart)]
    calls = message.tool_calls
    results = message.tool_results
    if message.role == "tool" or (results and message.role != "assistant"):
        result = results[0] if results else ToolResultPart("", message.text)
        out: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": result.call_id,
            "content": result.output,
        }
        return out
    out = {"role": message.role}
    if media:
        content: Any = [{"type": "text", "text": p.text} for p in texts]
        content.extend(_media_to_part(p) for p in media)
    elif texts:
        content = "\n".join(p.text for p in texts)
    else:
        content = None if calls else ""
    # Parts we cannot express in Chat Completions are carried as text so nothing is lost.
    extra = [
        p
        for p in message.parts
        if isinstance(p, ApprovalRequestPart | ApprovalResponsePart | OpaquePart)
    ]
    if extra and not media:
        lines = [content] if isinstance(content, str) and content else []
        for p in extra:
            if isinstance(p, OpaquePart):
                lines.append(f"[{p.provider} {p.type}]" + (f" {p.text}" if p.text else ""))
            elif isinstance(p, ApprovalRequestPart):
                lines.append(f"[approval requested for {p.name or p.call_id or p.id}]")
            else:
                lines.append(f"[approval {'granted' if p.approved else 'denied'}]")
        content = "\n".join(lines)
    out["content"] = content
    if message.name:
        out["name"] = message.name
    if reasoning:
        out["reasoning_content"] = "\n".join(reasoning)
    if calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    return out


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="OpenAI Chat Completions messages",
)
