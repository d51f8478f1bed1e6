"""Rebuild message structure when converting out of a one-item-per-message format.

The Responses API writes one item per message: an assistant turn with text and two
tool calls is three items (``message``, ``function_call``, ``function_call``), read
as three messages. Formats whose assistant message holds text and tool calls
together (Chat Completions, Anthropic, AI SDK, LangChain, Agent Framework) get them
back as one message, as the turn was before it went through Responses items: the
round trip openai-chat -> openai-responses -> openai-chat keeps the message count.
Formats whose one message holds every result of a turn (Anthropic's user message,
the AI SDK's tool message) get consecutive result items back as one message.

Only what the items allow is merged: reasoning, then text, then tool calls, in that
order (text after a call starts a new message, as it would be in the target).

The other way round, an AI SDK assistant message holding a provider-executed tool call
and its result (web search) has no equivalent elsewhere: a client tool call there would
need a result message after it. Converted to any other format (but the canonical one),
the call and its result become text in that message, and a note says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compactlens.formats.base import META_PART_BLOCKS
from compactlens.model.messages import (
    EMPTY_META,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

#: Formats that write one item per message (their turns are split).
SPLIT_FORMATS = frozenset({"openai-responses"})
#: Targets whose assistant message holds reasoning, text and tool calls together.
TURN_TARGETS = frozenset({"openai-chat", "anthropic", "ai-sdk", "langchain", "agent-framework"})
#: Targets whose one message holds all the tool results of a turn.
RESULT_TARGETS = frozenset({"anthropic", "ai-sdk"})
#: Targets that hold a tool result inside an assistant message (provider-executed tools).
OWN_RESULT_TARGETS = frozenset({"ai-sdk", "canonical"})
#: A note: (kind, detail, index of the message in the transcript being converted).
Note = tuple[str, str, int]

_STAGE_REASONING, _STAGE_TEXT, _STAGE_CALLS = 0, 1, 2


def _stage(part: Part) -> int | None:
    """Where a part sits in an assistant turn; ``None`` for parts that are not merged."""
    if isinstance(part, ReasoningPart):
        return _STAGE_REASONING
    if isinstance(part, OpaquePart) and part.type == "encrypted_reasoning":
        return _STAGE_REASONING
    if isinstance(part, TextPart):
        return _STAGE_TEXT
    if isinstance(part, ToolCallPart):
        return _STAGE_CALLS
    return None


def _turn_stages(message: Message) -> tuple[int, int] | None:
    """(first, last) stage of a mergeable assistant message, else ``None``."""
    if message.role != "assistant" or message.wire_format not in SPLIT_FORMATS:
        return None
    stages = [_stage(p) for p in message.parts]
    if not stages or None in stages:
        return None
    known = [s for s in stages if s is not None]
    if known != sorted(known):
        return None
    return known[0], known[-1]


def _is_results(message: Message) -> bool:
    return (
        message.role == "tool"
        and message.wire_format in SPLIT_FORMATS
        and bool(message.parts)
        and isinstance(message.parts[0], ToolResultPart)
    )


def _merged(group: Sequence[Message]) -> Message:
    if len(group) == 1:
        return group[0]
    parts: list[Part] = []
    blocks: list[Any] = []
    wires: list[Any] = []
    for m in group:
        parts.extend(m.parts)
        own = m.meta.get(META_PART_BLOCKS) if m.meta else None
        blocks.extend(own if isinstance(own, tuple) else [None] * len(m.parts))
        wires.extend(m.wire if isinstance(m.wire, tuple) else [m.wire])
    meta = {META_PART_BLOCKS: tuple(blocks)} if any(b is not None for b in blocks) else EMPTY_META
    return Message(
        role=group[0].role,
        parts=tuple(parts),
        wire=tuple(wires),
        wire_format=group[0].wire_format,
        meta=meta,
    )


def _joins(group: Sequence[Message], m: Message, target: str) -> bool:
    """True when ``m`` continues the turn held by ``group``."""
    last = group[-1]
    if target in RESULT_TARGETS and _is_results(m) and _is_results(last):
        return True
    if target not in TURN_TARGETS:
        return False
    before, now = _turn_stages(last), _turn_stages(m)
    if before is None or now is None:
        return False
    return before[1] <= now[0] and not (before[1] == now[0] == _STAGE_TEXT)


def _exchange_as_text(message: Message) -> Message:
    """Provider-executed calls and their results of an assistant message, as text."""
    answered = {p.call_id for p in message.parts if isinstance(p, ToolResultPart)}
    names = {p.id: p.name for p in message.parts if isinstance(p, ToolCallPart)}
    parts: list[Part] = []
    for p in message.parts:
        if isinstance(p, ToolCallPart) and p.id in answered:
            call = f"{p.name} {p.arguments}" if p.arguments else p.name
            parts.append(TextPart(f"[{call}]"))
        elif isinstance(p, ToolResultPart):
            name = p.name or names.get(p.call_id) or "tool"
            parts.append(TextPart(f"[{name} result] {p.output}"))
        else:
            parts.append(p)
    return Message(role=message.role, parts=tuple(parts), name=message.name)


def own_results_as_text(
    messages: Sequence[Message], target: str
) -> tuple[list[Message], list[Note]]:
    """Assistant messages holding tool results, with those exchanges as text for ``target``."""
    if target in OWN_RESULT_TARGETS:
        return list(messages), []
    out: list[Message] = []
    notes: list[Note] = []
    for i, m in enumerate(messages):
        if m.role == "assistant" and m.tool_results:
            out.append(_exchange_as_text(m))
            notes.append(("approximated", "provider-executed tool call and result as text", i))
        else:
            out.append(m)
    return out, notes


def regroup(messages: Sequence[Message], target: str) -> tuple[list[Message], list[int]]:
    """The messages with split turns merged for ``target``, and where each one started.

    The second list gives, for each returned message, the index of its first message
    in ``messages`` (warnings name positions of the transcript being converted).
    Messages of other formats, and targets that keep one item per message, are
    returned as they are.
    """
    out: list[Message] = []
    starts: list[int] = []
    group: list[Message] = []
    for i, m in enumerate(messages):
        if group and _joins(group, m, target):
            group.append(m)
            continue
        if group:
            out.append(_merged(group))
        group = [m]
        starts.append(i)
    if group:
        out.append(_merged(group))
    return out, starts


__all__ = [
    "OWN_RESULT_TARGETS",
    "RESULT_TARGETS",
    "SPLIT_FORMATS",
    "TURN_TARGETS",
    "own_results_as_text",
    "regroup",
]
