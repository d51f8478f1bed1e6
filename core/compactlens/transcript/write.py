"""Writing and converting transcripts: wire items, whole documents and JSON text.

In the transcript's own format unchanged messages are written as their original wire
objects, the container keeps its other keys and the items that are not messages go back
to their positions. Converting to another format builds new wire objects and reports,
as :class:`~compactlens.formats.base.ConversionWarning` objects, what could not be
carried over.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from compactlens.formats import FORMATS, get_format
from compactlens.formats import anthropic as anthropic_format
from compactlens.formats import canonical as canonical_format
from compactlens.formats import openai_responses as responses_format
from compactlens.formats.base import (
    META_CONTAINER_KEY,
    META_PART_BLOCKS,
    META_POSITIONS,
    ConversionWarning,
    WireFormat,
)
from compactlens.formats.regroup import own_results_as_text, regroup
from compactlens.model.errors import InputTypeError
from compactlens.model.files import write_atomically
from compactlens.model.messages import Message, ToolCallPart, ToolResultPart
from compactlens.transcript.container import PathKey, _system_message

if TYPE_CHECKING:
    from compactlens.transcript.base import Transcript

#: Formats whose tool results must name their tool (filled in from the call).
NAMED_RESULTS = ("ai-sdk",)
#: Formats whose natural file is JSON lines.
JSONL_FORMATS = ("claude-code", "codex", "gemini-cli")


class _Warnings:
    """Collects notes into warnings grouped by (kind, detail), in first-seen order.

    Field losses are grouped by label (``claude-code message fields``) with the
    union of the field names, so one warning lists them all.
    """

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], list[int]] = {}
        self._fields: dict[str, tuple[list[str], list[int]]] = {}

    def add(self, kind: str, detail: str, index: int | None) -> None:
        indices = self._seen.setdefault((kind, detail), [])
        if index is not None and index not in indices:
            indices.append(index)

    def add_fields(self, label: str, keys: Sequence[str], index: int) -> None:
        names, indices = self._fields.setdefault(label, ([], []))
        names.extend(k for k in keys if k not in names)
        if index not in indices:
            indices.append(index)
        self._seen.setdefault(("dropped", "\0" + label), [])

    def result(self) -> list[ConversionWarning]:
        out: list[ConversionWarning] = []
        for (kind, detail), indices in self._seen.items():
            if detail.startswith("\0"):
                label = detail[1:]
                names, indices = self._fields[label]
                detail = f"{label} {_shown(names)}"
            out.append(ConversionWarning(kind, detail, tuple(indices)))
        return out


def _shown(keys: Sequence[str], limit: int = 6) -> str:
    names = ", ".join(repr(k) for k in keys[:limit])
    return names + (f" and {len(keys) - limit} more" if len(keys) > limit else "")


def _lost_fields(message: Message, index: int, target: WireFormat, out: _Warnings) -> None:
    """Report the source-format fields of a message that the conversion leaves behind."""
    source_fmt = FORMATS.get(message.wire_format or "")
    if source_fmt is None or source_fmt.name == target.name:
        return
    wires = message.wire if isinstance(message.wire, tuple) else (message.wire,)
    extra: list[str] = []
    for wire in wires:
        if isinstance(wire, Mapping) and not message.meta.get(META_CONTAINER_KEY):
            for key in wire:
                if key not in source_fmt.message_keys and key not in extra:
                    extra.append(str(key))
            inner = wire.get("message") if source_fmt.name == "claude-code" else None
            if isinstance(inner, Mapping):
                for key in inner:
                    if key not in anthropic_format.MESSAGE_KEYS and f"message.{key}" not in extra:
                        extra.append(f"message.{key}")
    if extra:
        out.add_fields(f"{source_fmt.name} message fields", extra, index)
    blocks = message.meta.get(META_PART_BLOCKS) if message.meta else None
    seen: set[int] = set()
    for block in blocks if isinstance(blocks, tuple) else ():
        if not isinstance(block, Mapping) or id(block) in seen:
            continue
        seen.add(id(block))
        kind = block.get("type")
        known = source_fmt.block_keys.get(str(kind))
        if known is None:
            continue
        lost = [str(k) for k in block if k not in known]
        if lost:
            out.add_fields(f"{source_fmt.name} '{kind}' fields", lost, index)


def _with_tool_names(messages: Sequence[Message]) -> list[Message]:
    """Fill missing tool names of results from their calls (some formats require them)."""
    names: dict[str, str] = {}
    out: list[Message] = []
    for m in messages:
        for p in m.parts:
            if isinstance(p, ToolCallPart):
                names.setdefault(p.id, p.name)
        if any(
            isinstance(p, ToolResultPart) and p.name is None and p.call_id in names for p in m.parts
        ):
            parts = tuple(
                dataclasses.replace(p, name=names[p.call_id])
                if isinstance(p, ToolResultPart) and p.name is None and p.call_id in names
                else p
                for p in m.parts
            )
            m = dataclasses.replace(m, parts=parts)
        out.append(m)
    return out


def _is_outside_system(message: Message, target: WireFormat, same: bool, leading: bool) -> bool:
    """True when a system message goes to a top-level key rather than the list."""
    if same and message.meta.get(META_CONTAINER_KEY):
        return True
    return target.name == anthropic_format.NAME and leading and message.is_system


def _to_wire(
    t: Transcript, target: WireFormat
) -> tuple[list[Any], list[ConversionWarning], list[Message]]:
    """Items of the list, warnings, and the system messages that go outside the list."""
    same = target.name == t.format
    messages = list(t.messages)
    starts = list(range(len(messages)))
    warnings = _Warnings()
    if not same:
        messages, notes = own_results_as_text(messages, target.name)
        for kind, detail, at in notes:
            warnings.add(kind, detail, at)
        messages, starts = regroup(messages, target.name)
    if not same and target.name in NAMED_RESULTS:
        messages = _with_tool_names(messages)
    outside: list[Message] = []
    entries: list[tuple[tuple[int, int, int], Any]] = []
    ordered = True
    last_position = -1
    seq = 0
    leading = True
    for position, m in enumerate(messages):
        index = starts[position]
        leading = leading and m.is_system
        if _is_outside_system(m, target, same, leading):
            outside.append(m)
            if not same and target.name == anthropic_format.NAME:
                warnings.add("moved", "system messages to the top-level 'system'", index)
            continue
        positions = m.meta.get(META_POSITIONS) if m.meta else None
        reuse = m.wire is not None and m.wire_format == target.name
        if reuse:
            wires = m.wire if isinstance(m.wire, tuple) else (m.wire,)
            if isinstance(positions, tuple) and len(positions) == len(wires):
                ordered = False
                for pos, wire in zip(positions, wires, strict=True):
                    entries.append(((pos, 0, seq), wire))
                    seq += 1
                last_position = max(last_position, *positions)
                continue
            for wire in wires:
                entries.append(((last_position, 1, seq), wire))
                seq += 1
            continue
        if m.is_system and target.name == anthropic_format.NAME and not leading:
            warnings.add(
                "approximated", "system message inside the conversation sent as user", index
            )
        encoded = target.encode_message(m)
        for kind, detail in encoded.notes:
            warnings.add(kind, detail, index)
        _lost_fields(m, index, target, warnings)
        for item in encoded.items:
            entries.append(((last_position, 1, seq), item))
            seq += 1
    if same and t.container.passthrough:
        ordered = False
        for pos, item in t.container.passthrough:
            entries.append(((pos, 0, seq), item))
            seq += 1
    if not same and t.container.passthrough:
        warnings.add(
            "dropped",
            f"{len(t.container.passthrough)} {t.format} items that are not messages",
            None,
        )
    if not ordered:
        entries.sort(key=lambda e: e[0])
    return [item for _, item in entries], warnings.result(), outside


def _set_path(node: Any, path: Sequence[PathKey], value: Any) -> Any:
    """A copy of ``node`` with ``value`` at ``path`` (only the nodes on the path are copied)."""
    if not path:
        return value
    key = path[0]
    if isinstance(node, Mapping) and isinstance(key, str):
        copy = dict(node)
        copy[key] = _set_path(node[key], path[1:], value)
        return copy
    if isinstance(node, list) and isinstance(key, int):
        items = list(node)
        items[key] = _set_path(node[key], path[1:], value)
        return items
    raise InputTypeError(f"bad container path {path!r}")


def _system_document_value(
    outside: Sequence[Message], target: WireFormat
) -> tuple[Any, list[tuple[str, str]]]:
    if target.name == responses_format.NAME:
        if (
            len(outside) == 1
            and outside[0].wire_format == target.name
            and outside[0].wire is not None
        ):
            return outside[0].wire, []
        return "\n".join(m.text for m in outside), []
    return anthropic_format.system_value(outside)


def _to_document(t: Transcript, target: WireFormat) -> tuple[Any, list[ConversionWarning]]:
    items, warnings, outside = _to_wire(t, target)
    container = t.container
    system_value: Any = None
    if outside:
        system_value, notes = _system_document_value(outside, target)
        warnings.extend(ConversionWarning(k, d) for k, d in notes)
    if target.name == t.format:
        if container.kind == "object":
            doc = _set_path(container.document, container.path, items)
            key = container.system_key
            if key is not None and isinstance(doc, dict):
                if outside:
                    parent = doc
                    parent[key] = system_value
                elif key in doc and _system_message(target, container, t.source) is not None:
                    del doc[key]
            elif outside and isinstance(doc, dict) and target.name == anthropic_format.NAME:
                doc["system"] = system_value
            return doc, warnings
        if container.kind == "single" and len(items) == 1 and not outside:
            return items[0], warnings
        if outside and target.name == anthropic_format.NAME:
            return {"system": system_value, "messages": items}, warnings
        return items, warnings
    if container.kind == "object":
        holder: Mapping[str, Any] = container.parent() or {}
        kept = [
            str(k)
            for k in holder
            if k != container.path[-1] and k != container.system_key and k != "format"
        ]
        if kept:
            warnings.append(
                ConversionWarning(
                    "dropped",
                    f"request fields {_shown(kept)} (they belong to the {t.format} API)",
                )
            )
    if target.name == anthropic_format.NAME and outside:
        return {"system": system_value, "messages": items}, warnings
    if target.name == canonical_format.NAME:
        return canonical_format.document(items), warnings
    return items, warnings


def _is_jsonl(t: Transcript, target: WireFormat) -> bool:
    if target.name == t.format:
        single_event = t.container.kind == "single" and target.name in JSONL_FORMATS
        return t.container.kind == "jsonl" or single_event
    return target.name in JSONL_FORMATS


def _json_text(value: Any, *, indent: int | None) -> str:
    separators = (",", ":") if indent is None else None
    text = json.dumps(
        value, ensure_ascii=False, indent=indent, separators=separators, allow_nan=False
    )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escape them so the text is valid UTF-8
        text = json.dumps(
            value, ensure_ascii=True, indent=indent, separators=separators, allow_nan=False
        )
    return text


def dump_transcript(
    transcript: Transcript,
    path: str | os.PathLike[str] | None = None,
    *,
    format: str | None = None,
    indent: int = 2,
    on_warning: Callable[[ConversionWarning], None] | None = None,
) -> str:
    """The transcript as JSON text (JSON lines for Claude Code), written to ``path`` if given.

    In the transcript's own format the result is JSON-equal to what was read.
    ``format`` converts; each :class:`ConversionWarning` is passed to ``on_warning``.
    The file at ``path`` is replaced atomically (a temporary file in its folder, renamed
    over it): a write that fails raises ``OSError`` and leaves the file as it was, so
    ``path`` may be the file the transcript was read from.
    """
    target = get_format(format or transcript.format)
    document, warnings = _to_document(transcript, target)
    if on_warning is not None:
        for w in warnings:
            on_warning(w)
    if _is_jsonl(transcript, target):
        lines = document if isinstance(document, list) else [document]
        text = "".join(_json_text(item, indent=None) + "\n" for item in lines)
    else:
        text = _json_text(document, indent=indent) + "\n"
    if path is not None:
        write_atomically(path, text)
    return text
