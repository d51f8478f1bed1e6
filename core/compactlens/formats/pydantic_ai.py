"""pydantic-ai message history, as ``ModelMessagesTypeAdapter.dump_python(mode="json")`` writes it.

Each item is a ``ModelRequest`` (``"kind": "request"``) or a ``ModelResponse``
(``"kind": "response"``) with a ``parts`` list; every part names itself with
``part_kind``. A request mixes roles (``system-prompt``, ``user-prompt``,
``tool-return``, ``retry-prompt``), so it becomes one message per run of parts with the
same role (system, user, tool); a request with one run keeps the request itself as its
wire object. A response is one assistant message (``text``, ``thinking``,
``tool-call``; other parts such as ``file`` or native tool calls are kept opaque).

Writing back builds one request per message; pydantic-ai accepts consecutive requests,
and :func:`merge_requests` joins them into one when a single request is wanted.
Unchanged parts keep every key they had (timestamps, ids, provider details).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compactlens.formats._common import (
    dumps,
    expect_list,
    expect_map,
    expect_str,
    fail,
    loads_or_none,
    make_message,
    original_of,
    parts_and_blocks,
    unknown,
)
from compactlens.formats.base import Encoded, WireFormat
from compactlens.model.messages import (
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

NAME = "pydantic-ai"
PROVIDER = "pydantic-ai"
KINDS = ("request", "response")
REQUEST_PARTS = ("system-prompt", "user-prompt", "tool-return", "retry-prompt")
RESPONSE_PARTS = ("text", "thinking", "tool-call")
MESSAGE_KEYS = frozenset({"kind", "parts"})
BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"part_kind", "content"}),
    "thinking": frozenset({"part_kind", "content"}),
    "tool-call": frozenset({"part_kind", "tool_name", "args", "tool_call_id"}),
    "user-prompt": frozenset({"part_kind", "content"}),
    "system-prompt": frozenset({"part_kind", "content"}),
    "tool-return": frozenset({"part_kind", "tool_name", "content", "tool_call_id", "outcome"}),
}
_ERROR_OUTCOMES = ("failed", "denied", "interrupted", "retried")

Piece = tuple[Part, Mapping[str, Any]]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else dumps(value)


def _user_content(content: Any, block: Mapping[str, Any], source: str, loc: str) -> list[Piece]:
    if isinstance(content, str):
        return [(TextPart(content), block)]
    out: list[Piece] = []
    for j, item in enumerate(expect_list(content, source, loc, "a string or a list")):
        if isinstance(item, str):
            out.append((TextPart(item), block))
            continue
        entry = expect_map(item, source, f"{loc}[{j}]")
        kind = entry.get("kind")
        media = entry.get("media_type")
        mtype = media if isinstance(media, str) else "application/octet-stream"
        if isinstance(entry.get("url"), str):
            out.append((MediaPart(mtype, url=entry["url"]), block))
        elif kind == "binary" and isinstance(entry.get("data"), str):
            out.append((MediaPart(mtype, data=entry["data"]), block))
        else:
            out.append((OpaquePart(PROVIDER, str(kind), dumps(entry)), block))
    return out


def _request_part(part: Mapping[str, Any], source: str, loc: str) -> tuple[Role, list[Piece]]:
    kind = part.get("part_kind")
    if kind == "system-prompt":
        return "system", [
            (TextPart(expect_str(part.get("content"), source, f"{loc}.content")), part)
        ]
    if kind == "user-prompt":
        return "user", _user_content(part.get("content"), part, source, f"{loc}.content")
    if kind in ("tool-return", "retry-prompt"):
        call_id = part.get("tool_call_id")
        name = part.get("tool_name")
        if kind == "retry-prompt" and not isinstance(name, str):
            return "user", [(TextPart(_text(part.get("content"))), part)]
        error = kind == "retry-prompt" or part.get("outcome") in _ERROR_OUTCOMES
        result = ToolResultPart(
            expect_str(call_id, source, f"{loc}.tool_call_id"),
            _text(part.get("content")),
            name=expect_str(name, source, f"{loc}.tool_name"),
            is_error=error,
        )
        return "tool", [(result, part)]
    if not isinstance(kind, str):
        fail("a request part needs a 'part_kind' string", source, f"{loc}.part_kind")
    return "system", [(OpaquePart(PROVIDER, kind, _text(part.get("content", ""))), part)]


def _response_part(part: Mapping[str, Any], source: str, loc: str) -> Part:
    kind = part.get("part_kind")
    if kind == "text":
        return TextPart(expect_str(part.get("content"), source, f"{loc}.content"))
    if kind == "thinking":
        return ReasoningPart(expect_str(part.get("content"), source, f"{loc}.content"))
    if kind == "tool-call":
        args = part.get("args")
        return ToolCallPart(
            id=expect_str(part.get("tool_call_id"), source, f"{loc}.tool_call_id"),
            name=expect_str(part.get("tool_name"), source, f"{loc}.tool_name"),
            arguments="" if args is None else _text(args),
        )
    if not isinstance(kind, str):
        fail("a response part needs a 'part_kind' string", source, f"{loc}.part_kind")
    return OpaquePart(PROVIDER, kind, _text(part.get("content", "")))


def _request(item: Mapping[str, Any], source: str, loc: str) -> list[Message]:
    runs: list[tuple[Role, list[Piece]]] = []
    for j, raw in enumerate(expect_list(item.get("parts"), source, f"{loc}.parts")):
        part = expect_map(raw, source, f"{loc}.parts[{j}]")
        role, pieces = _request_part(part, source, f"{loc}.parts[{j}]")
        if runs and runs[-1][0] == role:
            runs[-1][1].extend(pieces)
        else:
            runs.append((role, list(pieces)))
    if not runs:
        runs.append(("user", []))
    out: list[Message] = []
    for role, pieces in runs:
        wire: Mapping[str, Any] = item
        if len(runs) > 1:
            seen: list[Mapping[str, Any]] = []
            for _, block in pieces:
                if not any(block is s for s in seen):
                    seen.append(block)
            wire = {**item, "parts": seen}
        blocks = [b for _, b in pieces]
        out.append(make_message(role, [p for p, _ in pieces], blocks, wire=wire, fmt=NAME))
    return out


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """Read a pydantic-ai history (JSON mode) into messages."""
    out: list[Message] = []
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        item = expect_map(raw, source, loc)
        kind = item.get("kind")
        if kind == "request":
            out.extend(_request(item, source, loc))
        elif kind == "response":
            parts = expect_list(item.get("parts"), source, f"{loc}.parts")
            maps = [expect_map(p, source, f"{loc}.parts[{j}]") for j, p in enumerate(parts)]
            built = [_response_part(p, source, f"{loc}.parts[{j}]") for j, p in enumerate(maps)]
            out.append(make_message("assistant", built, maps, wire=item, fmt=NAME))
        else:
            unknown("message kind", kind, KINDS, source, f"{loc}.kind")
    return out


# ---------------------------------------------------------------------------- writing


def _keep(built: dict[str, Any], block: Mapping[str, Any] | None) -> dict[str, Any]:
    if block is not None and block.get("part_kind") == built.get("part_kind"):
        return {**block, **built}
    return built


def _args(arguments: str) -> Any:
    loaded = loads_or_none(arguments) if arguments else None
    return loaded if isinstance(loaded, dict) else (arguments or None)


def _media_item(part: MediaPart) -> dict[str, Any]:
    if part.url is not None:
        kind = "image-url" if part.media_type.startswith("image") else "document-url"
        return {"kind": kind, "url": part.url, "media_type": part.media_type}
    return {"kind": "binary", "data": part.data or "", "media_type": part.media_type}


def _response(message: Message, notes: list[tuple[str, str]]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for part, block in parts_and_blocks(message):
        if isinstance(part, TextPart):
            parts.append(_keep({"part_kind": "text", "content": part.text}, block))
        elif isinstance(part, ReasoningPart):
            parts.append(_keep({"part_kind": "thinking", "content": part.text}, block))
        elif isinstance(part, ToolCallPart):
            call = {
                "part_kind": "tool-call",
                "tool_name": part.name,
                "args": _args(part.arguments),
                "tool_call_id": part.id,
            }
            parts.append(_keep(call, block))
        elif isinstance(part, OpaquePart) and block is not None and part.provider == PROVIDER:
            parts.append(dict(block))
        else:
            notes.append(("approximated", f"{part.kind} parts in a response are written as text"))
            parts.append({"part_kind": "text", "content": _text(getattr(part, "text", ""))})
    original = original_of(message)
    head = (
        dict(original)
        if isinstance(original, Mapping) and original.get("kind") == "response"
        else {}
    )
    return {**head, "kind": "response", "parts": parts}


def _request_parts(message: Message, notes: list[tuple[str, str]]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    user: list[Any] = []
    user_block: Mapping[str, Any] | None = None

    def flush() -> None:
        if user:
            content: Any = user[0] if len(user) == 1 and isinstance(user[0], str) else list(user)
            parts.append(_keep({"part_kind": "user-prompt", "content": content}, user_block))
            user.clear()

    for part, block in parts_and_blocks(message):
        if isinstance(part, ToolResultPart):
            flush()
            kind = (
                "retry-prompt"
                if block is not None and block.get("part_kind") == "retry-prompt"
                else "tool-return"
            )
            built = {"part_kind": kind, "tool_name": part.name or "", "content": part.output}
            built["tool_call_id"] = part.call_id
            parts.append(_keep(built, block))
        elif message.role in ("system", "developer") and isinstance(part, TextPart):
            parts.append(_keep({"part_kind": "system-prompt", "content": part.text}, block))
        elif isinstance(part, OpaquePart) and block is not None and part.provider == PROVIDER:
            flush()
            if block.get("part_kind") != "user-prompt":
                parts.append(dict(block))
        elif isinstance(part, TextPart | MediaPart):
            if block is not user_block:
                flush()
            user_block = block
            user.append(part.text if isinstance(part, TextPart) else _media_item(part))
        else:
            notes.append(("approximated", f"{part.kind} parts in a request are written as text"))
            user.append(_text(getattr(part, "text", "")))
    flush()
    return parts


def encode(message: Message) -> Encoded:
    """The request or response item for ``message`` (built from its parts)."""
    notes: list[tuple[str, str]] = []
    if message.role == "assistant":
        return Encoded((_response(message, notes),), tuple(notes))
    original = original_of(message)
    head = (
        dict(original)
        if isinstance(original, Mapping) and original.get("kind") == "request"
        else {}
    )
    item = {**head, "kind": "request", "parts": _request_parts(message, notes)}
    return Encoded((item,), tuple(notes))


def from_message(message: Message) -> dict[str, Any]:
    item: dict[str, Any] = encode(message).items[0]
    return item


def merge_requests(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Join consecutive requests into one (their parts in order; the first one's fields).

    An item joined with none is returned as the very same dict (never changed in place), so
    a caller can tell the items it passed in from the ones made here."""
    out: list[dict[str, Any]] = []
    for item in items:
        if out and item.get("kind") == "request" and out[-1].get("kind") == "request":
            out[-1] = {**out[-1], "parts": [*out[-1]["parts"], *item.get("parts", [])]}
        else:
            out.append(item if type(item) is dict else dict(item))
    return out


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="pydantic-ai message history (ModelMessagesTypeAdapter JSON)",
    encode=encode,
    message_keys=MESSAGE_KEYS,
    block_keys=BLOCK_KEYS,
)

__all__ = ["FORMAT", "NAME", "encode", "from_message", "merge_requests", "to_messages"]
