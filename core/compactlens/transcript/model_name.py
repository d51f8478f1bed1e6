"""The model a log names, read where each agent writes it.

Codex writes it in ``turn_context`` records (``payload.model``), Claude Code on each
assistant record (``message.model``), Gemini CLI and Inspect AI on model messages
(``model``), LangChain in ``response_metadata.model_name``, OpenHands V0 evaluation
outputs in ``metadata.llm_config.model``, Inspect AI logs in ``eval.model``, ATIF
trajectories in ``agent.model_name`` and request or response bodies in ``model``. The
latest one named wins: records are read from the end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from compactlens.model.messages import Message

#: Model names that are not a model (Claude Code's placeholder for its own notes).
NOT_MODELS = frozenset({"<synthetic>", "unknown"})


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip() and value not in NOT_MODELS:
        return value.strip()
    return None


def _at(node: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def record_model(record: Any) -> str | None:
    """The model one record names, if any."""
    if not isinstance(record, Mapping):
        return None
    if record.get("type") == "turn_context":
        return _text(_at(record, "payload", "model"))
    for path in (
        ("model",),
        ("message", "model"),
        ("response_metadata", "model_name"),
        ("data", "response_metadata", "model_name"),
        ("data", "response_metadata", "model"),
    ):
        found = _text(_at(record, *path))
        if found is not None:
            return found
    return None


def document_model(document: Any) -> str | None:
    """The model a whole document names (a request body, an evaluation output)."""
    for path in (
        ("model",),
        ("eval", "model"),
        ("metadata", "llm_config", "model"),
        ("metadata", "model"),
        ("agent", "model_name"),
    ):
        found = _text(_at(document, *path))
        if found is not None:
            return found
    return None


def _wires(messages: Sequence[Message]) -> Iterable[Any]:
    for m in reversed(messages):
        wire = m.wire if m.wire is not None else m.origin
        yield from reversed(wire) if isinstance(wire, tuple) else (wire,)


def named_model(
    messages: Sequence[Message], passthrough: Sequence[tuple[int, Any]], document: Any
) -> str | None:
    """The latest model the messages' records, the other records or the document name."""
    for record in _wires(messages):
        found = record_model(record)
        if found is not None:
            return found
    for _, record in reversed(passthrough):
        found = record_model(record)
        if found is not None:
            return found
    return document_model(document) if isinstance(document, Mapping) else None
