"""How the messages sit in a transcript's JSON: the container, found on reading and
rebuilt on writing.

:class:`Container` records the shape (a JSON array, an object holding the list, JSON
lines, one message object) so that dumping gives the same document back;
:func:`_container` finds the message list in a parsed document (and the hints it gives
detection), :func:`_locate` turns a ``messages[k]`` error location into the item's real
place, and :func:`_system_message` reads a system prompt kept outside the list.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from compactlens.formats import anthropic as anthropic_format
from compactlens.formats import canonical as canonical_format
from compactlens.formats import openai_responses as responses_format
from compactlens.formats.base import ConversionWarning, WireFormat
from compactlens.model.errors import TranscriptError
from compactlens.model.messages import Message

#: Keys of an object that may hold the message list, in the order they are tried.
LIST_KEYS = ("messages", "input", "output", "history", "events")

ContainerKind = Literal["list", "object", "jsonl", "single"]
PathKey = str | int


@dataclass(frozen=True, slots=True)
class Container:
    """How the messages sat in the input, so that dumping can rebuild it.

    ``kind`` is ``list`` (a JSON array), ``object`` (the list is at ``path``
    inside ``document``), ``jsonl`` (one item a line; ``line_numbers`` gives
    each item's line) or ``single`` (one message object). ``system_key`` names
    a top-level key that became a system message (``system``,
    ``instructions``). ``passthrough`` holds the items that are not messages,
    with their positions in the item list.
    """

    kind: ContainerKind = "list"
    path: tuple[PathKey, ...] = ()
    document: Any = field(default=None, repr=False)
    system_key: str | None = None
    passthrough: tuple[tuple[int, Any], ...] = field(default=(), repr=False)
    line_numbers: tuple[int, ...] = field(default=(), repr=False)

    def parent(self) -> Mapping[str, Any] | None:
        """The object that holds the message list (``None`` outside ``object``)."""
        if self.kind != "object":
            return None
        node: Any = self.document
        for key in self.path[:-1]:
            node = node[key]
        return node if isinstance(node, Mapping) else None


def _fail(message: str, source: str, location: str = "") -> TranscriptError:
    return TranscriptError(message, source=source, location=location)


def _toolbench_path(doc: Mapping[str, Any]) -> tuple[PathKey, ...] | None:
    answer = doc.get("answer_generation")
    if not isinstance(answer, Mapping):
        return None
    chains = answer.get("train_messages")
    if not isinstance(chains, list) or not chains:
        return None
    if all(isinstance(c, list) for c in chains):
        # The last chain is the whole conversation (one chain per step). Not the longest:
        # a compacted last chain written back must be the one read back.
        return ("answer_generation", "train_messages", len(chains) - 1)
    return ("answer_generation", "train_messages")


def _inspect_log_path(doc: Mapping[str, Any], hints: dict[str, str]) -> tuple[PathKey, ...] | None:
    """The first sample's messages of an Inspect eval log (``eval`` and ``samples``)."""
    samples = doc.get("samples")
    if "eval" not in doc or not isinstance(samples, list) or not samples:
        return None
    first = samples[0]
    if not isinstance(first, Mapping) or not isinstance(first.get("messages"), list):
        return None
    hints["inspect-ai"] = "an Inspect eval log ('eval', 'samples')"
    return ("samples", 0, "messages")


def _container(
    doc: Any, line_numbers: tuple[int, ...] | None, source: str
) -> tuple[Container, Sequence[Any], dict[str, str]]:
    hints: dict[str, str] = {}
    if line_numbers is not None:
        return Container("jsonl", line_numbers=line_numbers), doc, hints
    if isinstance(doc, list):
        return Container("list"), doc, hints
    if not isinstance(doc, Mapping):
        raise _fail(
            f"expected a JSON array or object of messages, got {type(doc).__name__}", source
        )
    path: tuple[PathKey, ...] | None = None
    for key in LIST_KEYS:
        if isinstance(doc.get(key), list):
            path = (key,)
            break
    if path is None:
        path = _toolbench_path(doc)
    if path is None:
        path = _inspect_log_path(doc, hints)
    contents = doc.get("contents")
    if path is None and isinstance(contents, list) and "role" not in doc and "type" not in doc:
        path = ("contents",)  # a Gemini API request: refused by detection, by name
    if path is None and isinstance(doc.get("steps"), list):
        version = doc.get("schema_version")
        if isinstance(version, str) and version.upper().startswith("ATIF"):
            hints["atif"] = f"an ATIF trajectory ('schema_version': {version!r})"
            path = ("steps",)
    if path is None:
        if any(key in doc for key in ("role", "type", "action", "observation", "kind", "step_id")):
            return Container("single", document=doc), [doc], hints
        keys = ", ".join(repr(k) for k in list(doc)[:8])
        raise _fail(
            "no message list found: expected a JSON array, an object with a 'messages' "
            f"(or 'input'/'output'/'history') array, JSON lines or one message object; the "
            "object has "
            f"keys {keys}",
            source,
        )
    node: Any = doc
    for step in path:
        node = node[step]
    system_key = None
    if path == ("messages",) and "system" in doc:
        hints["anthropic"] = "a top-level 'system'"
        system_key = "system"
    if path == ("input",) and "instructions" in doc:
        hints["openai-responses"] = "a top-level 'instructions'"
        system_key = "instructions"
    if path in (("input",), ("output",)) and "messages" not in doc:
        hints.setdefault("openai-responses", f"an '{path[0]}' item list")
    if path == ("history",) and isinstance(doc.get("trajectory"), list):
        hints["swe-agent"] = "a SWE-agent trajectory ('trajectory', 'history')"
    elif path == ("history",):
        hints["openhands-events"] = "a 'history' event list"
    if path == ("messages",) and "projectHash" in doc:
        hints["gemini-cli"] = "a Gemini CLI session ('projectHash')"
    if path == ("messages",) and isinstance(doc.get("events"), list) and "epoch" in doc:
        hints["inspect-ai"] = "an Inspect sample ('epoch', 'events')"
    if doc.get("format") == canonical_format.DOCUMENT_FORMAT:
        hints["canonical"] = "'format': 'compactlens'"
    if doc.get("object") == "response":
        hints["openai-responses"] = "'object': 'response'"
    return Container("object", path=path, document=doc, system_key=system_key), node, hints


def _locate(container: Container, location: str) -> str:
    """Rewrite ``messages[k]...`` as the item's real place (a line, or a JSON path)."""
    match = re.match(r"messages\[(\d+)\]", location)
    if match is None:
        return location
    k = int(match.group(1))
    rest = location[match.end() :].lstrip(".")
    if container.kind == "jsonl" and k < len(container.line_numbers):
        line = f"line {container.line_numbers[k]}"
        return f"{line}: {rest}" if rest else line
    if container.kind == "object":
        head = ""
        for key in container.path:
            head += f"[{key}]" if isinstance(key, int) else (f".{key}" if head else str(key))
        return f"{head}[{k}]" + location[match.end() :]
    if container.kind == "single":
        return rest or "(top level)"
    return location


def _located_note(note: ConversionWarning, container: Container) -> ConversionWarning:
    """A reader's note with the ``messages[k]`` it names rewritten as the item's real place."""
    detail = re.sub(r"messages\[\d+\]", lambda m: _locate(container, m.group(0)), note.detail)
    return dataclasses.replace(note, detail=detail)


def _relocated(exc: TranscriptError, container: Container) -> TranscriptError:
    return TranscriptError(
        exc.message, source=exc.source, location=_locate(container, exc.location)
    )


def _system_message(fmt: WireFormat, container: Container, source: str) -> Message | None:
    parent = container.parent()
    key = container.system_key
    if parent is None or key is None or key not in parent:
        return None
    if fmt.name == anthropic_format.NAME and key == "system":
        return anthropic_format.system_message(parent[key], source)
    if fmt.name == responses_format.NAME and key == "instructions":
        if parent[key] is None:
            return None
        return responses_format.instructions_message(parent[key], source)
    return None
