"""OpenHands (V0) event streams: the ``history`` of an evaluation output, or a list of events.

Events are actions and observations. ``system`` and ``message`` actions are
system, user and assistant messages. An action with ``tool_call_metadata`` is
a tool call of the model response it came from: the actions of one response
(one per call it made) are one assistant message, its text and calls read from
``model_response`` and its ``wire`` the tuple of the events. An observation
with ``tool_call_metadata`` is a tool result (its ``content``). A ``condense``
observation (a condenser's summary) is a user message marked as a summary. Other events
(``recall``, errors without a tool call, state changes) are not messages and
are passed through at their positions.

New or changed messages are written as ``message``/``system`` actions, tool
calls as actions carrying a synthetic model response (the action name comes
from the tool name, ``call_tool_mcp`` for unknown tools), tool results as
``run`` observations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactlens.formats._common import (
    CALL_AS_TEXT,
    call_as_text,
    dumps,
    expect_map,
    expect_str,
    fail,
    loads_or_none,
    make_message,
    opt_str,
    original_of,
)
from compactlens.formats._recorded import first_positions, message_at, opt_int, opt_text
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
#: The observation that holds a condenser's summary (``AgentCondensationObservation``).
CONDENSE = "condense"
NAME = "openhands-events"
MESSAGE_KEYS = frozenset(
    {"source", "action", "observation", "message", "args", "content", "tool_call_metadata"}
)


@dataclass
class _Builder:
    role: Role
    response_id: str | None
    parts: list[Part] = field(default_factory=list)
    events: list[Mapping[str, Any]] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    remaining: list[Any] = field(default_factory=list)  # call ids not yet seen as actions
    summary: bool = False  # the agent's condensation summary

    def build(self) -> Message:
        wire: Any = self.events[0] if len(self.events) == 1 else tuple(self.events)
        meta: dict[str, Any] = {META_POSITIONS: tuple(self.positions)}
        if self.summary:
            meta[META_SUMMARY_FORM] = SUMMARY_FORM
        return make_message(
            self.role, self.parts, [None] * len(self.parts), wire=wire, fmt=NAME, meta=meta
        )


def _text(event: Mapping[str, Any], source: str, loc: str) -> str:
    args = event.get("args")
    if isinstance(args, Mapping) and isinstance(args.get("content"), str):
        return str(args["content"])
    return opt_str(event.get("message"), source, f"{loc}.message") or ""


def _response_parts(
    event: Mapping[str, Any], meta: Mapping[str, Any], source: str, loc: str
) -> tuple[str | None, list[Part]]:
    """The response id and the parts (text, reasoning, calls) of the model response."""
    response = meta.get("model_response")
    if isinstance(response, Mapping):
        choices = response.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, Mapping) else None
        if isinstance(message, Mapping):
            rid = response.get("id")
            parts: list[Part] = []
            reasoning = message.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                parts.append(ReasoningPart(reasoning))
            content = message.get("content")
            if isinstance(content, str) and content:
                parts.append(TextPart(content))
            calls = message.get("tool_calls")
            for j, call in enumerate(calls if isinstance(calls, list) else []):
                cloc = f"{loc}.tool_call_metadata.model_response.choices[0].message.tool_calls[{j}]"
                entry = expect_map(call, source, cloc)
                fn = expect_map(entry.get("function"), source, f"{cloc}.function")
                args = fn.get("arguments")
                parts.append(
                    ToolCallPart(
                        expect_str(entry.get("id"), source, f"{cloc}.id"),
                        expect_str(fn.get("name"), source, f"{cloc}.function.name"),
                        args if isinstance(args, str) else ("" if args is None else dumps(args)),
                    )
                )
            return (rid if isinstance(rid, str) else None), parts
    # No model response: the call as the event describes it.
    call_id = expect_str(meta.get("tool_call_id"), source, f"{loc}.tool_call_metadata.tool_call_id")
    name = expect_str(meta.get("function_name"), source, f"{loc}.tool_call_metadata.function_name")
    args = event.get("args")
    thought = args.get("thought") if isinstance(args, Mapping) else None
    parts = [TextPart(thought)] if isinstance(thought, str) and thought else []
    shown = {k: v for k, v in args.items() if k != "thought"} if isinstance(args, Mapping) else {}
    parts.append(ToolCallPart(call_id, name, dumps(shown)))
    return None, parts


def split(items: Sequence[Any], source: str = "<input>") -> Split:
    """Messages (one per model response for tool calls) and the other events."""
    builders: list[_Builder] = []
    passthrough: list[tuple[int, Any]] = []
    by_response: dict[str, _Builder] = {}
    for i, raw in enumerate(items):
        loc = f"messages[{i}]"
        event = expect_map(raw, source, loc, "an event object")
        src = event.get("source")
        action = event.get("action")
        observation = event.get("observation")
        if not isinstance(src, str) or (action is None and observation is None):
            fail("an event needs a 'source' and an 'action' or 'observation'", source, loc)
        meta = event.get("tool_call_metadata")
        if isinstance(meta, Mapping) and action is not None:
            rid, parts = _response_parts(event, meta, source, loc)
            call_id = meta.get("tool_call_id")
            known = by_response.get(rid) if rid is not None else None
            if known is not None and call_id in known.remaining:
                target = known  # another call of the same model response
            else:
                target = _Builder("assistant", rid)
                target.parts.extend(parts)
                target.remaining = [p.id for p in parts if isinstance(p, ToolCallPart)]
                builders.append(target)
                if rid is not None:
                    by_response[rid] = target
            if call_id in target.remaining:
                target.remaining.remove(call_id)
        elif isinstance(meta, Mapping):
            call_id = expect_str(
                meta.get("tool_call_id"), source, f"{loc}.tool_call_metadata.tool_call_id"
            )
            name = opt_str(
                meta.get("function_name"), source, f"{loc}.tool_call_metadata.function_name"
            )
            content = event.get("content")
            output = content if isinstance(content, str) else _text(event, source, loc)
            target = _Builder("tool", None)
            target.parts.append(ToolResultPart(call_id, output, name=name))
            builders.append(target)
        elif observation == CONDENSE:
            content = event.get("content")
            target = _Builder("user", None, summary=True)
            target.parts.append(
                TextPart(content if isinstance(content, str) else _text(event, source, loc))
            )
            builders.append(target)
        elif action in ("system", "message"):
            if action == "system":
                role: Role = "system"
            else:
                role = "user" if src == "user" else "assistant"
            target = _Builder(role, None)
            text = _text(event, source, loc)
            if text:
                target.parts.append(TextPart(text))
            builders.append(target)
        else:
            passthrough.append((i, event))
            continue
        target.events.append(event)
        target.positions.append(i)
    if items and not builders:
        fail("no message, system or tool events", source, "messages[0]")
    return Split([b.build() for b in builders], passthrough)


def to_messages(items: Sequence[Any], source: str = "<input>") -> list[Message]:
    """The messages of an event stream (other events are skipped)."""
    return split(items, source).messages


#: OpenHands action names of well-known tools (others are MCP tool calls).
ACTIONS = {
    "execute_bash": "run",
    "execute_ipython_cell": "run_ipython",
    "str_replace_editor": "edit",
    "think": "think",
    "finish": "finish",
    "browser": "browse_interactive",
    "web_read": "browse",
}


def _call_events(message: Message, notes: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """One action per tool call, all carrying the model response that made them."""
    calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
    text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
    reasoning = "\n".join(p.text for p in message.parts if isinstance(p, ReasoningPart))
    for p in message.parts:
        if not isinstance(p, TextPart | ReasoningPart | ToolCallPart):
            notes.append(("dropped", f"{p.kind.replace('_', ' ')} part beside tool calls"))
    _note_merged_text(message, notes, reasoning_apart=True)
    reply: dict[str, Any] = {
        "content": text or None,
        "role": "assistant",
        "tool_calls": [
            {
                "index": k,
                "function": {"arguments": c.arguments, "name": c.name},
                "id": c.id,
                "type": "function",
            }
            for k, c in enumerate(calls)
        ],
    }
    if reasoning:
        reply["reasoning_content"] = reasoning
    response = {
        "id": f"compactlens-{calls[0].id}",
        "object": "chat.completion",
        "choices": [{"finish_reason": "tool_calls", "index": 0, "message": reply}],
    }
    events: list[dict[str, Any]] = []
    for k, c in enumerate(calls):
        args = loads_or_none(c.arguments)
        events.append(
            {
                "source": "agent",
                "message": text if k == 0 else "",
                "action": ACTIONS.get(c.name, "call_tool_mcp"),
                "args": args if isinstance(args, dict) else {"arguments": c.arguments},
                "tool_call_metadata": {
                    "function_name": c.name,
                    "tool_call_id": c.id,
                    "model_response": response,
                    "total_calls_in_response": len(calls),
                },
            }
        )
    return events


def _note_merged_text(
    message: Message, notes: list[tuple[str, str]], *, reasoning_apart: bool
) -> None:
    """Say so when several parts become one ``message`` text (an event has one)."""
    texts = sum(isinstance(p, TextPart) for p in message.parts)
    reasoning = sum(isinstance(p, ReasoningPart) for p in message.parts)
    if texts > 1:
        notes.append(("approximated", "several text parts merged into one event message"))
    if reasoning > (1 if reasoning_apart else 0):
        what = "several reasoning parts merged" if reasoning_apart else "reasoning merged"
        notes.append(("approximated", f"{what} into the event's text"))


def encode(message: Message) -> Encoded:
    """Actions and observations for a new or changed message."""
    notes: list[tuple[str, str]] = []
    if message.role == "assistant" and message.tool_calls:
        return Encoded(tuple(_call_events(message, notes)), tuple(notes))
    _note_merged_text(message, notes, reasoning_apart=False)
    texts: list[str] = []
    items: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart | ReasoningPart):
            texts.append(part.text)
        elif isinstance(part, ToolResultPart):
            meta: dict[str, Any] = {"tool_call_id": part.call_id}
            if part.name is not None:
                meta = {"function_name": part.name, **meta}
            if part.is_error:
                notes.append(("approximated", "tool result error flag (is_error) has no field"))
            items.append(
                {
                    "source": "agent",
                    "message": part.output,
                    "observation": "run",
                    "tool_call_metadata": meta,
                    "content": part.output,
                }
            )
        elif isinstance(part, ToolCallPart):
            notes.append(CALL_AS_TEXT)
            texts.append(call_as_text(part))
        else:
            notes.append(("dropped", f"{part.kind.replace('_', ' ')} part"))
    if texts or not items:
        text = "\n".join(texts)
        if message.role in ("system", "developer"):
            event = {
                "source": "agent",
                "action": "system",
                "message": text,
                "args": {"content": text},
            }
        else:
            src = "agent" if message.role == "assistant" else "user"
            event = {"source": src, "action": "message", "message": text, "args": {"content": text}}
        old = original_of(message)
        if message.wire_format == NAME and isinstance(old, Mapping) and "id" in old:
            event = {"id": old["id"], **event}
        items.insert(0, event)
    return Encoded(tuple(items), tuple(notes))


def from_message(message: Message) -> dict[str, Any]:
    """Build the first event for a new or changed message (:func:`encode` gives them all)."""
    item: dict[str, Any] = encode(message).items[0]
    return item


# ----------------------------------------------------------------------------- compactions

#: The action a V0 condenser records (``CondensationAction``).
CONDENSATION = "condensation"


def _forgotten(args: Mapping[str, Any]) -> set[int]:
    """Event ids a condensation forgets: ``forgotten_event_ids``, or the range
    ``forgotten_events_start_id``..``forgotten_events_end_id`` (inclusive)."""
    ids = args.get("forgotten_event_ids")
    if isinstance(ids, list):
        return {i for i in ids if isinstance(i, int) and not isinstance(i, bool)}
    first, last = (
        opt_int(args.get("forgotten_events_start_id")),
        opt_int(args.get("forgotten_events_end_id")),
    )
    return set(range(first, last + 1)) if first is not None and last is not None else set()


def compactions(
    items: Sequence[Any], messages: Sequence[Message], document: Any = None, source: str = ""
) -> tuple[RecordedCompaction, ...]:
    """``condensation`` actions (``forgotten_event_ids`` or a start/end id range,
    ``summary``, ``summary_offset``): ``replaced`` is the history the agent had (earlier
    condensations applied), ``after`` that history without the forgotten events and with
    the summary at its offset."""
    starts = first_positions(messages)
    out: list[RecordedCompaction] = []
    forgotten: set[int] = set()
    for pos, event in enumerate(items):
        if not isinstance(event, Mapping) or event.get("action") != CONDENSATION:
            continue
        args = event.get("args")
        args = args if isinstance(args, Mapping) else {}
        index = message_at(starts, pos)
        gone_ids = _forgotten(args)
        gone = {
            n
            for n, m in enumerate(messages[:index])
            for w in (m.wire if isinstance(m.wire, tuple) else (m.wire,))
            if isinstance(w, Mapping) and w.get("id") in gone_ids
        }
        before = [m for n, m in enumerate(messages[:index]) if n not in forgotten]
        forgotten |= gone
        view = [m for n, m in enumerate(messages[:index]) if n not in forgotten]
        summary = opt_text(args.get("summary"))
        if summary:
            offset = opt_int(args.get("summary_offset"))
            at = offset if offset is not None and offset <= len(view) else len(view)
            view.insert(at, Message(role="user", parts=(TextPart(summary),)))
        out.append(
            RecordedCompaction(
                index=index,
                source="openhands.condensation",
                kind="summary" if summary else "trim",
                summary=summary,
                replaced=tuple(before) if gone else None,
                after=tuple(view),
                timestamp=opt_text(event.get("timestamp")),
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
    description="OpenHands V0 event stream (history)",
    encode=encode,
    split=split,
    message_keys=MESSAGE_KEYS,
    block_keys={},
)
