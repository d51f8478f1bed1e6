"""What each provider's API accepts as a history: the rules a compacted request must keep.

:func:`provider_problems` reports, with the message index each one is at:

* tool-call pairing problems for every provider: orphan results, unresolved calls,
  duplicate ids and split pairs (:func:`compactlens.engine.index.validate_pairing`);
* ``openai-chat`` (Chat Completions): an empty request and an assistant message with
  neither content nor tool calls;
* ``openai-responses``: an empty request (its items carry no role order rule beyond
  pairing);
* ``anthropic`` (Messages API) and ``gemini`` (``generateContent``), after the usual
  conversion (system messages move to the top-level system prompt, tool results become a
  user turn, a user text right after them and reasoning-only messages join their turn): a
  first turn that is not ``user`` (error), a tool call whose result is not in the very next
  turn (error), an empty turn other than a final assistant turn (error), a system message
  that is not leading (warning: it is moved and its position lost) and two consecutive
  turns of one role (warning: both APIs combine them into one turn).

``any`` checks pairing only. Errors are requests the API rejects; warnings are requests it
rewrites silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

from compactlens.engine.index import PairingProblem, validate_pairing
from compactlens.model.errors import ConfigError
from compactlens.model.messages import Message, TextPart

Provider: TypeAlias = Literal["any", "openai-chat", "openai-responses", "anthropic", "gemini"]
PROVIDERS: tuple[Provider, ...] = get_args(Provider)
#: Providers whose first conversation turn must be a user turn.
USER_FIRST: frozenset[str] = frozenset({"anthropic", "gemini"})
Severity: TypeAlias = Literal["error", "warning"]
#: The warnings whose rewrite loses and changes nothing: the API joins two consecutive
#: turns of one role into one turn, every message's content kept in order. A verdict
#: names them as a note, not a cost. A system message moved to the top
#: (``system_not_leading``) is not one of them: its place in the conversation is lost.
HARMLESS_KINDS: frozenset[str] = frozenset({"consecutive_roles"})

#: The provider each transcript format is written for (``any`` when it is not one API's).
_FORMAT_PROVIDER: dict[str, Provider] = {
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "claude-code": "anthropic",
    "codex": "openai-responses",
}


def check_provider(value: object) -> Provider:
    """``value`` as a :data:`Provider`, or a ``ValueError`` naming the choices."""
    if value not in PROVIDERS:
        raise ConfigError(f"unknown provider {value!r}; expected one of {', '.join(PROVIDERS)}")
    return value


def provider_for_format(format_name: str | None) -> Provider:
    """The provider a transcript of ``format_name`` is sent to (``any`` when unknown)."""
    return _FORMAT_PROVIDER.get(format_name or "", "any")


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

    @property
    def harmless(self) -> bool:
        """A warning whose rewrite loses and changes nothing (:data:`HARMLESS_KINDS`)."""
        return self.severity == "warning" and self.kind in HARMLESS_KINDS

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "kind": self.kind,
            "message_index": self.message_index,
            "detail": self.detail,
            "severity": self.severity,
            "call_id": self.call_id,
        }


def has_content(m: Message) -> bool:
    for p in m.parts:
        if isinstance(p, TextPart):
            if p.text.strip():
                return True
        else:
            return True
    return False


def _is_result_message(m: Message) -> bool:
    return m.role != "assistant" and bool(m.tool_results)


def _pairing(
    messages: Sequence[Message], found: Sequence[PairingProblem] | None = None
) -> list[ProtocolProblem]:
    return [
        ProtocolProblem("any", p.kind, p.message_index, p.detail, "error", p.call_id)
        for p in (validate_pairing(messages) if found is None else found)
    ]


def _empty(name: str, messages: Sequence[Message]) -> list[ProtocolProblem]:
    if messages:
        return []
    return [ProtocolProblem(name, "empty_request", 0, "a request needs at least one message")]


def _openai_chat(messages: Sequence[Message]) -> list[ProtocolProblem]:
    """Chat Completions rules beyond pairing (which already covers tool-message order)."""
    name = "openai-chat"
    return _empty(name, messages) + [
        ProtocolProblem(
            name, "empty_assistant", i, "an assistant message needs content or tool calls"
        )
        for i, m in enumerate(messages)
        if m.role == "assistant" and not m.tool_calls and not has_content(m)
    ]


@dataclass(slots=True)
class _Turn:
    """One message of the converted request."""

    role: str
    indices: list[int] = field(default_factory=list)
    uses: list[tuple[str, int]] = field(default_factory=list)
    results: set[str] = field(default_factory=set)
    content: bool = False
    results_only: bool = False


def _turns(name: str, messages: Sequence[Message], out: list[ProtocolProblem]) -> list[_Turn]:
    turns: list[_Turn] = []
    leading = True
    held: _Turn | None = None  # reasoning-only assistant messages waiting for their turn
    for i, m in enumerate(messages):
        if m.is_system:
            if not leading:
                out.append(
                    ProtocolProblem(
                        name,
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
            last.indices.append(i)  # text after tool results in the same user turn
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
        turn.content = has_content(m) or bool(turn.indices[:-1])
        turns.append(turn)
    if held is not None:
        turns.append(held)
    return turns


def opens_with_user_turn(messages: Iterable[Message]) -> bool:
    """True when the converted request (Anthropic/Gemini rules) opens with a user turn.

    The first turn of :func:`_turns` without building them all: it reads only up to the
    first message that decides it. Tool results open a user turn even after reasoning
    (the reasoning waits for its assistant turn); a user text after reasoning does not
    (the reasoning becomes an assistant turn before it).
    """
    reasoning_first = False
    for m in messages:
        if m.is_system:
            continue
        if _is_result_message(m):
            return True
        if m.is_reasoning_only:
            reasoning_first = True
            continue
        return m.role != "assistant" and not reasoning_first
    return False


def _role_order(name: str, messages: Sequence[Message]) -> list[ProtocolProblem]:
    """The Messages API / Gemini rules: user first, results in the next turn, no empty turn."""
    out: list[ProtocolProblem] = []
    turns = _turns(name, messages, out)
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
                f"the first message is {turns[0].role!r}; {name} needs a 'user' turn first",
            )
        )
    for k in range(1, len(turns)):
        if turns[k].role == turns[k - 1].role:
            out.append(
                ProtocolProblem(
                    name,
                    "consecutive_roles",
                    turns[k].indices[0],
                    f"two consecutive {turns[k].role!r} turns (messages "
                    f"{turns[k - 1].indices[-1]} and {turns[k].indices[0]}); the API "
                    "combines them into one turn",
                    "warning",
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
                        f"tool call {call_id!r} needs its result in the very next turn",
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


def provider_rules(messages: Sequence[Message], provider: Provider) -> list[ProtocolProblem]:
    """The problems of ``provider``'s own rules (pairing not included)."""
    if provider == "openai-chat":
        return _openai_chat(messages)
    if provider == "openai-responses":
        return _empty(provider, messages)
    if provider in USER_FIRST:
        return _role_order(provider, messages)
    return []


def provider_problems(
    messages: Sequence[Message],
    providers: Sequence[Provider] = ("any",),
    *,
    pairing: Sequence[PairingProblem] | None = None,
) -> list[ProtocolProblem]:
    """Pairing problems plus each provider's rule problems, sorted by message index.

    ``pairing``: the pairing problems of ``messages`` when they are known already (an
    index built over them records them), so they are not scanned for again."""
    problems = _pairing(messages, pairing)
    for provider in dict.fromkeys(providers):
        problems.extend(provider_rules(messages, provider))
    problems.sort(key=lambda p: (p.message_index, p.provider, p.kind))
    return problems


def errors_only(problems: Sequence[ProtocolProblem]) -> list[ProtocolProblem]:
    return [p for p in problems if p.severity == "error"]
