"""OpenHands software-agent-sdk (V1) event streams: a list of events, each with a ``kind``.

``SystemPromptEvent`` (``system_prompt``), ``MessageEvent`` (``llm_message``: role,
content parts, tool calls, reasoning), ``ActionEvent`` (one tool call: ``tool_call``
with ``id``, ``name``, ``arguments``; ``thought``; the actions of one model response
share ``llm_response_id`` and become one assistant message), ``ObservationEvent``,
``UserRejectObservation`` and ``AgentErrorEvent`` (tool results, by ``tool_call_id``)
and ``CondensationSummaryEvent`` (a user message marked as a summary) become messages.
Other events (``Condensation``, ``CondensationRequest``, ``ConversationStateUpdateEvent``,
``PauseEvent``...) are passed through at their positions. A ``Condensation``
(``forgotten_event_ids``, ``summary``, ``summary_offset``) is the agent's compaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactlens.formats._common import (
    CALL_AS_TEXT,
    NO_RESULT,
    call_as_text,
    dumps,
    expect_list,
    expect_map,
    expect_str,
    fail,
    make_message,
    original_of,
)
from compactlens.formats._recorded import first_positions, message_at, opt_text, text_of_content
from compactlens.formats.base import META_POSITIONS, Encoded, Split, WireFormat
from compactlens.model.messages import (
    META_SUMMARY_FORM,
    Message,
    Part,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compactlens.model.recorded import RecordedCompaction

#: The summary form of condensation summaries (:data:`compactlens.model.META_SUMMARY_FORM`).
SUMMARY_FORM = "openhands"
NAME = "openhands-sdk"
RESULT_KINDS = ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent")
MESSAGE_KINDS = (
    "SystemPromptEvent",
    "MessageEvent",
    "ActionEvent",
    "CondensationSummaryEvent",
    *RESULT_KINDS,
)
#: Kinds only V1 streams have (detection).
KNOWN_KINDS = frozenset(
    {
        *MESSAGE_KINDS,
        "Condensation",
        "CondensationRequest",
        "ConversationStateUpdateEvent",
        "PauseEvent",
        "ConversationErrorEvent",
    }
)
MESSAGE_KEYS = frozenset({"kind", "source", "llm_message", "tool_call", "thought", "observation"})
_ROLES: dict[str, Role] = {"system": "system", "user": "user", "assistant": "assistant"}


@dataclass
class _Builder:
    role: Role
    response_id: str | None = None
    parts: list[Part] = field(default_factory=list)
    events: list[Mapping[str, Any]] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    summary: bool = False  # the agent's condensation summary

    def build(self) -> Message:
        wire: Any = self.events[0] if len(self.events) == 1 else tuple(self.events)
        meta: dict[str, Any] = {META_POSITIONS: tuple(self.positions)}
        if self.summary:
            meta[META_SUMMARY_FORM] = SUMMARY_FORM
        return make_message(
            self.role, self.parts, [None] * len(self.parts), wire=wire, fmt=NAME, meta=meta
        )


def _texts(value: Any, source: str, loc: str) -> list[Part]:
    if value is None:
        return []
    if isinstance(value, str):
        return [TextPart(value)] if value else []
    if isinstance(value, Mapping):
        value = [value]
    parts: list[Part] = []
    for j, raw in enumerate(expect_list(value, source, loc, "text content")):
        block = expect_map(raw, source, f"{loc}[{j}]", "a content object")
        if block.get("type", "text") == "text":
            parts.append(TextPart(expect_str(block.get("text"), source, f"{loc}[{j}].text")))
    return parts


def _call(event: Mapping[str, Any], source: str, loc: str) -> ToolCallPart:
    call = expect_map(event.get("tool_call"), source, f"{loc}.tool_call", "a tool call object")
    call_id = expect_str(call.get("id"), source, f"{loc}.tool_call.id")
    name = expect_str(call.get("name"), source, f"{loc}.tool_call.name")
    args = call.get("arguments", "")
    return ToolCallPart(call_id, name, args if isinstance(args, str) else dumps(args))


def _observation_text(event: Mapping[str, Any]) -> str:
    kind = event.get("kind")
    if kind == "AgentErrorEvent":
        return str(event.get("error") or "")
    if kind == "UserRejectObservation":
        return f"Action rejected: {event.get('rejection_reason') or 'User rejected the action'}"
    obs = event.get("observation")
    if not isinstance(obs, Mapping):
        return ""
    for key in ("content", "output", "text", "error"):
        text = text_of_content(obs.get(key))
        if text:
            return text
    return ""


def _message_event(event: Mapping[str, Any], source: str, loc: str) -> _Builder:
    msg = expect_map(event.get("llm_message"), source, f"{loc}.llm_message")
    role = msg.get("role")
    if role not in _ROLES:
        fail(
            f"unknown role {role!r}; expected one of system, user, assistant",
            source,
            f"{loc}.llm_message.role",
        )
    b = _Builder(_ROLES[str(role)])
    reasoning = msg.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        b.parts.append(ReasoningPart(reasoning))
    b.parts.extend(_texts(msg.get("content"), source, f"{loc}.llm_message.content"))
    return b


def split(items: Sequence[Any], source: str = "<input>") -> Split:
    """Messages of the LLM-visible events; the others pass through at their positions."""
    builders: list[_Builder] = []
    passthrough: list[tuple[int, Any]] = []
    action: _Builder | None = None
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        event = expect_map(raw, source, loc, "an event object")
        kind = event.get("kind")
        if not isinstance(kind, str):
            fail("a V1 event needs a string 'kind'", source, f"{loc}.kind")
        if kind not in MESSAGE_KINDS:
            passthrough.append((i, event))
            continue
        if kind == "ActionEvent":
            rid = opt_text(event.get("llm_response_id"))
            if action is None or rid is None or action.response_id != rid:
                action = _Builder("assistant", rid)
                reasoning = event.get("reasoning_content")
                if isinstance(reasoning, str) and reasoning:
                    action.parts.append(ReasoningPart(reasoning))
                action.parts.extend(_texts(event.get("thought"), source, f"{loc}.thought"))
                builders.append(action)
            action.parts.append(_call(event, source, loc))
            target = action
        else:
            if kind in RESULT_KINDS:
                call_id = expect_str(event.get("tool_call_id"), source, f"{loc}.tool_call_id")
                name = event.get("tool_name")
                result = ToolResultPart(
                    call_id,
                    _observation_text(event),
                    name=name if isinstance(name, str) else None,
                    is_error=kind == "AgentErrorEvent",
                )
                target = _Builder("tool", parts=[result])
            elif kind == "SystemPromptEvent":
                target = _Builder(
                    "system",
                    parts=_texts(event.get("system_prompt"), source, f"{loc}.system_prompt"),
                )
            elif kind == "CondensationSummaryEvent":
                text = expect_str(event.get("summary"), source, f"{loc}.summary")
                target = _Builder("user", parts=[TextPart(text)], summary=True)
            else:
                target = _message_event(event, source, loc)
                action = None
            builders.append(target)
        target.events.append(event)
        target.positions.append(i)
    if items and not builders:
        fail("no message, action or observation events", source, "messages[0]")
    return Split([b.build() for b in builders], passthrough)


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """The messages of a V1 event stream (other events are skipped)."""
    return split(items, source).messages


def _text_content(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def encode(message: Message) -> Encoded:
    """Events for a new or changed message (a changed merged action is rebuilt per call)."""
    notes: list[tuple[str, str]] = []
    text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
    thinking = "\n".join(p.text for p in message.parts if isinstance(p, ReasoningPart))
    calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
    results = [p for p in message.parts if isinstance(p, ToolResultPart)]
    if calls and message.role != "assistant" and not results:
        notes.append(CALL_AS_TEXT)  # only the agent acts: a call elsewhere is text
        text = "\n".join([text, *map(call_as_text, calls)]).lstrip("\n")
        calls = []
    if message.role == "tool" and not results:
        notes.append(NO_RESULT)
    original = original_of(message) if message.wire_format == NAME else None
    first = original[0] if isinstance(original, tuple) and original else original
    rid = first.get("llm_response_id") if isinstance(first, Mapping) else None
    events: list[dict[str, Any]] = []
    if results:
        for r in results:
            event: dict[str, Any] = {
                "kind": "AgentErrorEvent" if r.is_error else "ObservationEvent",
                "source": "agent" if r.is_error else "environment",
                "tool_name": r.name or "tool",
                "tool_call_id": r.call_id,
            }
            if r.is_error:
                event["error"] = r.output
            else:
                event["observation"] = {
                    "kind": "TextObservation",
                    "content": _text_content(r.output),
                }
            events.append(event)
        notes.append(("approximated", "tool results written as generic observations"))
    elif calls:
        for k, c in enumerate(calls):
            events.append(
                {
                    "kind": "ActionEvent",
                    "source": "agent",
                    "thought": _text_content(text) if k == 0 and text else [],
                    "tool_name": c.name,
                    "tool_call_id": c.id,
                    "tool_call": {
                        "id": c.id,
                        "name": c.name,
                        "arguments": c.arguments,
                        "origin": "completion",
                    },
                    "llm_response_id": rid if isinstance(rid, str) else f"resp-{calls[0].id}",
                    "action": None,
                }
            )
            if k == 0 and thinking:
                events[-1]["reasoning_content"] = thinking
    elif message.role == "system" or message.role == "developer":
        events.append(
            {
                "kind": "SystemPromptEvent",
                "source": "agent",
                "system_prompt": {"type": "text", "text": text},
                "tools": [],
            }
        )
    else:
        role = "assistant" if message.role == "assistant" else "user"
        llm: dict[str, Any] = {"role": role, "content": _text_content(text) if text else []}
        if thinking:
            llm["reasoning_content"] = thinking
        events.append(
            {
                "kind": "MessageEvent",
                "source": "agent" if role == "assistant" else "user",
                "llm_message": llm,
            }
        )
    return Encoded(tuple(events), tuple(notes))


def from_message(message: Message) -> dict[str, Any]:
    """The first event of a new or changed message."""
    item: dict[str, Any] = encode(message).items[0]
    return item


def compactions(
    items: Sequence[Any], messages: Sequence[Message], document: Any = None, source: str = ""
) -> tuple[RecordedCompaction, ...]:
    """``Condensation`` events. ``replaced`` is the history the agent had (earlier
    condensations applied), ``after`` that history without the forgotten events and with
    the summary at ``summary_offset``."""
    starts = first_positions(messages)
    ids_at: dict[str, int] = {}
    for n, m in enumerate(messages):
        wires = m.wire if isinstance(m.wire, tuple) else (m.wire,)
        for w in wires:
            if isinstance(w, Mapping) and isinstance(w.get("id"), str):
                ids_at[w["id"]] = n
    out: list[RecordedCompaction] = []
    forgotten: set[int] = set()
    for pos, event in enumerate(items):
        if not isinstance(event, Mapping) or event.get("kind") != "Condensation":
            continue
        index = message_at(starts, pos)
        ids = event.get("forgotten_event_ids")
        gone = (
            sorted({ids_at[i] for i in ids if isinstance(i, str) and i in ids_at})
            if isinstance(ids, list)
            else []
        )
        before = [m for n, m in enumerate(messages[:index]) if n not in forgotten]
        forgotten.update(gone)
        summary = opt_text(event.get("summary"))
        view = [m for n, m in enumerate(messages[:index]) if n not in forgotten]
        if summary:
            offset = event.get("summary_offset")
            at = offset if isinstance(offset, int) and 0 <= offset <= len(view) else len(view)
            view.insert(at, Message(role="user", parts=(TextPart(summary),)))
        out.append(
            RecordedCompaction(
                index=index,
                source="openhands.condensation",
                summary=summary,
                replaced=tuple(before) if gone else None,
                after=tuple(view),
                timestamp=opt_text(event.get("timestamp")),
                kind="summary" if summary else "trim",
                note=f"forgot {len(gone)} of the {len(before)} messages the agent had"
                if gone
                else "the forgotten events are not in this file",
            )
        )
    return tuple(out)


FORMAT = WireFormat(
    name=NAME,
    to_messages=to_messages,
    from_message=from_message,
    description="OpenHands software-agent-sdk (V1) events",
    encode=encode,
    split=split,
    message_keys=MESSAGE_KEYS,
)
