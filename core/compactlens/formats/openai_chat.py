"""OpenAI Chat Completions messages (``role``/``content``/``tool_calls``, legacy ``function_call``).

Content is a string, ``null`` or a list of parts (``text``, ``image_url``,
``input_audio``, ``file``, ``refusal``). Legacy ``function_call`` messages get a
stable synthetic call id ``fc_<index>`` and a later ``role: "function"`` message is
paired with the oldest pending legacy call of the same name. ``reasoning_content``
(or a string ``reasoning``) becomes a reasoning part. Keys we do not read, such as
``cache_control``, stay on the wire object and are kept when a message is rebuilt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

from compactlens.formats._common import (
    CALL_AS_TEXT,
    ROLE_OF,
    blocks_for,
    call_as_text,
    dumps,
    expect_list,
    expect_map,
    expect_str,
    fail,
    json_type,
    keep_extra_keys,
    make_message,
    opt_str,
    original_of,
    unknown,
)
from compactlens.formats.base import Encoded, WireFormat
from compactlens.model.errors import CompactlensError
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

NAME = "openai-chat"
_REASONING_KEYS = ("reasoning_content", "reasoning")
_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_PART_TYPES = ("text", "image_url", "input_audio", "file", "refusal")
MESSAGE_KEYS = frozenset(
    {
        "role",
        "content",
        "name",
        "tool_calls",
        "tool_call_id",
        "function_call",
        "reasoning_content",
        "reasoning",
    }
)
BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text"}),
    "refusal": frozenset({"type", "refusal"}),
    "image_url": frozenset({"type", "image_url"}),
    "input_audio": frozenset({"type", "input_audio"}),
    "file": frozenset({"type", "file"}),
    "function": frozenset({"id", "type", "function"}),
    "custom": frozenset({"id", "type", "custom"}),
}


def data_url_type(url: str, default: str) -> str:
    """The media type of a ``data:`` URL, or ``default``."""
    if url.startswith("data:"):
        head = url[5:].split(",", 1)[0].split(";", 1)[0]
        if head:
            return head
    return default


def _content_parts(
    content: Any, source: str, loc: str
) -> tuple[list[Part], list[Mapping[str, Any] | None]]:
    if content is None:
        return [], []
    if isinstance(content, str):
        return ([TextPart(content)], [None]) if content else ([], [])
    items = expect_list(content, source, loc, "a string, a list of parts or null")
    parts: list[Part] = []
    blocks: list[Mapping[str, Any] | None] = []
    for j, item in enumerate(items):
        ploc = f"{loc}[{j}]"
        if isinstance(item, str):
            parts.append(TextPart(item))
            blocks.append(None)
            continue
        block = expect_map(item, source, ploc, "a content part object")
        kind = block.get("type")
        if kind == "text":
            parts.append(TextPart(expect_str(block.get("text"), source, f"{ploc}.text")))
        elif kind == "refusal":
            parts.append(TextPart(expect_str(block.get("refusal"), source, f"{ploc}.refusal")))
        elif kind == "image_url":
            image = block.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            url = expect_str(url, source, f"{ploc}.image_url.url")
            if url.startswith("data:"):
                parts.append(MediaPart(data_url_type(url, "image"), data=url))
            else:
                parts.append(MediaPart("image", url=url))
        elif kind == "input_audio":
            audio = expect_map(block.get("input_audio"), source, f"{ploc}.input_audio")
            fmt = opt_str(audio.get("format"), source, f"{ploc}.input_audio.format")
            data = opt_str(audio.get("data"), source, f"{ploc}.input_audio.data")
            parts.append(MediaPart(f"audio/{fmt or 'unknown'}", data=data))
        elif kind == "file":
            file = expect_map(block.get("file"), source, f"{ploc}.file")
            filename = opt_str(file.get("filename"), source, f"{ploc}.file.filename")
            data = opt_str(file.get("file_data"), source, f"{ploc}.file.file_data")
            file_id = opt_str(file.get("file_id"), source, f"{ploc}.file.file_id")
            media = data_url_type(data, "file") if data else "file"
            parts.append(MediaPart(media, url=file_id, data=data, filename=filename))
        else:
            unknown("content part type", kind, _PART_TYPES, source, f"{ploc}.type")
        blocks.append(block)
    return parts, blocks


def _arguments(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else dumps(value)


def _tool_call(call: Any, source: str, loc: str) -> ToolCallPart:
    entry = expect_map(call, source, loc, "a tool call object")
    call_id = expect_str(entry.get("id"), source, f"{loc}.id")
    kind = entry.get("type", "function")
    if kind == "custom":
        custom = expect_map(entry.get("custom"), source, f"{loc}.custom")
        name = expect_str(custom.get("name"), source, f"{loc}.custom.name")
        return ToolCallPart(call_id, name, _arguments(custom.get("input")))
    if kind != "function":
        unknown("tool call type", kind, ("function", "custom"), source, f"{loc}.type")
    fn = expect_map(entry.get("function"), source, f"{loc}.function")
    name = expect_str(fn.get("name"), source, f"{loc}.function.name")
    return ToolCallPart(call_id, name, _arguments(fn.get("arguments")))


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else dumps(value)


def simple_call_fields(call: Any) -> tuple[str, str, str] | None:
    """The id, name and arguments of the common, well-formed function call, without
    building error locations (else None)."""
    if type(call) is not dict or call.get("type", "function") != "function":
        return None
    call_id = call.get("id")
    fn = call.get("function")
    if type(call_id) is not str or type(fn) is not dict:
        return None
    name = fn.get("name")
    args = fn.get("arguments", "")
    if type(name) is not str or type(args) is not str:
        return None
    return call_id, name, args


def simple_tool_call(call: Any) -> ToolCallPart | None:
    """The common, well-formed function call without building error locations (else None)."""
    got = simple_call_fields(call)
    if got is None:
        return None
    call_id, name, args = got
    part: ToolCallPart = _new(ToolCallPart)  # ToolCallPart(call_id, name, args), faster
    set_id, set_name, set_arguments, set_kind = _CALL_SLOTS
    set_id(part, call_id)
    set_name(part, name)
    set_arguments(part, args)
    set_kind(part, "tool_call")
    return part


# Tens of thousands of calls at 10,000 turns: setting the slots of a new part directly
# costs about a third less than the frozen dataclass's ``__init__`` (nothing to check).
_new = object.__new__
_CALL_SLOTS = tuple(ToolCallPart.__dict__[f.name].__set__ for f in fields(ToolCallPart))
if tuple(f.name for f in fields(ToolCallPart)) != ("id", "name", "arguments", "kind"):
    raise CompactlensError("ToolCallPart's fields changed: update simple_tool_call")


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """Convert Chat Completions message dicts to messages.

    Legacy ``function_call`` messages get a stable synthetic id ``fc_<index>``;
    a later ``role: "function"`` message is paired with the oldest earlier
    pending legacy call of the same name. Well-formed messages take a fast path;
    error locations are only built for values that need checking.
    """
    out: list[Message] = []
    pending_legacy: dict[str, list[str]] = {}
    for i, raw in enumerate(items):
        if type(raw) is dict:
            item: Mapping[str, Any] = raw
        else:
            item = expect_map(raw, source, f"messages[{i}]", "a message object")
        role = item.get("role")
        name_value = item.get("name")
        if name_value is not None and type(name_value) is not str:
            name_value = opt_str(name_value, source, f"messages[{i}].name")
        if role == "function":
            loc = f"messages[{i}]"
            name = expect_str(item.get("name"), source, f"{loc}.name")
            stack = pending_legacy.get(name)
            call_id = stack.pop(0) if stack else f"fc_orphan_{i}"
            content = item.get("content")
            if isinstance(content, list):
                cparts, _ = _content_parts(content, source, f"{loc}.content")
                text = "\n".join(p.text for p in cparts if isinstance(p, TextPart))
            else:
                text = _text_of(content)
            out.append(
                make_message(
                    "tool",
                    [ToolResultPart(call_id, text, name=name)],
                    [None],
                    wire=item,
                    fmt=NAME,
                    name=name,
                    meta={"legacy_function": True},
                )
            )
            continue
        typed_role = ROLE_OF.get(role) if isinstance(role, str) else None
        if typed_role is None:
            unknown("role", role, _ROLES, source, f"messages[{i}].role")
        parts: list[Part] = []
        blocks: list[Mapping[str, Any] | None] = []
        for key in _REASONING_KEYS:
            reasoning = item.get(key)
            if reasoning is None:
                continue
            if isinstance(reasoning, str):
                if reasoning:
                    parts.append(ReasoningPart(reasoning))
                    blocks.append(None)
                    break
            elif key == "reasoning_content":
                fail(
                    f"expected a string, got {json_type(reasoning)}", source, f"messages[{i}].{key}"
                )
        content = item.get("content")
        content_parts: list[Part]
        content_blocks: list[Mapping[str, Any] | None]
        if type(content) is str:
            content_parts, content_blocks = ([TextPart(content)], [None]) if content else ([], [])
        else:
            content_parts, content_blocks = _content_parts(
                content, source, f"messages[{i}].content"
            )
        if typed_role == "tool":
            raw_id = item.get("tool_call_id")
            result_id = (
                raw_id
                if type(raw_id) is str
                else expect_str(raw_id, source, f"messages[{i}].tool_call_id")
            )
            if type(content) is str:  # the usual tool message: its text is the output
                parts.append(ToolResultPart(result_id, content, name=name_value))
                blocks.append(None)
            else:
                output = "\n".join(p.text for p in content_parts if isinstance(p, TextPart))
                parts.append(ToolResultPart(result_id, output, name=name_value))
                blocks.append(None)
                for p, b in zip(content_parts, content_blocks, strict=True):
                    if not isinstance(p, TextPart):
                        parts.append(p)
                        blocks.append(b)
        elif content_parts:
            parts.extend(content_parts)
            blocks.extend(content_blocks)
        tool_calls = item.get("tool_calls")
        if tool_calls is not None:
            calls = (
                tool_calls
                if type(tool_calls) is list
                else expect_list(tool_calls, source, f"messages[{i}].tool_calls")
            )
            for j, call in enumerate(calls):
                part = simple_tool_call(call)
                if part is None:
                    part = _tool_call(call, source, f"messages[{i}].tool_calls[{j}]")
                parts.append(part)
                blocks.append(call)
        legacy = item.get("function_call")
        meta: dict[str, Any] = {}
        if legacy is not None:
            loc = f"messages[{i}]"
            fc = expect_map(legacy, source, f"{loc}.function_call")
            name = expect_str(fc.get("name"), source, f"{loc}.function_call.name")
            call_id = f"fc_{i}"
            pending_legacy.setdefault(name, []).append(call_id)
            parts.append(ToolCallPart(call_id, name, _arguments(fc.get("arguments"))))
            blocks.append(None)
            meta["legacy_function"] = True
        out.append(
            make_message(typed_role, parts, blocks, wire=item, fmt=NAME, name=name_value, meta=meta)
        )
    return out


def _media_block(part: MediaPart) -> dict[str, Any]:
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


def _approx_text(part: Part) -> str | None:
    if isinstance(part, OpaquePart):
        return f"[{part.provider} {part.type}]" + (f" {part.text}" if part.text else "")
    if isinstance(part, ApprovalRequestPart):
        return f"[approval requested for {part.name or part.call_id or part.id}]"
    if isinstance(part, ApprovalResponsePart):
        verdict = "granted" if part.approved else "denied"
        return f"[approval {verdict}]" + (f" {part.reason}" if part.reason else "")
    return None


def _message_extras(message: Message, built: dict[str, Any]) -> dict[str, Any]:
    wire = original_of(message)
    if message.wire_format == NAME and isinstance(wire, Mapping):
        for key, value in wire.items():
            if key not in MESSAGE_KEYS and key not in built:
                built[key] = value
    return built


def encode(message: Message) -> Encoded:
    """Chat Completions dicts for a message: one per tool result, then the rest."""
    text = _plain_text(message)
    if text is not None:  # a collapsed line, a note: what the general code below gives
        return Encoded(({"role": message.role, "content": text},), ())
    notes: list[tuple[str, str]] = []
    pairs = list(zip(message.parts, blocks_for(message, NAME), strict=True))
    legacy = bool(message.meta.get("legacy_function")) if message.wire_format == NAME else False
    results = [p for p in message.parts if isinstance(p, ToolResultPart)]
    items: list[dict[str, Any]] = []
    rest = pairs
    if results and message.role != "assistant":
        for r in results:
            if legacy and r.name:
                items.append({"role": "function", "name": r.name, "content": r.output})
                continue
            item: dict[str, Any] = {"role": "tool", "tool_call_id": r.call_id, "content": r.output}
            if r.name:
                item["name"] = r.name
            if r.is_error:
                notes.append(("approximated", "tool result error flag (is_error) has no field"))
            items.append(item)
        rest = [(p, b) for p, b in pairs if not isinstance(p, ToolResultPart)]
        if message.role == "tool":
            media = [p for p, _ in rest if isinstance(p, MediaPart)]
            if media:
                notes.append(("dropped", "media inside a tool result"))
            rest = [(p, b) for p, b in rest if not isinstance(p, MediaPart)]
        if len(items) == 1 and message.role == "tool":
            items[0] = _message_extras(message, items[0])
        if not any(not isinstance(p, ReasoningPart) for p, _ in rest):
            if any(isinstance(p, ReasoningPart) for p, _ in rest):
                notes.append(("dropped", "reasoning in a tool result message"))
            return Encoded(tuple(items), tuple(notes))
    role = message.role if message.role != "tool" else "user"
    out: dict[str, Any] = {"role": role}
    content: list[dict[str, Any]] = []
    as_list = False
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    legacy_call: dict[str, Any] | None = None
    for part, block in rest:
        if isinstance(part, TextPart):
            if block is not None and block.get("type") == "refusal":
                content.append(keep_extra_keys({"type": "refusal", "refusal": part.text}, block))
            else:
                content.append(keep_extra_keys({"type": "text", "text": part.text}, block))
            as_list = as_list or block is not None
        elif isinstance(part, ReasoningPart):
            reasoning.append(part.text)
        elif isinstance(part, MediaPart):
            if role == "assistant":
                notes.append(("dropped", "media in an assistant message"))
                continue
            content.append(keep_extra_keys(_media_block(part), block))
            as_list = True
        elif isinstance(part, ToolCallPart):
            if role != "assistant":
                notes.append(CALL_AS_TEXT)
                content.append({"type": "text", "text": call_as_text(part)})
                continue
            if legacy and block is None:
                legacy_call = {"name": part.name, "arguments": part.arguments}
                continue
            if block is not None and block.get("type") == "custom":
                entry: dict[str, Any] = {
                    "id": part.id,
                    "type": "custom",
                    "custom": {"name": part.name, "input": part.arguments},
                }
            else:
                entry = {
                    "id": part.id,
                    "type": "function",
                    "function": {"name": part.name, "arguments": part.arguments},
                }
            calls.append(keep_extra_keys(entry, block))
        elif isinstance(part, ToolResultPart):
            notes.append(("approximated", "tool result inside an assistant message, as text"))
            content.append({"type": "text", "text": part.output})
        else:
            text = _approx_text(part)
            if isinstance(part, OpaquePart) and not part.text:
                notes.append(("dropped", f"{part.provider} {part.type} (opaque)"))
                continue
            notes.append(("approximated", f"{part.kind.replace('_', ' ')} carried as text"))
            content.append({"type": "text", "text": text or ""})
    texts_only = all(c.get("type") == "text" and len(c) == 2 for c in content)
    if not content:
        out["content"] = None if (calls or legacy_call) else ""
    elif texts_only and not as_list and len(content) == 1:
        out["content"] = content[0]["text"]
    else:
        out["content"] = content
    if message.name:
        out["name"] = message.name
    if reasoning:
        out["reasoning_content"] = "\n".join(reasoning)
    if calls:
        out["tool_calls"] = calls
    if legacy_call is not None:
        out["function_call"] = legacy_call
    items.append(_message_extras(message, out))
    return Encoded(tuple(items), tuple(notes))


def _plain_text(message: Message) -> str | None:
    """The text of a new message of one text part (no name, no meta, no wire object whose
    keys to keep), which :func:`encode` writes as ``{"role", "content": text}``; else None.
    Strategies' replacements (collapsed lines, notes) are such messages."""
    parts = message.parts
    if len(parts) != 1 or message.role == "tool" or message.name or message.meta:
        return None
    part = parts[0]
    if type(part) is not TextPart or message.wire is not None or message.origin is not None:
        return None
    return part.text


def from_message(message: Message) -> dict[str, Any]:
    """Build a Chat Completions dict for a message (used for new or changed messages).

    A message holding several tool results becomes several tool messages; this
    returns the first, :func:`encode` returns them all.
    """
    items = encode(message).items
    first: dict[str, Any] = items[0]
    return first


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="OpenAI Chat Completions messages",
    encode=encode,
    message_keys=MESSAGE_KEYS,
    block_keys=BLOCK_KEYS,
)
