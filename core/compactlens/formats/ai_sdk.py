"""Vercel AI SDK ``ModelMessage`` JSON (the input of ``@deepagents/compaction``).

Roles ``system`` (string content), ``user`` (``text``, ``image``, ``file``),
``assistant`` (``text``, ``custom``, ``file``, ``reasoning``, ``reasoning-file``,
``tool-call``, ``tool-result``, ``tool-approval-request``) and ``tool``
(``tool-result``, ``tool-approval-response``), as in AI SDK 7. Tool result
outputs ``text``, ``json``, ``error-text``, ``error-json``, ``content`` and
``execution-denied`` are read (the error forms set ``is_error``, as does a
denial); AI SDK 4 fields (``args``, ``result``, ``isError``, ``mimeType``,
``redacted-reasoning``) are read too.

Provider-executed tools (``providerExecuted: true``, for example web search) are
ordinary tool exchanges: the call is a tool call part and its result, which the
AI SDK puts in the same assistant message, a tool result part there, so the pair
is closed inside that message. ``custom`` parts, ``reasoning-file`` parts and
files given by a provider reference or as inline text (``data: {"type":
"reference"}`` / ``{"type": "text"}``) are opaque parts, carried as they are; a
file whose ``data`` is a tagged ``{"type": "data"}`` or ``{"type": "url"}``
object is media like a plain one. ``providerOptions`` and ``providerExecuted``
stay on the wire objects and are kept on rebuild.
"""

from __future__ import annotations

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
    fail,
    json_type,
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
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

NAME = "ai-sdk"
PROVIDER = "ai-sdk"
ROLES = ("system", "user", "assistant", "tool")
ALLOWED: dict[str, tuple[str, ...]] = {
    "user": ("text", "image", "file"),
    "assistant": (
        "text",
        "custom",
        "file",
        "reasoning",
        "reasoning-file",
        "redacted-reasoning",
        "tool-call",
        "tool-result",
        "tool-approval-request",
    ),
    "tool": ("tool-result", "tool-approval-response"),
}
OUTPUT_TYPES = ("text", "json", "error-text", "error-json", "content", "execution-denied")
CONTENT_OUTPUT_TYPES = (
    "text",
    "media",
    "file-data",
    "file-url",
    "file-id",
    "image-data",
    "image-url",
    "image-file-id",
    "file",
    "file-reference",
    "image-file-reference",
    "custom",
)
FILE_DATA_TYPES = ("data", "url", "reference", "text")
MESSAGE_KEYS = frozenset({"role", "content"})
BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text"}),
    "reasoning": frozenset({"type", "text"}),
    "image": frozenset({"type", "image", "mediaType", "mimeType"}),
    "file": frozenset({"type", "data", "mediaType", "mimeType", "filename"}),
    "tool-call": frozenset({"type", "toolCallId", "toolName", "input", "args", "providerExecuted"}),
    "tool-result": frozenset({"type", "toolCallId", "toolName", "output", "result", "isError"}),
    "tool-approval-request": frozenset({"type", "approvalId", "toolCallId"}),
    "tool-approval-response": frozenset({"type", "approvalId", "approved", "reason"}),
}


def _is_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


def _media(value: str, media_type: str, filename: str | None = None) -> MediaPart:
    if _is_url(value):
        return MediaPart(media_type, url=value, filename=filename)
    return MediaPart(data_url_type(value, media_type), data=value, filename=filename)


def _file_data(data: Any, media_type: str, filename: str | None, source: str, loc: str) -> Part:
    """A file's ``data``: a string, a tagged object (AI SDK 7) or a provider reference."""
    if isinstance(data, str):
        return _media(data, media_type, filename)
    value = expect_map(data, source, loc, "a string or a file data object")
    tag = value.get("type")
    if tag == "data":
        return _media(expect_str(value.get("data"), source, f"{loc}.data"), media_type, filename)
    if tag == "url":
        url = expect_str(value.get("url"), source, f"{loc}.url")
        return MediaPart(media_type, url=url, filename=filename)
    if tag == "text":
        return OpaquePart(
            PROVIDER, "file-text", expect_str(value.get("text"), source, f"{loc}.text")
        )
    if tag == "reference" or tag is None:
        reference = value.get("reference", value)
        expect_map(reference, source, f"{loc}.reference" if tag else loc)
        return OpaquePart(PROVIDER, "file-reference", dumps(reference))
    unknown("file data type", tag, FILE_DATA_TYPES, source, f"{loc}.type")


def _media_type(block: Mapping[str, Any], default: str, source: str, loc: str) -> str:
    for key in ("mediaType", "mimeType"):
        value = opt_str(block.get(key), source, f"{loc}.{key}")
        if value:
            return value
    return default


def _output(block: Mapping[str, Any], source: str, loc: str) -> tuple[str, bool, list[Part]]:
    """Text, error flag and extra media parts of a tool result."""
    if "output" not in block and "result" in block:  # AI SDK 4
        result = block.get("result")
        is_error = block.get("isError")
        error = False if is_error is None else expect_bool(is_error, source, f"{loc}.isError")
        return (result if isinstance(result, str) else dumps(result)), error, []
    out = expect_map(block.get("output"), source, f"{loc}.output")
    kind = out.get("type")
    value = out.get("value")
    if kind == "text":
        return expect_str(value, source, f"{loc}.output.value"), False, []
    if kind == "error-text":
        return expect_str(value, source, f"{loc}.output.value"), True, []
    if kind == "json":
        return dumps(value), False, []
    if kind == "error-json":
        return dumps(value), True, []
    if kind == "execution-denied":
        return opt_str(out.get("reason"), source, f"{loc}.output.reason") or "", True, []
    if kind == "content":
        texts: list[str] = []
        media: list[Part] = []
        for j, item in enumerate(expect_list(value, source, f"{loc}.output.value")):
            iloc = f"{loc}.output.value[{j}]"
            entry = expect_map(item, source, iloc)
            etype = entry.get("type")
            if etype == "text":
                texts.append(expect_str(entry.get("text"), source, f"{iloc}.text"))
            elif etype in ("media", "file-data", "image-data"):
                data = expect_str(entry.get("data"), source, f"{iloc}.data")
                default = "image" if etype == "image-data" else "file"
                mt = _media_type(entry, default, source, iloc)
                fname = opt_str(entry.get("filename"), source, f"{iloc}.filename")
                media.append(MediaPart(mt, data=data, filename=fname))
            elif etype == "file":
                mt = expect_str(entry.get("mediaType"), source, f"{iloc}.mediaType")
                fname = opt_str(entry.get("filename"), source, f"{iloc}.filename")
                media.append(_file_data(entry.get("data"), mt, fname, source, f"{iloc}.data"))
            elif etype in ("file-reference", "image-file-reference"):
                reference = expect_map(
                    entry.get("providerReference"), source, f"{iloc}.providerReference"
                )
                media.append(OpaquePart(PROVIDER, str(etype), dumps(reference)))
            elif etype in ("file-url", "image-url"):
                url = expect_str(entry.get("url"), source, f"{iloc}.url")
                default = "image" if etype == "image-url" else "file"
                media.append(MediaPart(_media_type(entry, default, source, iloc), url=url))
            elif etype in ("file-id", "image-file-id"):
                file_id = entry.get("fileId")
                default = "image" if etype == "image-file-id" else "file"
                if isinstance(file_id, str):
                    media.append(MediaPart(default, url=file_id))
                else:  # one id per provider: which one applies depends on the provider
                    ids = expect_map(file_id, source, f"{iloc}.fileId", "a string or an object")
                    media.append(OpaquePart(PROVIDER, str(etype), dumps(ids)))
            elif etype == "custom":
                media.append(OpaquePart(PROVIDER, "custom", ""))
            else:
                unknown(
                    "tool output content type", etype, CONTENT_OUTPUT_TYPES, source, f"{iloc}.type"
                )
        return "\n".join(texts), False, media
    unknown("tool output type", kind, OUTPUT_TYPES, source, f"{loc}.output.type")


def _parts(
    role: str, content: Any, source: str, loc: str
) -> tuple[list[Part], list[Mapping[str, Any] | None]]:
    if isinstance(content, str):
        if role == "tool":
            fail("tool message content must be a list of parts", source, loc)
        return ([TextPart(content)], [None]) if content else ([], [])
    if role == "system":
        fail(f"system message content must be a string, got {json_type(content)}", source, loc)
    parts: list[Part] = []
    blocks: list[Mapping[str, Any] | None] = []
    allowed = ALLOWED[role]
    for j, item in enumerate(expect_list(content, source, loc, "a string or a list of parts")):
        ploc = f"{loc}[{j}]"
        block = expect_map(item, source, ploc, "a part object")
        kind = block.get("type")
        if kind not in allowed:
            everything = sorted({t for ts in ALLOWED.values() for t in ts})
            if kind in everything:
                fail(
                    f"part type {kind!r} is not allowed in a {role} message", source, f"{ploc}.type"
                )
            unknown("part type", kind, everything, source, f"{ploc}.type")
        if kind == "text":
            parts.append(TextPart(expect_str(block.get("text"), source, f"{ploc}.text")))
        elif kind == "reasoning":
            parts.append(ReasoningPart(expect_str(block.get("text"), source, f"{ploc}.text")))
        elif kind == "redacted-reasoning":
            parts.append(OpaquePart(PROVIDER, "redacted-reasoning"))
        elif kind == "image":
            image = block.get("image")
            media_type = _media_type(block, "image", source, ploc)
            if isinstance(image, Mapping):  # a provider reference
                parts.append(_file_data(image, media_type, None, source, f"{ploc}.image"))
            else:
                parts.append(_media(expect_str(image, source, f"{ploc}.image"), media_type))
        elif kind in ("file", "reasoning-file"):
            filename = opt_str(block.get("filename"), source, f"{ploc}.filename")
            media_type = _media_type(block, "file", source, ploc)
            part = _file_data(block.get("data"), media_type, filename, source, f"{ploc}.data")
            if kind == "reasoning-file":
                part = OpaquePart(PROVIDER, "reasoning-file", media_type)
            parts.append(part)
        elif kind == "custom":
            parts.append(
                OpaquePart(
                    PROVIDER, "custom", expect_str(block.get("kind"), source, f"{ploc}.kind")
                )
            )
        elif kind == "tool-call":
            call_id = expect_str(block.get("toolCallId"), source, f"{ploc}.toolCallId")
            name = expect_str(block.get("toolName"), source, f"{ploc}.toolName")
            value = block.get("input", block.get("args"))
            args = value if isinstance(value, str) else dumps(value)
            parts.append(ToolCallPart(call_id, name, args))
        elif kind == "tool-result":  # in an assistant message: a provider-executed result
            call_id = expect_str(block.get("toolCallId"), source, f"{ploc}.toolCallId")
            name = expect_str(block.get("toolName"), source, f"{ploc}.toolName")
            text, error, extra = _output(block, source, ploc)
            parts.append(ToolResultPart(call_id, text, name=name, is_error=error))
            blocks.append(block)
            parts.extend(extra)
            blocks.extend([block] * len(extra))
            continue
        elif kind == "tool-approval-request":
            approval = expect_str(block.get("approvalId"), source, f"{ploc}.approvalId")
            call_id = expect_str(block.get("toolCallId"), source, f"{ploc}.toolCallId")
            parts.append(ApprovalRequestPart(approval, call_id=call_id))
        elif kind == "tool-approval-response":
            approval = expect_str(block.get("approvalId"), source, f"{ploc}.approvalId")
            approved = expect_bool(block.get("approved"), source, f"{ploc}.approved")
            reason = opt_str(block.get("reason"), source, f"{ploc}.reason")
            parts.append(ApprovalResponsePart(approval, approved, reason))
        blocks.append(block)
    return parts, blocks


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """Convert AI SDK ``ModelMessage`` objects to messages."""
    out: list[Message] = []
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        item = expect_map(raw, source, loc, "a message object")
        role = item.get("role")
        if role not in ROLES:
            unknown("role", role, ROLES, source, f"{loc}.role")
        parts, blocks = _parts(str(role), item.get("content"), source, f"{loc}.content")
        out.append(make_message(ROLE_OF[str(role)], parts, blocks, wire=item, fmt=NAME))
    return out


def _media_block(part: MediaPart, role: str) -> dict[str, Any]:
    value = part.url if part.data is None else part.data
    if part.media_type.startswith("image") and role == "user":
        out: dict[str, Any] = {"type": "image", "image": value or ""}
        if part.media_type != "image":
            out["mediaType"] = part.media_type
        return out
    out = {"type": "file", "data": value or "", "mediaType": _full_media_type(part.media_type)}
    if part.filename is not None:
        out["filename"] = part.filename
    return out


def _full_media_type(media_type: str) -> str:
    """An IANA media type for ``mediaType`` (``image`` becomes ``image/*``)."""
    if "/" in media_type:
        return media_type
    if media_type in ("image", "audio", "video"):
        return f"{media_type}/*"
    return "application/octet-stream"


def _output_value(
    part: ToolResultPart, block: Mapping[str, Any] | None, media: list[MediaPart]
) -> dict[str, Any]:
    old = block.get("output") if block is not None else None
    old_type = old.get("type") if isinstance(old, Mapping) else None
    if media or old_type == "content":
        value: list[dict[str, Any]] = [{"type": "text", "text": part.output}] if part.output else []
        for m in media:
            data = {"type": "data", "data": m.data} if m.data is not None else None
            entry: dict[str, Any] = {
                "type": "file",
                "data": data or {"type": "url", "url": m.url or ""},
                "mediaType": _full_media_type(m.media_type),
            }
            if m.filename is not None:
                entry["filename"] = m.filename
            value.append(entry)
        return {"type": "content", "value": value}
    if old_type == "execution-denied" and part.is_error:
        denied: dict[str, Any] = {"type": "execution-denied"}
        if part.output:
            denied["reason"] = part.output
        return denied
    if old_type in ("json", "error-json"):
        parsed = loads_or_none(part.output)
        if parsed is not None or part.output.strip() == "null":
            return {"type": "error-json" if part.is_error else "json", "value": parsed}
    return {"type": "error-text" if part.is_error else "text", "value": part.output}


def _same_result(block: Mapping[str, Any], part: ToolResultPart, extras: Sequence[Part]) -> bool:
    """True when ``block`` reads back as exactly this result and these extra parts."""
    try:
        text, error, media = _output(block, "<check>", "part")
    except ValueError:
        return False
    return (
        text == part.output
        and error == part.is_error
        and block.get("toolName") == (part.name or "")
        and block.get("toolCallId") == part.call_id
        and list(media) == list(extras)
    )


def _as_text(block: Mapping[str, Any]) -> str:
    """A short text standing in for a part the role cannot hold."""
    kind = block.get("type")
    if kind in ("text", "reasoning"):
        return str(block.get("text", ""))
    if kind == "tool-call":
        return f"[tool call {block.get('toolName')} {dumps(block.get('input'))}]"
    if kind == "tool-result":
        out = block.get("output")
        value = out.get("value") if isinstance(out, Mapping) else None
        return value if isinstance(value, str) else dumps(value)
    if kind == "tool-approval-request":
        return f"[approval requested for {block.get('toolCallId') or block.get('approvalId')}]"
    if kind == "tool-approval-response":
        verdict = "granted" if block.get("approved") else "denied"
        reason = block.get("reason")
        return f"[approval {verdict}]" + (f" {reason}" if isinstance(reason, str) else "")
    return f"[{kind}]"


def _role_for(message: Message) -> str:
    role = "system" if message.role == "developer" else message.role
    answers = [p for p in message.parts if isinstance(p, ToolResultPart | ApprovalResponsePart)]
    if role in ("user", "system") and answers:
        return "tool"
    return role


def encode(message: Message) -> Encoded:
    """An AI SDK ``ModelMessage`` for a message (and a user message for what a tool
    message cannot hold)."""
    notes: list[tuple[str, str]] = []
    if author_name(message):
        notes.append(("dropped", "message author name"))
    role = _role_for(message)
    pairs = list(zip(message.parts, blocks_for(message, NAME), strict=True))
    content: list[dict[str, Any]] = []
    i = 0
    while i < len(pairs):
        part, block = pairs[i]
        i += 1
        if isinstance(part, ToolResultPart):
            i = _encode_result(part, block, pairs, i, role, content, notes)
        else:
            _encode_part(part, block, role, content, notes)
    kept, extra_user = _fit_role(content, role, notes)
    body: Any = kept
    if role == "system":
        body = "\n".join(str(c.get("text", "")) for c in kept)
    elif (
        len(kept) == 1
        and kept[0].get("type") == "text"
        and len(kept[0]) == 2
        and role in ("user", "assistant")
        and not any(b is not None for _, b in pairs)
    ):
        body = kept[0]["text"]
    elif not kept and role in ("user", "assistant"):
        body = ""
    item: dict[str, Any] = {"role": role, "content": body}
    wire = original_of(message)
    if message.wire_format == NAME and isinstance(wire, Mapping):
        for key, val in wire.items():
            if key not in MESSAGE_KEYS:
                item[key] = val
    items: list[dict[str, Any]] = [item]
    if extra_user:
        items.append({"role": "user", "content": extra_user})
    return Encoded(tuple(items), tuple(notes))


def _encode_result(
    part: ToolResultPart,
    block: Mapping[str, Any] | None,
    pairs: Sequence[tuple[Part, Mapping[str, Any] | None]],
    i: int,
    role: str,
    content: list[dict[str, Any]],
    notes: list[tuple[str, str]],
) -> int:
    """Append a tool result's block (with the parts after ``i`` it holds); the next index."""
    media: list[MediaPart] = []
    extras: list[Part] = []
    while i < len(pairs) and not isinstance(pairs[i][0], ToolResultPart):
        extra, extra_block = pairs[i]
        if block is not None and extra_block is block:
            extras.append(extra)  # read from this result's output
        elif not (isinstance(extra, MediaPart) and role == "tool"):
            break
        if isinstance(extra, MediaPart):
            media.append(extra)
        i += 1
    if block is not None and _same_result(block, part, extras):
        content.append(dict(block))
        return i
    if any(isinstance(e, OpaquePart) for e in extras):
        notes.append(("dropped", "opaque tool output content of a changed result"))
    out: dict[str, Any] = {
        "type": "tool-result",
        "toolCallId": part.call_id,
        "toolName": part.name or "",
        "output": _output_value(part, block, media),
    }
    if not part.name:
        notes.append(("approximated", "tool result without a tool name (toolName empty)"))
    content.append(keep_extra_keys(out, block))
    return i


def _encode_part(
    part: Part,
    block: Mapping[str, Any] | None,
    role: str,
    content: list[dict[str, Any]],
    notes: list[tuple[str, str]],
) -> None:
    """Append the block for a part other than a tool result (or a note of its loss)."""
    if isinstance(part, TextPart):
        content.append(keep_extra_keys({"type": "text", "text": part.text}, block))
    elif isinstance(part, ReasoningPart):
        content.append(keep_extra_keys({"type": "reasoning", "text": part.text}, block))
    elif isinstance(part, MediaPart):
        user_like = "user" if role in ("user", "tool") else role
        content.append(keep_extra_keys(_media_block(part, user_like), block))
    elif isinstance(part, ToolCallPart):
        parsed = loads_or_none(part.arguments)
        value: Any = parsed if parsed is not None else part.arguments
        if part.arguments.strip() == "":
            value = {}
        call = {
            "type": "tool-call",
            "toolCallId": part.id,
            "toolName": part.name,
            "input": value,
        }
        content.append(keep_extra_keys(call, block))
    elif isinstance(part, ApprovalRequestPart):
        req = {
            "type": "tool-approval-request",
            "approvalId": part.id,
            "toolCallId": part.call_id or "",
        }
        content.append(keep_extra_keys(req, block))
    elif isinstance(part, ApprovalResponsePart):
        resp: dict[str, Any] = {
            "type": "tool-approval-response",
            "approvalId": part.id,
            "approved": part.approved,
        }
        if part.reason is not None:
            resp["reason"] = part.reason
        content.append(keep_extra_keys(resp, block))
    elif isinstance(part, OpaquePart):
        if block is not None and part.provider == PROVIDER:
            content.append(dict(block))
        elif part.text:
            notes.append(("approximated", f"{part.provider} {part.type} carried as text"))
            content.append({"type": "text", "text": f"[{part.provider} {part.type}] {part.text}"})
        else:
            notes.append(("dropped", f"{part.provider} {part.type} (opaque)"))


def _fit_role(
    content: list[dict[str, Any]], role: str, notes: list[tuple[str, str]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The blocks the role holds, and those for a user message beside a tool message (what
    the role cannot hold becomes text)."""
    allowed = ("text",) if role == "system" else ALLOWED[role]
    kept: list[dict[str, Any]] = []
    extra_user: list[dict[str, Any]] = []
    for block_out in content:
        kind = block_out.get("type")
        if kind in allowed:
            kept.append(block_out)
            continue
        if kind == "file" and role == "system":
            notes.append(("dropped", "media in a system message"))
            continue
        if kind in ("image", "file") and role == "tool":
            extra_user.append(block_out)
            continue
        notes.append(("approximated", f"{kind} in a {role} message carried as text"))
        stand_in = {"type": "text", "text": _as_text(block_out)}
        (kept if "text" in allowed else extra_user).append(stand_in)
    if extra_user and role == "tool":
        notes.append(("approximated", "text beside tool results sent as a separate user message"))
    return kept, extra_user


def from_message(message: Message) -> dict[str, Any]:
    """Build an AI SDK ``ModelMessage`` for a new or changed message."""
    item: dict[str, Any] = encode(message).items[0]
    return item


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="Vercel AI SDK ModelMessage JSON",
    encode=encode,
    message_keys=MESSAGE_KEYS,
    block_keys=BLOCK_KEYS,
)
