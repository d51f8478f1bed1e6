"""LangChain message dicts, as ``messages_to_dict`` writes them.

Each item is ``{"type": ..., "data": {...}}`` with type ``human``, ``ai``,
``system``, ``tool``, ``function`` or ``chat`` (and the ``*MessageChunk``
variants). ``ai`` messages carry ``tool_calls`` (``args`` an object) and
``invalid_tool_calls`` (``args`` raw text); ``tool`` messages ``tool_call_id``
and ``status``. Content is a string or a list of blocks: ``text``, ``image_url``,
standard data blocks (``image``, ``file``, ``audio``), ``reasoning`` and
Anthropic-style ``thinking`` (reasoning), ``redacted_thinking`` and
``non_standard`` (opaque); ``tool_use``/``tool_call`` blocks that repeat an entry
of ``tool_calls`` are not counted twice. ``additional_kwargs.reasoning_content``
is reasoning; a system message with ``additional_kwargs.__openai_role__ ==
"developer"`` is a developer message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compactlens.formats._common import (
    ROLE_OF,
    blocks_for,
    call_as_text,
    dumps,
    expect_list,
    expect_map,
    expect_str,
    keep_extra_keys,
    loads_or_none,
    make_message,
    opt_str,
    original_of,
    unknown,
)
from compactlens.formats.base import Encoded, WireFormat
from compactlens.formats.openai_chat import data_url_type
from compactlens.model.messages import (
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

NAME = "langchain"
PROVIDER = "langchain"
TYPES: dict[str, str] = {
    "human": "human",
    "ai": "ai",
    "system": "system",
    "tool": "tool",
    "function": "function",
    "chat": "chat",
    "HumanMessageChunk": "human",
    "AIMessageChunk": "ai",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "FunctionMessageChunk": "function",
    "ChatMessageChunk": "chat",
}
BLOCK_TYPES = (
    "text",
    "image_url",
    "image",
    "file",
    "audio",
    "input_audio",
    "reasoning",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_call",
    "non_standard",
)
MESSAGE_KEYS = frozenset({"type", "data"})
BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text"}),
    "image_url": frozenset({"type", "image_url"}),
    "reasoning": frozenset({"type", "reasoning"}),
    "thinking": frozenset({"type", "thinking"}),
    "tool_call": frozenset({"name", "args", "id", "type"}),
}
_DATA_KEYS = frozenset(
    {"content", "type", "name", "tool_calls", "invalid_tool_calls", "tool_call_id", "status"}
)


def _data_block(block: Mapping[str, Any], kind: str, source: str, loc: str) -> MediaPart:
    mime = opt_str(block.get("mime_type"), source, f"{loc}.mime_type")
    default = {"image": "image", "audio": "audio/unknown"}.get(kind, "file")
    src = block.get("source")
    if isinstance(src, Mapping):  # Anthropic-style block inside LangChain content
        mt = src.get("media_type")
        mtype = mt if isinstance(mt, str) else default
        data = src.get("data")
        url = src.get("url")
        return MediaPart(
            mtype,
            url=url if isinstance(url, str) else None,
            data=data if isinstance(data, str) else None,
        )
    source_type = block.get("source_type")
    url = opt_str(block.get("url"), source, f"{loc}.url")
    data = opt_str(block.get("base64"), source, f"{loc}.base64") or (
        opt_str(block.get("data"), source, f"{loc}.data")
        if source_type in ("base64", "text")
        else None
    )
    file_id = opt_str(block.get("file_id"), source, f"{loc}.file_id")
    if source_type == "id":
        file_id = opt_str(block.get("id"), source, f"{loc}.id")
    if source_type == "url" and url is None:
        url = opt_str(block.get("data"), source, f"{loc}.data")
    extras = block.get("extras")
    filename = None
    if isinstance(extras, Mapping) and isinstance(extras.get("filename"), str):
        filename = str(extras["filename"])
    if isinstance(block.get("filename"), str):
        filename = str(block["filename"])
    return MediaPart(mime or default, url=url or file_id, data=data, filename=filename)


def _reasoning_text(block: Mapping[str, Any], source: str, loc: str) -> str:
    value = block.get("reasoning")
    if isinstance(value, str):
        return value
    summary = block.get("summary")
    if isinstance(summary, list):
        texts = [s.get("text") for s in summary if isinstance(s, Mapping)]
        return "\n".join(t for t in texts if isinstance(t, str))
    text = block.get("text")
    if isinstance(text, str):
        return text
    return expect_str(value, source, f"{loc}.reasoning")


def _content(
    content: Any, call_ids: set[str], source: str, loc: str
) -> tuple[list[Part], list[Mapping[str, Any] | None]]:
    if content is None:
        return [], []
    if isinstance(content, str):
        return ([TextPart(content)], [None]) if content else ([], [])
    parts: list[Part] = []
    blocks: list[Mapping[str, Any] | None] = []
    for j, item in enumerate(expect_list(content, source, loc, "a string or a list of blocks")):
        bloc = f"{loc}[{j}]"
        if isinstance(item, str):
            parts.append(TextPart(item))
            blocks.append(None)
            continue
        block = expect_map(item, source, bloc, "a content block")
        kind = block.get("type")
        if kind == "text":
            parts.append(TextPart(expect_str(block.get("text"), source, f"{bloc}.text")))
        elif kind == "image_url":
            image = block.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            url = expect_str(url, source, f"{bloc}.image_url.url")
            if url.startswith("data:"):
                parts.append(MediaPart(data_url_type(url, "image"), data=url))
            else:
                parts.append(MediaPart("image", url=url))
        elif kind in ("image", "file", "audio"):
            parts.append(_data_block(block, str(kind), source, bloc))
        elif kind == "input_audio":
            audio = expect_map(block.get("input_audio"), source, f"{bloc}.input_audio")
            fmt = audio.get("format")
            data = audio.get("data")
            parts.append(
                MediaPart(
                    f"audio/{fmt if isinstance(fmt, str) else 'unknown'}",
                    data=data if isinstance(data, str) else None,
                )
            )
        elif kind == "reasoning":
            parts.append(ReasoningPart(_reasoning_text(block, source, bloc)))
        elif kind == "thinking":
            parts.append(
                ReasoningPart(expect_str(block.get("thinking"), source, f"{bloc}.thinking"))
            )
        elif kind in ("redacted_thinking", "non_standard"):
            parts.append(OpaquePart(PROVIDER, str(kind)))
        elif kind in ("tool_use", "tool_call"):
            call_id = block.get("id")
            if isinstance(call_id, str) and call_id in call_ids:
                continue  # the same call as an entry of tool_calls
            name = expect_str(block.get("name"), source, f"{bloc}.name")
            value = block.get("input", block.get("args"))
            parts.append(
                ToolCallPart(
                    call_id if isinstance(call_id, str) else f"lc_{loc}_{j}",
                    name,
                    value if isinstance(value, str) else dumps(value),
                )
            )
        else:
            unknown("content block type", kind, BLOCK_TYPES, source, f"{bloc}.type")
        blocks.append(block)
    return parts, blocks


def _text(parts: Sequence[Part]) -> str:
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """Convert ``messages_to_dict`` output to messages."""
    out: list[Message] = []
    pending_fn: dict[str, list[str]] = {}
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        item = expect_map(raw, source, loc, "a message object")
        outer = item.get("type")
        if not isinstance(outer, str) or outer not in TYPES:
            unknown("message type", outer, tuple(TYPES), source, f"{loc}.type")
        kind = TYPES[outer]
        data = expect_map(item.get("data"), source, f"{loc}.data")
        dloc = f"{loc}.data"
        name = opt_str(data.get("name"), source, f"{dloc}.name")
        kwargs_raw = data.get("additional_kwargs")
        kwargs = expect_map(kwargs_raw, source, f"{dloc}.additional_kwargs") if kwargs_raw else {}
        parts: list[Part] = []
        blocks: list[Mapping[str, Any] | None] = []
        reasoning = kwargs.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            parts.append(ReasoningPart(reasoning))
            blocks.append(None)
        calls: list[ToolCallPart] = []
        call_blocks: list[Mapping[str, Any] | None] = []
        if kind == "ai":
            for key in ("tool_calls", "invalid_tool_calls"):
                value = data.get(key)
                if value is None:
                    continue
                for j, entry in enumerate(expect_list(value, source, f"{dloc}.{key}")):
                    cloc = f"{dloc}.{key}[{j}]"
                    call = expect_map(entry, source, cloc, "a tool call object")
                    call_id = opt_str(call.get("id"), source, f"{cloc}.id") or f"lc_{i}_{key}_{j}"
                    cname = opt_str(call.get("name"), source, f"{cloc}.name") or ""
                    args = call.get("args")
                    text = args if isinstance(args, str) else ("" if args is None else dumps(args))
                    calls.append(ToolCallPart(call_id, cname, text))
                    call_blocks.append(call)
            fc = kwargs.get("function_call")
            if not calls and isinstance(fc, Mapping) and isinstance(fc.get("name"), str):
                call_id = f"fc_{i}"
                pending_fn.setdefault(str(fc["name"]), []).append(call_id)
                args = fc.get("arguments")
                calls.append(
                    ToolCallPart(call_id, str(fc["name"]), args if isinstance(args, str) else "")
                )
                call_blocks.append(None)
        content_parts, content_blocks = _content(
            data.get("content"), {c.id for c in calls}, source, f"{dloc}.content"
        )
        role: Role
        if kind == "tool":
            call_id = expect_str(data.get("tool_call_id"), source, f"{dloc}.tool_call_id")
            status = data.get("status")
            parts.append(
                ToolResultPart(call_id, _text(content_parts), name=name, is_error=status == "error")
            )
            blocks.append(None)
            for p, b in zip(content_parts, content_blocks, strict=True):
                if not isinstance(p, TextPart):
                    parts.append(p)
                    blocks.append(b)
            role = "tool"
        elif kind == "function":
            fname = expect_str(data.get("name"), source, f"{dloc}.name")
            stack = pending_fn.get(fname)
            call_id = stack.pop(0) if stack else f"fc_orphan_{i}"
            parts.append(ToolResultPart(call_id, _text(content_parts), name=fname))
            blocks.append(None)
            role = "tool"
        else:
            parts.extend(content_parts)
            blocks.extend(content_blocks)
            parts.extend(calls)
            blocks.extend(call_blocks)
            if kind == "human":
                role = "user"
            elif kind == "ai":
                role = "assistant"
            elif kind == "system":
                role = "developer" if kwargs.get("__openai_role__") == "developer" else "system"
            else:
                chat_role = data.get("role")
                if not isinstance(chat_role, str) or chat_role not in ROLE_OF:
                    unknown("role", chat_role, tuple(ROLE_OF), source, f"{dloc}.role")
                role = ROLE_OF[chat_role]
        out.append(make_message(role, parts, blocks, wire=item, fmt=NAME, name=name))
    return out


def _media_block(part: MediaPart) -> dict[str, Any]:
    if part.media_type.startswith("image") and (part.url or part.data or "").startswith(
        ("http", "data:")
    ):
        return {"type": "image_url", "image_url": {"url": part.url or part.data or ""}}
    kind = (
        "image"
        if part.media_type.startswith("image")
        else ("audio" if part.media_type.startswith("audio") else "file")
    )
    out: dict[str, Any] = {"type": kind}
    if part.data is not None:
        out["base64"] = part.data
    elif part.url is not None:
        out["url" if "://" in part.url else "file_id"] = part.url
    if "/" in part.media_type:
        out["mime_type"] = part.media_type
    if part.filename is not None:
        out["filename"] = part.filename
    return out


def encode(message: Message) -> Encoded:
    """A ``messages_to_dict`` entry for a message (one per tool result)."""
    results = [p for p in message.parts if isinstance(p, ToolResultPart)]
    mixed = any(not isinstance(p, ToolResultPart | MediaPart) for p in message.parts)
    if results and message.role != "assistant" and (len(results) > 1 or mixed):
        return _encode_split(message)
    notes: list[tuple[str, str]] = []
    pairs = list(zip(message.parts, blocks_for(message, NAME), strict=True))
    role = message.role
    if results and role != "assistant":
        kind = "tool"
    else:
        kind = {"user": "human", "assistant": "ai", "system": "system", "developer": "system"}.get(
            role, "human"
        )
    old_data = _old_data(message, kind)
    content, tool_calls, invalid, reasoning_kw, result = _encode_parts(pairs, kind, notes)
    simple = all(isinstance(c, dict) and set(c) == {"type", "text"} for c in content)
    body: Any = content
    if simple and len(content) == 1 and not any(b is not None for _, b in pairs):
        body = content[0]["text"]
    elif simple and not content:
        body = ""
    data: dict[str, Any] = {"content": body}
    kwargs: dict[str, Any] = dict(old_data.get("additional_kwargs") or {})
    kwargs.pop("reasoning_content", None)
    if reasoning_kw:
        kwargs["reasoning_content"] = "\n".join(reasoning_kw)
    if message.role == "developer":
        kwargs["__openai_role__"] = "developer"
    data["additional_kwargs"] = kwargs
    data["response_metadata"] = old_data.get("response_metadata", {})
    data["type"] = kind
    data["name"] = (
        message.name if kind != "tool" or result is None else (result.name or message.name)
    )
    data["id"] = old_data.get("id")
    if kind in ("human", "ai"):
        data["example"] = old_data.get("example", False)
    if kind == "ai":
        data["tool_calls"] = tool_calls
        data["invalid_tool_calls"] = invalid
        data["usage_metadata"] = old_data.get("usage_metadata")
    if kind == "tool" and result is not None:
        data["tool_call_id"] = result.call_id
        data["artifact"] = old_data.get("artifact")
        data["status"] = "error" if result.is_error else "success"
    for key, value in old_data.items():
        if key not in data and key not in _DATA_KEYS:
            data[key] = value
    return Encoded(({"type": kind, "data": data},), tuple(notes))


def _encode_split(message: Message) -> Encoded:
    """One tool message per result (with the media that follows it); the rest as human."""
    items: list[Any] = []
    notes_all: list[tuple[str, str]] = []
    groups: list[list[Part]] = []
    rest: list[Part] = []
    for p in message.parts:
        if isinstance(p, ToolResultPart):
            groups.append([p])
        elif isinstance(p, MediaPart) and groups:
            groups[-1].append(p)
        else:
            rest.append(p)
    for group in groups:
        one = encode(Message(role="tool", parts=tuple(group), name=message.name))
        items.extend(one.items)
        notes_all.extend(one.notes)
    if rest:
        notes_all.append(("approximated", "text beside tool results sent as a human message"))
        more = encode(Message(role="user", parts=tuple(rest), name=message.name))
        items.extend(more.items)
        notes_all.extend(more.notes)
    return Encoded(tuple(items), tuple(notes_all))


def _old_data(message: Message, kind: str) -> Mapping[str, Any]:
    """The ``data`` of the entry the message was read from, when it keeps its type."""
    wire = original_of(message)
    if message.wire_format == NAME and isinstance(wire, Mapping):
        old = wire.get("data")
        if isinstance(old, Mapping) and TYPES.get(str(wire.get("type"))) == kind:
            return old
    return {}


def _encode_parts(
    pairs: Sequence[tuple[Part, Mapping[str, Any] | None]],
    kind: str,
    notes: list[tuple[str, str]],
) -> tuple[list[Any], list[dict[str, Any]], list[dict[str, Any]], list[str], ToolResultPart | None]:
    """The content blocks, tool calls, invalid tool calls and ``reasoning_content`` texts
    of the parts, and the tool result a tool message answers with."""
    content: list[Any] = []
    tool_calls: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    reasoning_kw: list[str] = []
    result: ToolResultPart | None = None
    for part, block in pairs:
        if isinstance(part, TextPart):
            if block is None:
                content.append({"type": "text", "text": part.text})
            else:
                content.append(keep_extra_keys({"type": "text", "text": part.text}, block))
        elif isinstance(part, ReasoningPart):
            if block is None:
                reasoning_kw.append(part.text)
            elif block.get("type") == "thinking":
                content.append(keep_extra_keys({"type": "thinking", "thinking": part.text}, block))
            else:
                content.append(
                    keep_extra_keys({"type": "reasoning", "reasoning": part.text}, block)
                )
        elif isinstance(part, MediaPart):
            content.append(keep_extra_keys(_media_block(part), block))
        elif isinstance(part, ToolCallPart):
            _encode_call(part, block, kind, content, tool_calls, invalid, notes)
        elif isinstance(part, ToolResultPart):
            if kind == "tool" and result is None:
                result = part
                content.append({"type": "text", "text": part.output})
            else:
                notes.append(("approximated", "extra tool result carried as text"))
                content.append({"type": "text", "text": part.output})
        elif isinstance(part, OpaquePart):
            if block is not None and part.provider == PROVIDER:
                content.append(dict(block))
            elif part.text:
                notes.append(("approximated", f"{part.provider} {part.type} carried as text"))
                content.append(
                    {"type": "text", "text": f"[{part.provider} {part.type}] {part.text}"}
                )
            else:
                notes.append(("dropped", f"{part.provider} {part.type} (opaque)"))
        elif isinstance(part, ApprovalRequestPart | ApprovalResponsePart):
            notes.append(("approximated", f"{part.kind.replace('_', ' ')} carried as text"))
            text = (
                f"[approval requested for {part.name or part.call_id or part.id}]"
                if isinstance(part, ApprovalRequestPart)
                else f"[approval {'granted' if part.approved else 'denied'}]"
            )
            content.append({"type": "text", "text": text})
    return content, tool_calls, invalid, reasoning_kw, result


def _encode_call(
    part: ToolCallPart,
    block: Mapping[str, Any] | None,
    kind: str,
    content: list[Any],
    tool_calls: list[dict[str, Any]],
    invalid: list[dict[str, Any]],
    notes: list[tuple[str, str]],
) -> None:
    """Append a tool call: to ``tool_calls``, ``invalid`` (arguments not an object) or, outside
    an ai message, to the content as text."""
    args = loads_or_none(part.arguments) if part.arguments.strip() else {}
    if block is not None and block.get("type") == "invalid_tool_call":
        args = None  # it stays an invalid call, with its raw text
    if kind != "ai":
        notes.append(("approximated", "tool call outside an ai message, as text"))
        content.append({"type": "text", "text": call_as_text(part)})
    elif isinstance(args, dict):
        call = {"name": part.name, "args": args, "id": part.id, "type": "tool_call"}
        tool_calls.append(keep_extra_keys(call, block))
    else:
        bad = {
            "name": part.name,
            "args": part.arguments,
            "id": part.id,
            "error": None,
            "type": "invalid_tool_call",
        }
        invalid.append(keep_extra_keys(bad, block))


def from_message(message: Message) -> dict[str, Any]:
    """Build a ``messages_to_dict`` entry for a new or changed message."""
    item: dict[str, Any] = encode(message).items[0]
    return item


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="LangChain messages_to_dict output",
    encode=encode,
    message_keys=MESSAGE_KEYS,
    block_keys=BLOCK_KEYS,
)
