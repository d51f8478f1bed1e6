"""Microsoft Agent Framework messages, as ``Message.to_dict()`` writes them.

``{"type": "message", "role": ..., "contents": [...], "author_name",
"message_id", "additional_properties"}`` (``"chat_message"`` before MAF 1.0, read
too; messages we build or rebuild are written with ``"message"``, which MAF 1.23's
``Message.from_dict`` requires); ``role`` is a string or the older
``{"type": "role", "value": ...}``. Contents: ``text``, ``text_reasoning``
(text; ``protected_data`` is opaque), ``data`` and ``uri`` (media),
``hosted_file``, ``function_call`` (``arguments`` text or object),
``function_result`` (``result``; ``exception`` marks an error; media ``items``),
``function_approval_request``/``function_approval_response`` (approval parts),
``error`` and the hosted tool contents (opaque: code interpreter, image
generation, MCP, search, shell, usage, vector store, OAuth consent).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compactlens.formats._common import (
    ROLE_OF,
    blocks_for,
    dumps,
    expect_bool,
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

NAME = "agent-framework"
PROVIDER = "agent-framework"
ROLES = ("system", "user", "assistant", "tool")
OPAQUE_TYPES = (
    "error",
    "usage",
    "hosted_vector_store",
    "code_interpreter_tool_call",
    "code_interpreter_tool_result",
    "image_generation_tool_call",
    "image_generation_tool_result",
    "mcp_server_tool_call",
    "mcp_server_tool_result",
    "search_tool_call",
    "search_tool_result",
    "shell_tool_call",
    "shell_tool_result",
    "shell_command_output",
    "oauth_consent_request",
)
CONTENT_TYPES = (
    "text",
    "text_reasoning",
    "data",
    "uri",
    "hosted_file",
    "function_call",
    "function_result",
    "function_approval_request",
    "function_approval_response",
    *OPAQUE_TYPES,
)
MESSAGE_KEYS = frozenset({"type", "role", "contents", "author_name"})
BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text", "additional_properties"}),
    "text_reasoning": frozenset({"type", "text", "additional_properties"}),
    "data": frozenset({"type", "uri", "media_type", "additional_properties"}),
    "uri": frozenset({"type", "uri", "media_type", "additional_properties"}),
    "function_call": frozenset({"type", "call_id", "name", "arguments", "additional_properties"}),
    "function_result": frozenset(
        {"type", "call_id", "result", "exception", "items", "additional_properties"}
    ),
}
_OPAQUE_TEXT_KEYS = (
    "message",
    "tool_name",
    "name",
    "arguments",
    "output",
    "result",
    "commands",
    "stdout",
    "stderr",
    "consent_link",
)


def _role(value: Any, source: str, loc: str) -> str:
    role = value.get("value") if isinstance(value, Mapping) else value
    if role not in ROLES:
        unknown("role", role, ROLES, source, loc)
    return str(role)


def _opaque_text(block: Mapping[str, Any]) -> str:
    shown = {k: block[k] for k in _OPAQUE_TEXT_KEYS if block.get(k) is not None}
    if block.get("type") == "error" and isinstance(block.get("message"), str):
        return str(block["message"])
    return dumps(shown) if shown else ""


def _media(block: Mapping[str, Any], source: str, loc: str) -> MediaPart:
    kind = block.get("type")
    media_type = opt_str(block.get("media_type"), source, f"{loc}.media_type")
    if kind == "hosted_file":
        file_id = expect_str(block.get("file_id"), source, f"{loc}.file_id")
        name = opt_str(block.get("name"), source, f"{loc}.name")
        return MediaPart(media_type or "file", url=file_id, filename=name)
    uri = expect_str(block.get("uri"), source, f"{loc}.uri")
    if kind == "data" or uri.startswith("data:"):
        if media_type is None and uri.startswith("data:"):
            media_type = uri[5:].split(",", 1)[0].split(";", 1)[0] or None
        return MediaPart(media_type or "file", data=uri)
    return MediaPart(media_type or "file", url=uri)


def _result(block: Mapping[str, Any], source: str, loc: str) -> tuple[ToolResultPart, list[Part]]:
    call_id = expect_str(block.get("call_id"), source, f"{loc}.call_id")
    exception = block.get("exception")
    result = block.get("result")
    if result is None:
        text = exception if isinstance(exception, str) else ""
    else:
        text = result if isinstance(result, str) else dumps(result)
    extra: list[Part] = []
    items = block.get("items")
    if items is not None:
        for j, entry in enumerate(expect_list(items, source, f"{loc}.items")):
            iloc = f"{loc}.items[{j}]"
            inner = expect_map(entry, source, iloc)
            if inner.get("type") in ("data", "uri", "hosted_file"):
                extra.append(_media(inner, source, iloc))
    return ToolResultPart(call_id, text, is_error=exception is not None), extra


def _contents(
    value: Any, source: str, loc: str
) -> tuple[list[Part], list[Mapping[str, Any] | None]]:
    parts: list[Part] = []
    blocks: list[Mapping[str, Any] | None] = []
    for j, item in enumerate(expect_list(value, source, loc, "a list of contents")):
        cloc = f"{loc}[{j}]"
        if isinstance(item, str):
            parts.append(TextPart(item))
            blocks.append(None)
            continue
        block = expect_map(item, source, cloc, "a content object")
        kind = block.get("type")
        if kind == "text":
            parts.append(TextPart(expect_str(block.get("text"), source, f"{cloc}.text")))
        elif kind == "text_reasoning":
            text = opt_str(block.get("text"), source, f"{cloc}.text")
            protected = opt_str(block.get("protected_data"), source, f"{cloc}.protected_data")
            if text is not None or protected is None:
                parts.append(ReasoningPart(text or ""))
                blocks.append(block)
            if protected is not None:
                parts.append(OpaquePart(PROVIDER, "protected_data"))
                blocks.append(block)
            continue
        elif kind in ("data", "uri", "hosted_file"):
            parts.append(_media(block, source, cloc))
        elif kind == "function_call":
            call_id = expect_str(block.get("call_id"), source, f"{cloc}.call_id")
            name = expect_str(block.get("name"), source, f"{cloc}.name")
            args = block.get("arguments")
            text = args if isinstance(args, str) else ("" if args is None else dumps(args))
            parts.append(ToolCallPart(call_id, name, text))
        elif kind == "function_result":
            result, extra = _result(block, source, cloc)
            parts.append(result)
            blocks.append(block)
            parts.extend(extra)
            blocks.extend([block] * len(extra))
            continue
        elif kind == "function_approval_request":
            approval = expect_str(block.get("id"), source, f"{cloc}.id")
            call = block.get("function_call")
            ref: str | None = None
            name_: str | None = None
            if isinstance(call, Mapping):
                ref = opt_str(call.get("call_id"), source, f"{cloc}.function_call.call_id")
                name_ = opt_str(call.get("name"), source, f"{cloc}.function_call.name")
            parts.append(ApprovalRequestPart(approval, call_id=ref, name=name_))
        elif kind == "function_approval_response":
            approval = expect_str(block.get("id"), source, f"{cloc}.id")
            approved = expect_bool(block.get("approved"), source, f"{cloc}.approved")
            parts.append(ApprovalResponsePart(approval, approved))
        elif kind in OPAQUE_TYPES:
            parts.append(OpaquePart(PROVIDER, str(kind), _opaque_text(block)))
        else:
            unknown("content type", kind, CONTENT_TYPES, source, f"{cloc}.type")
        blocks.append(block)
    return parts, blocks


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """Convert Agent Framework ``Message.to_dict()`` objects to messages."""
    out: list[Message] = []
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        item = expect_map(raw, source, loc, "a message object")
        role = _role(item.get("role"), source, f"{loc}.role")
        parts, blocks = _contents(item.get("contents"), source, f"{loc}.contents")
        name = opt_str(item.get("author_name"), source, f"{loc}.author_name")
        out.append(make_message(ROLE_OF[role], parts, blocks, wire=item, fmt=NAME, name=name))
    return out


def _media_block(part: MediaPart) -> dict[str, Any]:
    if part.data is not None:
        uri = part.data
        if not uri.startswith("data:"):
            uri = f"data:{part.media_type};base64,{uri}"
        return {"type": "data", "uri": uri, "media_type": part.media_type}
    url = part.url or ""
    if url and "://" not in url and not url.startswith("data:"):
        out: dict[str, Any] = {"type": "hosted_file", "file_id": url}
        if part.filename:
            out["name"] = part.filename
        return out
    return {"type": "uri", "uri": url, "media_type": part.media_type}


def encode(message: Message) -> Encoded:
    """An Agent Framework message dict for a message."""
    notes: list[tuple[str, str]] = []
    role = {"developer": "system"}.get(message.role, message.role)
    pairs = list(zip(message.parts, blocks_for(message, NAME), strict=True))
    contents: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    seen_reasoning: set[int] = set()
    for part, block in pairs:
        props: dict[str, Any] = {"additional_properties": {}}
        if isinstance(part, MediaPart) and current is not None:
            items = current.setdefault("items", [])
            items.append(_media_block(part) | props)
            continue
        current = None
        if isinstance(part, TextPart):
            contents.append(keep_extra_keys({"type": "text", "text": part.text} | props, block))
        elif isinstance(part, ReasoningPart):
            built = keep_extra_keys({"type": "text_reasoning", "text": part.text} | props, block)
            if block is not None:
                seen_reasoning.add(id(block))
            contents.append(built)
        elif isinstance(part, MediaPart):
            contents.append(keep_extra_keys(_media_block(part) | props, block))
        elif isinstance(part, ToolCallPart):
            args: Any = part.arguments
            if block is not None and isinstance(block.get("arguments"), Mapping):
                parsed = loads_or_none(part.arguments)
                args = parsed if isinstance(parsed, dict) else part.arguments
            call = {
                "type": "function_call",
                "call_id": part.id,
                "name": part.name,
                "arguments": args,
            } | props
            contents.append(keep_extra_keys(call, block))
        elif isinstance(part, ToolResultPart):
            result: dict[str, Any] = {
                "type": "function_result",
                "call_id": part.call_id,
                "result": part.output,
            } | props
            if part.is_error:
                old = block.get("exception") if block is not None else None
                result["exception"] = old if isinstance(old, str) else part.output
            current = keep_extra_keys(result, block)
            if block is not None and "items" in block:
                current["items"] = [
                    {"type": "text", "text": part.output, "additional_properties": {}}
                ]
            contents.append(current)
        elif isinstance(part, ApprovalRequestPart):
            req: dict[str, Any] = {"type": "function_approval_request", "id": part.id} | props
            req["function_call"] = {
                "type": "function_call",
                "call_id": part.call_id or "",
                "name": part.name or "",
                "additional_properties": {},
            }
            contents.append(keep_extra_keys(req, block))
        elif isinstance(part, ApprovalResponsePart):
            resp = {
                "type": "function_approval_response",
                "id": part.id,
                "approved": part.approved,
            } | props
            if part.reason:
                notes.append(("dropped", "approval reason"))
            contents.append(keep_extra_keys(resp, block))
        elif isinstance(part, OpaquePart):
            if block is not None and part.provider == PROVIDER:
                if part.type == "protected_data" and id(block) in seen_reasoning:
                    continue  # already carried by the text_reasoning content
                contents.append(dict(block))
            elif part.text:
                notes.append(("approximated", f"{part.provider} {part.type} carried as text"))
                contents.append(
                    {"type": "text", "text": f"[{part.provider} {part.type}] {part.text}"} | props
                )
            else:
                notes.append(("dropped", f"{part.provider} {part.type} (opaque)"))
    item: dict[str, Any] = {"type": "message", "role": role, "contents": contents}
    if message.name:
        item["author_name"] = message.name
    wire = original_of(message)
    if message.wire_format == NAME and isinstance(wire, Mapping):
        if isinstance(wire.get("role"), Mapping):
            item["role"] = dict(wire["role"]) | {"value": role}
        for key, value in wire.items():
            if key not in item and key not in MESSAGE_KEYS:
                item[key] = value
    else:
        item["additional_properties"] = {}
    if message.role == "developer":
        notes.append(("approximated", "developer message sent as system"))
    return Encoded((item,), tuple(notes))


def from_message(message: Message) -> dict[str, Any]:
    """Build an Agent Framework message dict for a new or changed message."""
    item: dict[str, Any] = encode(message).items[0]
    return item


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="Microsoft Agent Framework Message.to_dict() JSON",
    encode=encode,
    message_keys=MESSAGE_KEYS,
    block_keys=BLOCK_KEYS,
)
