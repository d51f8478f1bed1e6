"""Pairing and role-order checks that providers enforce on a (compacted) request.

The rules live in :mod:`compactlens.engine.providers` (the engine keeps them while it
compacts); :func:`check_protocol` applies them to wire dicts or :class:`Message` objects.
Unless told otherwise, the messages of a transcript whose format is written for one API
(a Codex rollout or a Responses request: ``openai-responses``; a Claude Code log or an
Anthropic request: ``anthropic``, and so are Chat Completions messages whose tool-call ids
Anthropic's API minted) are checked for that API, the one they were sent to;
others (Chat Completions messages, the neutral form many APIs accept) are checked for
``openai-chat`` and ``anthropic`` (``gemini`` shares the Anthropic rules,
``openai-responses`` adds only the empty-request rule). :func:`chosen_providers` says which
and why, in words a report shows.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

from compactlens.engine.index import MessageIndex
from compactlens.engine.providers import (
    ProtocolProblem,
    Provider,
    check_provider,
    provider_for_format,
    provider_problems,
)
from compactlens.formats.caller import CallerMessages, from_caller
from compactlens.model.messages import Message

#: The providers a check may name (``any``, pairing only, is always checked).
PROVIDERS: tuple[Provider, ...] = ("openai-chat", "openai-responses", "anthropic", "gemini")
#: The providers reports check by default.
DEFAULT_PROVIDERS: tuple[Provider, ...] = ("openai-chat", "anthropic")

__all__ = [
    "ANTHROPIC_TOOL_ID_PREFIX",
    "DEFAULT_PROVIDERS",
    "PROVIDERS",
    "ProtocolProblem",
    "check_protocol",
    "chosen_providers",
    "own_provider",
    "provider_words",
    "transcript_provider",
    "verdict_provider",
]


_PROVIDER_NAMES = {
    "openai-chat": "OpenAI Chat Completions",
    "openai-responses": "OpenAI Responses",
    "anthropic": "Anthropic",
    "gemini": "Gemini",
    "any": "tool-call pairing",
}


def provider_words(name: str) -> str:
    """A provider the protocol checks name, in words (``anthropic`` is ``Anthropic``;
    ``any``, the checks every provider shares, is ``tool-call pairing``)."""
    return _PROVIDER_NAMES.get(name, name)


def _names(providers: Sequence[str]) -> str:
    """``OpenAI Chat Completions and Anthropic``: the providers in words, for prose."""
    return " and ".join(", ".join(provider_words(p) for p in providers).rsplit(", ", 1))


#: The prefix Anthropic's Messages API gives every tool-use id it mints.
ANTHROPIC_TOOL_ID_PREFIX = "toolu_"


def own_provider(caller: CallerMessages) -> Provider | None:
    """The API the transcript of ``caller``'s messages was written for: the one its format
    names, when that is not Chat Completions (the neutral form many APIs accept, and the
    form of wire dicts a caller passes); else ``anthropic`` when every tool-call id was
    minted by Anthropic's API (a Claude Code log converted to Chat Completions, or a
    conversation with Claude through an OpenAI-compatible proxy: its requests end up at
    the Messages API, whose rules apply); else None."""
    messages = caller.messages
    formats = {m.wire_format for m in messages if m.wire_format}
    if len(formats) == 1:
        own = provider_for_format(formats.pop())
        if own not in ("any", "openai-chat"):
            return own
    ids = [c.id for m in messages for c in m.tool_calls]
    if ids and all(i.startswith(ANTHROPIC_TOOL_ID_PREFIX) for i in ids):
        return "anthropic"
    return None


def transcript_provider(messages: Any) -> Provider | None:
    """:func:`own_provider` of ``messages`` (wire dicts, :class:`Message` objects or a
    transcript)."""
    if not isinstance(messages, Sequence) and hasattr(messages, "messages"):
        messages = messages.messages
    return own_provider(from_caller(messages))


def verdict_provider(own: str | None, chosen: str | None) -> str | None:
    """The provider a verdict counts problems for: the transcript's own API when it is
    known (:func:`own_provider`: a Codex rollout, a Claude Code log), else ``chosen`` (the
    guards' provider); None (every provider checked) when that is ``any`` or unset."""
    if own is not None:
        return own
    return chosen if chosen not in (None, "any") else None


def chosen_providers(
    providers: Iterable[str] | None, caller: CallerMessages
) -> tuple[tuple[Provider, ...], str]:
    """The providers to check ``caller``'s messages for (``providers`` when given) and a
    sentence saying which and why."""
    if providers is not None:
        chosen = tuple(check_provider(p) for p in providers)
        return chosen, f"checked for {_names(chosen)}, as chosen"
    own = own_provider(caller)
    if own is not None:
        return (own,), f"checked for {provider_words(own)}, the transcript's own API"
    return DEFAULT_PROVIDERS, f"checked for {_names(DEFAULT_PROVIDERS)}, the default"


def check_protocol(
    messages: Sequence[Any],
    providers: Iterable[str] | None = None,
    *,
    index: MessageIndex | None = None,
) -> tuple[ProtocolProblem, ...]:
    """Pairing problems plus each provider's role-order problems, sorted by message index.

    ``messages`` are wire dicts (OpenAI Chat Completions) or :class:`Message` objects.
    ``providers``: default: the transcript's own API, else :data:`DEFAULT_PROVIDERS`
    (see :func:`chosen_providers`). ``index``: an index built over these very messages,
    whose pairing problems are used instead of scanning for them again (an index over
    other messages is ignored).
    """
    caller = from_caller(messages)
    chosen, _ = chosen_providers(providers, caller)
    msgs = caller.messages
    pairing = index.problems if index is not None and _indexes(index, msgs) else None
    return tuple(provider_problems(msgs, chosen, pairing=pairing))


def _indexes(index: MessageIndex, messages: Sequence[Message]) -> bool:
    """Whether ``index`` was built over ``messages`` (the same objects, in order)."""
    built = index.messages
    return len(built) == len(messages) and all(map(operator.is_, built, messages))
