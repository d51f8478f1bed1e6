"""OpenAI Responses API input and output items.

Each item is one message: ``message`` items (or easy input messages without a
``type``) with ``input_text``/``output_text``/``refusal``/``input_image``/
``input_file``/``input_audio`` parts; ``function_call`` and ``custom_tool_call``
(assistant tool calls) and their ``*_output`` items (tool results, paired by
``call_id``); ``computer_call``/``local_shell_call``/``shell_call``/
``apply_patch_call`` and their outputs (paired the same way); ``reasoning``
(summary and reasoning text; ``encrypted_content`` is an opaque part);
``compaction`` items and hosted tool calls (web search, file search, code
interpreter, image generation, MCP) as opaque parts; MCP approval requests and
responses as approval parts; ``item_reference`` as an opaque user part.

Items we create are complete for the SDK types: an assistant ``message`` item with
content parts has ``id``, ``status`` and ``annotations`` (the OpenAI Agents SDK rejects
it otherwise), a ``reasoning`` item an ``id``, an ``input_image`` its ``detail``. Audio
from another format is dropped with a note (message content has no audio part) and
another format's tool approval answer is carried as text (an MCP approval answers a
server-side request).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from compactlens.formats._common import (
    ROLE_OF,
    author_name,
    blocks_for,
    dumps,
    expect_bool,
    expect_list,
    expect_map,
    expect_str,
    keep_extra_keys,
    make_message,
    opt_str,
    original_of,
    unknown,
)
from compactlens.formats.base import META_CONTAINER_KEY, Encoded, WireFormat
from compactlens.formats.openai_chat import data_url_type
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

NAME = "openai-responses"
PROVIDER = "openai"

#: Client-executed tool calls: (call item type, output item type, argument key).
CLIENT_CALLS: dict[str, tuple[str, str]] = {
    "function_call": ("function_call_output", "arguments"),
    "custom_tool_call": ("custom_tool_call_output", "input"),
    "computer_call": ("computer_call_output", "action"),
    "local_shell_call": ("local_shell_call_output", "action"),
    "shell_call": ("shell_call_output", "action"),
    "apply_patch_call": ("apply_patch_call_output", "operation"),
}
OUTPUT_TYPES = {out: call for call, (out, _) in CLIENT_CALLS.items()}
HOSTED_TYPES = (
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
)
ITEM_TYPES = (
    "message",
    "reasoning",
    *CLIENT_CALLS,
    *OUTPUT_TYPES,
    *HOSTED_TYPES,
    "mcp_approval_request",
    "mcp_approval_response",
    "compaction",
    "item_reference",
)
PART_TYPES = (
    "input_text",
    "output_text",
    "refusal",
    "input_image",
    "input_file",
    "input_audio",
)
_MESSAGE_ROLES = ("user", "assistant", "system", "developer")
MESSAGE_KEYS = frozenset({"type", "role", "content", "call_id", "name", "arguments", "output"})
BLOCK_KEYS: dict[str, frozenset[str]] = {
    "input_text": frozenset({"type", "text"}),
    "output_text": frozenset({"type", "text"}),
    "refusal": frozenset({"type", "refusal"}),
    "input_image": frozenset({"type", "image_url", "file_id"}),
    "input_file": frozenset({"type", "file_id", "file_data", "filename", "file_url"}),
    "input_audio": frozenset({"type", "input_audio"}),
    "function_call": frozenset({"type", "call_id", "name", "arguments"}),
    "function_call_output": frozenset({"type", "call_id", "output"}),
    "reasoning": frozenset({"type", "summary", "content"}),
}


def _content_parts(
    content: Any, source: str, loc: str
) -> tuple[list[Part], list[Mapping[str, Any] | None]]:
    if isinstance(content, str):
        return ([TextPart(content)], [None]) if content else ([], [])
    parts: list[Part] = []
    blocks: list[Mapping[str, Any] | None] = []
    for j, item in enumerate(expect_list(content, source, loc, "a string or a list of parts")):
        ploc = f"{loc}[{j}]"
        block = expect_map(item, source, ploc, "a content part object")
        kind = block.get("type")
        if kind in ("input_text", "output_text"):
            parts.append(TextPart(expect_str(block.get("text"), source, f"{ploc}.text")))
        elif kind == "refusal":
            parts.append(TextPart(expect_str(block.get("refusal"), source, f"{ploc}.refusal")))
        elif kind == "input_image":
            url = opt_str(block.get("image_url"), source, f"{ploc}.image_url")
            file_id = opt_str(block.get("file_id"), source, f"{ploc}.file_id")
            if url is not None and url.startswith("data:"):
                parts.append(MediaPart(data_url_type(url, "image"), data=url))
            else:
                parts.append(MediaPart("image", url=url or file_id))
        elif kind == "input_file":
            data = opt_str(block.get("file_data"), source, f"{ploc}.file_data")
            file_id = opt_str(block.get("file_id"), source, f"{ploc}.file_id")
            file_url = opt_str(block.get("file_url"), source, f"{ploc}.file_url")
            filename = opt_str(block.get("filename"), source, f"{ploc}.filename")
            media = data_url_type(data, "file") if data else "file"
            parts.append(MediaPart(media, url=file_id or file_url, data=data, filename=filename))
        elif kind == "input_audio":
            audio = expect_map(block.get("input_audio"), source, f"{ploc}.input_audio")
            fmt = opt_str(audio.get("format"), source, f"{ploc}.input_audio.format")
            data = opt_str(audio.get("data"), source, f"{ploc}.input_audio.data")
            parts.append(MediaPart(f"audio/{fmt or 'unknown'}", data=data))
        else:
            unknown("content part type", kind, PART_TYPES, source, f"{ploc}.type")
        blocks.append(block)
    return parts, blocks


def _output_text(value: Any, source: str, loc: str) -> tuple[str, list[Part]]:
    if value is None:
        return "", []
    if isinstance(value, str):
        return value, []
    if isinstance(value, list):
        parts, _ = _content_parts(value, source, loc)
        text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
        return text, [p for p in parts if not isinstance(p, TextPart)]
    if isinstance(value, Mapping) and value.get("type") == "computer_screenshot":
        url = value.get("image_url")
        if isinstance(url, str):
            media = data_url_type(url, "image")
            part = (
                MediaPart(media, data=url) if url.startswith("data:") else MediaPart(media, url=url)
            )
            return "", [part]
    return dumps(value), []


def _reasoning(item: Mapping[str, Any], source: str, loc: str) -> list[Part]:
    parts: list[Part] = []
    for key, inner_type in (("summary", "summary_text"), ("content", "reasoning_text")):
        value = item.get(key)
        if value is None:
            continue
        for j, entry in enumerate(expect_list(value, source, f"{loc}.{key}")):
            eloc = f"{loc}.{key}[{j}]"
            block = expect_map(entry, source, eloc)
            if block.get("type") != inner_type:
                unknown(
                    f"{key} part type", block.get("type"), (inner_type,), source, f"{eloc}.type"
                )
            parts.append(ReasoningPart(expect_str(block.get("text"), source, f"{eloc}.text")))
    encrypted = item.get("encrypted_content")
    if encrypted is not None:
        expect_str(encrypted, source, f"{loc}.encrypted_content")
        parts.append(OpaquePart(PROVIDER, "encrypted_reasoning"))
    return parts


def _hosted_text(item: Mapping[str, Any]) -> str:
    kind = item.get("type")
    keys = {
        "web_search_call": ("action",),
        "file_search_call": ("queries", "results"),
        "code_interpreter_call": ("code", "outputs"),
        "image_generation_call": (),
        "mcp_call": ("name", "arguments", "output", "error"),
        "mcp_list_tools": ("server_label",),
    }.get(str(kind), ())
    shown = {k: item[k] for k in keys if item.get(k) is not None}
    return dumps(shown) if shown else ""


def _item_message(item: Mapping[str, Any], source: str, loc: str) -> Message:
    kind = item.get("type", "message" if "role" in item else None)
    if not isinstance(kind, str):
        unknown("item type", kind, ITEM_TYPES, source, f"{loc}.type")
    if kind == "message":
        role = item.get("role")
        if role not in _MESSAGE_ROLES:
            unknown("role", role, _MESSAGE_ROLES, source, f"{loc}.role")
        parts, blocks = _content_parts(item.get("content"), source, f"{loc}.content")
        return make_message(ROLE_OF[str(role)], parts, blocks, wire=item, fmt=NAME)
    if kind in CLIENT_CALLS:
        _, arg_key = CLIENT_CALLS[str(kind)]
        call_id = expect_str(item.get("call_id"), source, f"{loc}.call_id")
        if kind in ("function_call", "custom_tool_call"):
            name = expect_str(item.get("name"), source, f"{loc}.name")
        else:
            name = str(kind).removesuffix("_call")
        value = item.get(arg_key)
        args = value if isinstance(value, str) else ("" if value is None else dumps(value))
        return make_message(
            "assistant", [ToolCallPart(call_id, name, args)], [item], wire=item, fmt=NAME
        )
    if kind in OUTPUT_TYPES:
        id_key = "id" if kind == "local_shell_call_output" and "call_id" not in item else "call_id"
        call_id = expect_str(item.get(id_key), source, f"{loc}.{id_key}")
        text, extra = _output_text(item.get("output"), source, f"{loc}.output")
        results: list[Part] = [ToolResultPart(call_id, text), *extra]
        return make_message("tool", results, [item] * len(results), wire=item, fmt=NAME)
    if kind == "reasoning":
        thoughts = _reasoning(item, source, loc)
        return make_message("assistant", thoughts, [item] * len(thoughts), wire=item, fmt=NAME)
    if kind in HOSTED_TYPES:
        part = OpaquePart(PROVIDER, str(kind), _hosted_text(item))
        return make_message("assistant", [part], [item], wire=item, fmt=NAME)
    if kind == "mcp_approval_request":
        approval_id = expect_str(item.get("id"), source, f"{loc}.id")
        tool = opt_str(item.get("name"), source, f"{loc}.name")
        req = ApprovalRequestPart(approval_id, name=tool)
        return make_message("assistant", [req], [item], wire=item, fmt=NAME)
    if kind == "mcp_approval_response":
        approval_id = expect_str(
            item.get("approval_request_id"), source, f"{loc}.approval_request_id"
        )
        approved = expect_bool(item.get("approve"), source, f"{loc}.approve")
        reason = opt_str(item.get("reason"), source, f"{loc}.reason")
        resp = ApprovalResponsePart(approval_id, approved, reason)
        return make_message("user", [resp], [item], wire=item, fmt=NAME)
    if kind == "compaction":
        expect_str(item.get("encrypted_content"), source, f"{loc}.encrypted_content")
        part = OpaquePart(PROVIDER, "compaction")
        return make_message("system", [part], [item], wire=item, fmt=NAME)
    if kind == "item_reference":
        ref = expect_str(item.get("id"), source, f"{loc}.id")
        part = OpaquePart(PROVIDER, "item_reference", ref)
        return make_message("user", [part], [item], wire=item, fmt=NAME)
    unknown("item type", kind, ITEM_TYPES, source, f"{loc}.type")


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """Convert Responses API input/output items to messages (one message per item)."""
    out: list[Message] = []
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        item = expect_map(raw, source, loc, "an item object")
        out.append(_item_message(item, source, loc))
    return out


def instructions_message(value: Any, source: str) -> Message:
    """The system message for a request's top-level ``instructions`` string."""
    text = expect_str(value, source, "instructions")
    parts = [TextPart(text)] if text else []
    return make_message(
        "developer",
        parts,
        [None] * len(parts),
        wire=value,
        fmt=NAME,
        meta={META_CONTAINER_KEY: "instructions"},
    )


def _media_block(part: MediaPart) -> dict[str, Any]:
    if part.media_type.startswith("audio/"):
        return {
            "type": "input_audio",
            "input_audio": {"data": part.data or "", "format": part.media_type.split("/", 1)[1]},
        }
    if part.media_type.startswith("image"):
        if part.data is not None:
            return {"type": "input_image", "image_url": part.data, "detail": "auto"}
        url = part.url or ""
        if url and "://" not in url:
            return {"type": "input_image", "file_id": url, "detail": "auto"}
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    out: dict[str, Any] = {"type": "input_file"}
    if part.data is not None:
        out["file_data"] = part.data
    if part.url is not None:
        out["file_url" if "://" in part.url else "file_id"] = part.url
    if part.filename is not None:
        out["filename"] = part.filename
    return out


def encode(message: Message) -> Encoded:
    """Responses items for a message: a message item, then reasoning and calls, or outputs."""
    notes: list[tuple[str, str]] = []
    if author_name(message):
        notes.append(("dropped", "message author name"))
    pairs = list(zip(message.parts, blocks_for(message, NAME), strict=True))
    items: list[dict[str, Any]] = []
    text_type = "output_text" if message.role == "assistant" else "input_text"
    content: list[dict[str, Any]] = []
    reasoning: list[str] = []
    reasoning_block: Mapping[str, Any] | None = None
    trailing: list[dict[str, Any]] = []
    last_result: dict[str, Any] | None = None
    for part, block in pairs:
        if isinstance(part, TextPart):
            if block is not None and block.get("type") == "refusal":
                content.append(keep_extra_keys({"type": "refusal", "refusal": part.text}, block))
            else:
                content.append(keep_extra_keys({"type": text_type, "text": part.text}, block))
        elif isinstance(part, MediaPart):
            if _is_new_audio(part, block):
                notes.append(("dropped", "audio (Responses input messages take no audio)"))
                continue
            if last_result is not None:
                _add_output_media(last_result, part)
                continue
            if message.role == "assistant":
                notes.append(("dropped", "media in an assistant message"))
                continue
            content.append(keep_extra_keys(_media_block(part), block))
        elif isinstance(part, ReasoningPart):
            reasoning.append(part.text)
            reasoning_block = block if reasoning_block is None else reasoning_block
        elif isinstance(part, ToolCallPart):
            trailing.append(_call_item(part, block))
        elif isinstance(part, ToolResultPart):
            last_result = _output_item(part, block, notes)
            trailing.append(last_result)
            continue
        elif isinstance(part, OpaquePart):
            if block is not None and part.provider == PROVIDER:
                if part.type == "encrypted_reasoning":
                    reasoning_block = block
                    continue
                trailing.append(dict(block))
            elif part.text:
                notes.append(("approximated", f"{part.provider} {part.type} carried as text"))
                content.append(
                    {"type": text_type, "text": f"[{part.provider} {part.type}] {part.text}"}
                )
            else:
                notes.append(("dropped", f"{part.provider} {part.type} (opaque)"))
        elif isinstance(part, ApprovalRequestPart):
            if block is not None:
                trailing.append(dict(block))
            else:
                notes.append(("approximated", "approval request carried as text"))
                content.append(
                    {
                        "type": text_type,
                        "text": f"[approval requested for {part.name or part.call_id or part.id}]",
                    }
                )
        elif isinstance(part, ApprovalResponsePart):
            if block is None and message.wire_format != NAME:
                # Another format's tool approval is not an MCP approval of this API.
                notes.append(("approximated", "approval response carried as text"))
                verdict = "granted" if part.approved else "denied"
                reason = f": {part.reason}" if part.reason else ""
                content.append({"type": text_type, "text": f"[approval {verdict}{reason}]"})
                last_result = None
                continue
            trailing.append(_approval_response_item(part, block))
        last_result = None
    if reasoning or reasoning_block is not None:
        items.append(_reasoning_item(message, reasoning, reasoning_block, notes))
    role = message.role if message.role != "tool" else "user"
    if content or (not trailing and not items):
        if message.meta.get(META_CONTAINER_KEY):
            notes.append(("moved", "instructions placed in the input as a developer message"))
        items.append(_message_item(message, role, content))
    items.extend(trailing)
    return Encoded(tuple(items), tuple(notes))


def _add_output_media(result: dict[str, Any], part: MediaPart) -> None:
    """Add media after a tool result to that result's output (a list of parts)."""
    out = result.get("output")
    listed = [{"type": "input_text", "text": out}] if isinstance(out, str) and out else []
    if isinstance(out, list):
        listed = out
    result["output"] = [*listed, _media_block(part)]


def _call_item(part: ToolCallPart, block: Mapping[str, Any] | None) -> dict[str, Any]:
    """The call item for a tool call: custom, the client call it was read from, or a function
    call."""
    if block is not None and block.get("type") == "custom_tool_call":
        built = {
            "type": "custom_tool_call",
            "call_id": part.id,
            "name": part.name,
            "input": part.arguments,
        }
    elif (
        block is not None
        and block.get("type") in CLIENT_CALLS
        and block.get("type") != "function_call"
        and _same_call(block, part)
    ):
        built = dict(block)
    else:
        built = {
            "type": "function_call",
            "call_id": part.id,
            "name": part.name,
            "arguments": part.arguments,
        }
    return keep_extra_keys(built, block)


def _output_item(
    part: ToolResultPart, block: Mapping[str, Any] | None, notes: list[tuple[str, str]]
) -> dict[str, Any]:
    """The output item for a tool result (the one it was read from when unchanged)."""
    kind = "function_call_output"
    if block is not None and block.get("type") in OUTPUT_TYPES:
        kind = str(block.get("type"))
    if part.is_error:
        notes.append(("approximated", "tool result error flag (is_error) has no field"))
    result: dict[str, Any] = {"type": kind, "call_id": part.call_id, "output": part.output}
    if block is not None and block.get("type") == kind and _same_output(block, part):
        return dict(block)
    return keep_extra_keys(result, block)


def _approval_response_item(
    part: ApprovalResponsePart, block: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The ``mcp_approval_response`` item for an approval answer."""
    resp: dict[str, Any] = {
        "type": "mcp_approval_response",
        "approval_request_id": part.id,
        "approve": part.approved,
    }
    if part.reason is not None:
        resp["reason"] = part.reason
    return keep_extra_keys(resp, block)


def _reasoning_item(
    message: Message,
    reasoning: list[str],
    reasoning_block: Mapping[str, Any] | None,
    notes: list[tuple[str, str]],
) -> dict[str, Any]:
    """The reasoning item for the message's reasoning texts (and the block they came from)."""
    r: dict[str, Any] = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": t} for t in reasoning],
    }
    if reasoning_block is None:
        r["id"] = _item_id("rs_", r["summary"])
    if reasoning_block is not None:
        if reasoning_block.get("content") is not None and not reasoning_block.get("summary"):
            r = {
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": t} for t in reasoning],
            }
        r = keep_extra_keys(r, reasoning_block)
    if message.role != "assistant":
        notes.append(("approximated", "reasoning outside an assistant message"))
    return r


def _message_item(message: Message, role: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "message", "role": role, "content": content}
    wire = original_of(message)
    if (
        message.wire_format == NAME
        and isinstance(wire, Mapping)
        and wire.get("type", "message") == "message"
    ):
        if "type" not in wire:
            del msg["type"]
        for key, value in wire.items():
            if key not in msg and key not in MESSAGE_KEYS:
                msg[key] = value
        if (
            isinstance(wire.get("content"), str)
            and len(content) == 1
            and set(content[0]) == {"type", "text"}
        ):
            msg["content"] = content[0]["text"]
    if role == "assistant" and not isinstance(msg["content"], str):
        _as_output_message(msg)
    return msg


def _as_output_message(msg: dict[str, Any]) -> None:
    """Make an assistant message item with content parts a complete output message.

    Readers of Responses items (the OpenAI Agents SDK, the ``ResponseOutputMessageParam``
    type) take an assistant message with ``output_text`` parts only as an output
    message: ``type``, an ``id``, a ``status`` and ``annotations`` on each text part.
    A created message gets ``msg_`` and a digest of its content as id (the same
    content gives the same id, so dumps are reproducible).
    """
    msg["type"] = "message"
    for entry in msg["content"]:
        if entry.get("type") == "output_text":
            entry.setdefault("annotations", [])
    if "id" not in msg:
        msg["id"] = _item_id("msg_", msg["content"])
    msg.setdefault("status", "completed")


def _item_id(prefix: str, content: Any) -> str:
    """An item id for a created item: ``prefix`` and a digest of its content."""
    digest = hashlib.sha256(dumps(content).encode("utf-8", "surrogatepass"))
    return prefix + digest.hexdigest()[:48]


def _is_new_audio(part: MediaPart, block: Mapping[str, Any] | None) -> bool:
    """Audio not read from an ``input_audio`` part: the Responses API has no place for it."""
    if not part.media_type.startswith("audio/"):
        return False
    return block is None or block.get("type") != "input_audio"


def _same_call(block: Mapping[str, Any], part: ToolCallPart) -> bool:
    kind = str(block.get("type"))
    _, arg_key = CLIENT_CALLS[kind]
    value = block.get(arg_key)
    args = value if isinstance(value, str) else ("" if value is None else dumps(value))
    return block.get("call_id") == part.id and args == part.arguments


def _same_output(block: Mapping[str, Any], part: ToolResultPart) -> bool:
    try:
        text, _ = _output_text(block.get("output"), "<check>", "output")
    except ValueError:
        return False
    return text == part.output


def from_message(message: Message) -> dict[str, Any]:
    """Build the first Responses item for a message (:func:`encode` returns them all)."""
    item: dict[str, Any] = encode(message).items[0]
    return item


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="OpenAI Responses API input/output items",
    encode=encode,
    message_keys=MESSAGE_KEYS,
    block_keys=BLOCK_KEYS,
)
