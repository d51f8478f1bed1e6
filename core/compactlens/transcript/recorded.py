"""The compactions an agent recorded in its own transcript.

Each format with compaction markers has a reader (:data:`COMPACTION_READERS`); for the
others, provider compaction items (Anthropic ``compaction`` blocks, Responses
``compaction`` items) are the record. A Claude Code compaction sub-agent's log
(``agent-acompact-<id>.jsonl``) is one compaction: its last answer is the summary, and the
history it replaced is its own copy or the parent session file's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path, PurePath
from typing import Any

from compactlens.formats import atif as atif_format
from compactlens.formats import claude_code as claude_code_format
from compactlens.formats import codex as codex_format
from compactlens.formats import gemini_cli as gemini_format
from compactlens.formats import inspect_ai as inspect_format
from compactlens.formats import openhands as openhands_format
from compactlens.formats import openhands_v1 as openhands_sdk_format
from compactlens.formats import recording as recording_format
from compactlens.formats.base import WireFormat
from compactlens.model.errors import TranscriptError
from compactlens.model.messages import Message, OpaquePart, summary_form
from compactlens.model.recorded import RecordedCompaction
from compactlens.transcript.container import Container

#: Readers of the compactions a format records (items, messages, holder of the list, source).
CompactionReader = Callable[
    [Sequence[Any], Sequence[Message], Any, str], tuple[RecordedCompaction, ...]
]
COMPACTION_READERS: dict[str, CompactionReader] = {
    claude_code_format.NAME: claude_code_format.compactions,
    codex_format.NAME: codex_format.compactions,
    inspect_format.NAME: inspect_format.compactions,
    openhands_sdk_format.NAME: openhands_sdk_format.compactions,
    openhands_format.NAME: openhands_format.compactions,
    atif_format.NAME: atif_format.compactions,
    gemini_format.NAME: gemini_format.compactions,
    recording_format.NAME: recording_format.compactions,
}
#: Opaque parts that are a provider's compaction item: (provider, part type) -> source label.
COMPACTION_PARTS = {
    ("anthropic", "compaction"): "anthropic.compaction",
    ("openai", "compaction"): "openai.compaction",
    ("otel", "compaction"): "otel.compaction",
}


def _compaction_parts(messages: Sequence[Message]) -> tuple[RecordedCompaction, ...]:
    """Provider compaction items (Anthropic ``compaction`` blocks, Responses ``compaction``)."""
    out: list[RecordedCompaction] = []
    previous = 0
    for i, m in enumerate(messages):
        for p in m.parts:
            if not isinstance(p, OpaquePart):
                continue
            label = COMPACTION_PARTS.get((p.provider, p.type))
            if label is None:
                continue
            replaced = tuple(messages[previous:i])
            out.append(
                RecordedCompaction(
                    index=i,
                    source=label,
                    summary=p.text or None,
                    summary_index=i,
                    replaced=replaced or None,
                    after=(m,),
                    note="" if p.text else "the summary is encrypted or was not streamed in",
                )
            )
            previous = i
            break
    return tuple(out)


#: Claude Code names the log of its compaction sub-agent ``agent-acompact-<id>.jsonl``.
ACOMPACT_PREFIX = "agent-acompact-"


def _parent_session(path: Path) -> Path:
    """``<project>/<session>.jsonl`` for ``<project>/<session>/subagents/<agent>.jsonl``."""
    session_dir = path.parent.parent
    return session_dir.parent / f"{session_dir.name}.jsonl"


def _subagent_compaction(
    messages: Sequence[Message],
    name: str,
    log_path: Path | None,
    load_compactions: Callable[[Path], tuple[RecordedCompaction, ...]],
) -> tuple[RecordedCompaction, ...]:
    """A Claude Code compaction sub-agent's log: its last answer is the summary; the
    history it summarized is the messages before its last prompt, else the compaction of
    the parent session file (next to it) that carries the same summary.

    ``name`` is the log's file name (only its last part is read: a label given with
    uploaded input is display text, never a path). ``log_path`` is where a local caller
    read the log from, or None for input given in memory: only with it is the parent
    session file looked up, and read with ``load_compactions``."""
    if not PurePath(name).name.startswith(ACOMPACT_PREFIX) or len(messages) < 2:
        return ()
    summary = messages[-1].text.strip() if messages[-1].role == "assistant" else ""
    prompt = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if not summary or prompt is None:
        return ()
    replaced: tuple[Message, ...] | None = tuple(messages[:prompt]) or None
    note = "the sub-agent's own copy of the history"
    parent = _parent_session(log_path) if log_path is not None else None
    if replaced is None and parent is not None and parent.is_file():
        try:
            found = load_compactions(parent)
        except TranscriptError:
            found = ()
        match = next((c for c in found if c.summary and summary in c.summary), None)
        if match is not None:
            replaced = match.replaced
            note = f"history recovered from the parent session file {parent.name}"
    if replaced is None and parent is None:
        note = (
            "the replaced history is not in this file (a parent session file is looked up "
            "only for a log read from a path)"
        )
    elif replaced is None:
        note = "the replaced history is neither in this file nor in a parent session file"
    return (
        RecordedCompaction(
            index=len(messages) - 1,
            source="claude_code.compaction_subagent",
            summary=summary,
            summary_index=len(messages) - 1,
            replaced=replaced,
            after=(messages[-1],),
            note=note,
        ),
    )


#: The source label of a summary message no marker accounts for: ``<form>.summary_message``.
SUMMARY_MESSAGE = "summary_message"


def _accounted(found: Sequence[RecordedCompaction], i: int, text: str) -> bool:
    """True when a compaction read from a marker already is the summary at ``i``."""
    for c in found:
        if c.summary_index == i:
            return True
        summary = (c.summary or "").strip()
        if summary and summary in text:
            return True
    return False


def _summary_messages(
    messages: Sequence[Message], found: Sequence[RecordedCompaction]
) -> tuple[RecordedCompaction, ...]:
    """The summary messages (:func:`~compactlens.model.summary_form`) that no recorded
    marker accounts for (an export, a converted file, a format with no marker): each is a
    compaction at its position, its replaced history the messages since the previous
    compaction when there are any besides instructions."""
    ends = sorted(
        {c.index for c in found}
        | {c.summary_index + 1 for c in found if c.summary_index is not None}
    )
    out: list[RecordedCompaction] = []
    previous = 0
    for i, m in enumerate(messages):
        form = summary_form(m)
        if form is None:
            continue
        previous = max([previous, *(e for e in ends if e <= i)])
        if _accounted(found, i, m.text):
            previous = i + 1
            continue
        history = messages[previous:i]
        kept = any(not h.is_system for h in history)
        out.append(
            RecordedCompaction(
                index=i,
                source=f"{form}.{SUMMARY_MESSAGE}",
                summary=m.text,
                summary_index=i,
                replaced=tuple(history) if kept else None,
                after=(m,),
                note="found by the summary it left (the log records no compaction event)"
                + ("" if kept else "; the history it replaced is not in this file"),
            )
        )
        previous = i + 1
    return tuple(out)


def _recorded(
    fmt: WireFormat,
    items: Sequence[Any],
    messages: Sequence[Message],
    container: Container,
    source: str,
    offset: int,
) -> tuple[RecordedCompaction, ...]:
    """The compactions the agent recorded; indices count the leading system message."""
    reader = COMPACTION_READERS.get(fmt.name)
    if reader is None:
        found = _compaction_parts(messages)
    else:
        found = reader(items, messages, container.parent(), source)
    extra = _summary_messages(messages, found)
    if extra:
        found = tuple(sorted((*found, *extra), key=lambda c: c.index))
    if not offset:
        return found
    return tuple(
        dataclasses.replace(
            c,
            index=c.index + offset,
            summary_index=None if c.summary_index is None else c.summary_index + offset,
        )
        for c in found
    )
