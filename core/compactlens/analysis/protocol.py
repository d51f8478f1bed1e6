"""Pairing and role-order checks that providers enforce on a (compacted) request.

:func:`check_protocol` reports, with the message index each one is at:

* tool-call pairing problems for every provider (``provider="any"``): orphan results,
  unresolved calls, duplicate ids and split pairs, from
  :func:`compactlens.engine.index.validate_pairing`;
* ``openai-chat`` (Chat Completions): an empty request and an assistant message with
  neither content nor tool calls (a tool message that does not directly answer its call
  is already a pairing problem: orphan or split pair);
* ``anthropic`` (Messages API, after the usual conversion: system messages move to the
  top-level ``system``, tool results become a ``user`` message, consecutive tool
  results, a user message right after them and reasoning-only messages merge into
  their turn): a system message that is
  not leading (it must be moved), a first message that is not ``user``, two
  consecutive messages of one role (the roles must alternate), a ``tool_use`` whose
  ``tool_result`` is not in the very next message, and an empty message (only the
  final assistant message may be empty).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from compactlens.engine.index import validate_pairing
from compactlens.formats.caller import from_caller
from compactlens.model.messages import Message, TextPart

Provider: TypeAlias = Literal["openai-chat", "anthropic"]
PROVIDERS: tuple[Provider, ...] = ("openai-chat", "anthropic")
Severity: TypeAlias = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class ProtocolProblem:
    """A request a provider would reject (``error``) or silently rewrite (``warning``).

    ``provider`` is ``any`` for tool-call pairing problems. ``message_index`` is the
    position in the checked message list.
    """

    provider: str
    kind: str
    message_index: int
    detail: str
    severity: Severity = "error"
    call_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "kind": self.kind,
            "message_index": self.message_index,
            "detail": self.detail,
            "severity": self.severity,
            "call_id": self.call_id,
        }


def _has_content(m: Message) -> bool:
    for p in m.parts:
        if isinstance(p, TextPart):
            if p.text.strip():
                return True
        else:
            return True
    return False


def _is_result_message(m: Message) -> bool:
    return m.role != "assistant" and bool(m.tool_results)


def _pairing(messages: Sequence[Message]) -> list[ProtocolProblem]:
    return [
        ProtocolProblem("any", p.kind, p.message_index, p.detail, "error", p.call_id)
        for p in validate_pairing(messages)
    ]


def _openai_chat(messages: Sequence[Message]) -> list[ProtocolProblem]:
    """Chat Completions rules beyond pairing (which already covers tool-message order)."""
    name = "openai-chat"
    if not messages:
        return [ProtocolProblem(name, "empty_request", 0, "a request needs at least one message")]
    return [
        ProtocolProblem(
            name, "empty_assistant", i, "an assistant message needs content or tool calls"
        )
        for i, m in enumerate(messages)
        if m.role == "assistant" and not m.tool_calls and not _has_content(m)
    ]


@dataclass(slots=True)
class _Turn:
    """One message of the converted Anthropic request."""

    role: str
    indices: list[int] = field(default_factory=list)
    uses: list[tuple[str, int]] = field(default_factory=list)
    results: set[str] = field(default_factory=set)
    content: bool = False
    results_only: bool = False


def _anthropic_turns(messages: Sequence[Message], out: list[ProtocolProblem]) -> list[_Turn]:
    turns: list[_Turn] = []
    leading = True
    held: _Turn | None = None  # reasoning-only assistant messages waiting for their turn
    for i, m in enumerate(messages):
        if m.is_system:
            if not leading:
                out.append(
                    ProtocolProblem(
                        "anthropic",
                        "system_not_leading",
                        i,
                        "a system message after the conversation started must be moved to "
                        "the top-level system prompt (its position is lost)",
                        "warning",
                    )
                )
            continue
        leading = False
        if _is_result_message(m):
            last = turns[-1] if turns else None
            if last is not None and last.results_only:
                turn = last
            else:
                turn = _Turn("user", results_only=True)
                turns.append(turn)
            turn.indices.append(i)
            turn.results.update(r.call_id for r in m.tool_results)
            turn.content = True
            continue
        role = "assistant" if m.role == "assistant" else "user"
        last = turns[-1] if turns else None
        if role == "user" and held is None and last is not None and last.results_only:
            last.indices.append(i)  # text after tool_result blocks in the same user message
            last.results_only = False
            continue
        if m.is_reasoning_only:
            if held is None:
                held = _Turn("assistant")
            held.indices.append(i)
            held.content = True
            continue
        turn = _Turn(role)
        if role == "assistant" and held is not None:
            turn.indices.extend(held.indices)
            held = None
        elif held is not None:
            turns.append(held)
            held = None
        turn.indices.append(i)
        turn.uses.extend((c.id, i) for c in m.tool_calls)
        turn.content = _has_content(m) or bool(turn.indices[:-1])
        turns.append(turn)
    if held is not None:
        turns.append(held)
    return turns


def _anthropic(messages: Sequence[Message]) -> list[ProtocolProblem]:
    name = "anthropic"
    out: list[ProtocolProblem] = []
    turns = _anthropic_turns(messages, out)
    if not turns:
        out.append(
            ProtocolProblem(name, "empty_request", 0, "a request needs at least one user message")
        )
        return out
    if turns[0].role != "user":
        out.append(
            ProtocolProblem(
                name,
                "first_not_user",
                turns[0].indices[0],
                f"the first message is {turns[0].role!r}; the Messages API needs 'user' first",
            )
        )
    for k in range(1, len(turns)):
        if turns[k].role == turns[k - 1].role:
            out.append(
                ProtocolProblem(
                    name,
                    "consecutive_roles",
                    turns[k].indices[0],
                    f"two consecutive {turns[k].role!r} messages after conversion "
                    f"(messages {turns[k - 1].indices[-1]} and {turns[k].indices[0]}); "
                    "roles must alternate",
                )
            )
    for k, turn in enumerate(turns):
        following = turns[k + 1] if k + 1 < len(turns) else None
        for call_id, at in turn.uses:
            if following is None or call_id not in following.results:
                out.append(
                    ProtocolProblem(
                        name,
                        "tool_result_not_next",
                        at,
                        f"tool_use {call_id!r} needs its tool_result in the very next message",
                        call_id=call_id,
                    )
                )
        if not turn.content and not (k == len(turns) - 1 and turn.role == "assistant"):
            out.append(
                ProtocolProblem(
                    name,
                    "empty_content",
                    turn.indices[0],
                    "only the final assistant message may be empty",
                )
            )
    return out


def check_protocol(
    messages: Sequence[Any], providers: Iterable[str] = PROVIDERS
) -> tuple[ProtocolProblem, ...]:
    """Pairing problems plus each provider's role-order problems, sorted by message index.

    ``messages`` are wire dicts (OpenAI Chat Completions) or :class:`Message` objects.
    """
    chosen = tuple(providers)
    for p in chosen:
        if p not in PROVIDERS:
            raise ValueError(f"unknown provider {p!r}; expected one of {PROVIDERS}")
    msgs = from_caller(messages).messages
    problems = _pairing(msgs)
    if "openai-chat" in chosen:
        problems.extend(_openai_chat(msgs))
    if "anthropic" in chosen:
        problems.extend(_anthropic(msgs))
    problems.sort(key=lambda p: (p.message_index, p.provider, p.kind))
    return tuple(problems)
