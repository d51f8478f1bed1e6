"""Pairing and role-order checks that providers enforce on a (compacted) request.

The rules live in :mod:`compactlens.engine.providers` (the engine keeps them while it
compacts); :func:`check_protocol` applies them to wire dicts or :class:`Message` objects.
Reports check ``openai-chat`` and ``anthropic`` unless told otherwise (``gemini`` shares the
Anthropic rules, ``openai-responses`` adds only the empty-request rule).
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
    provider_problems,
)
from compactlens.formats.caller import from_caller
from compactlens.model.messages import Message

#: The providers a check may name (``any``, pairing only, is always checked).
PROVIDERS: tuple[Provider, ...] = ("openai-chat", "openai-responses", "anthropic", "gemini")
#: The providers reports check by default.
DEFAULT_PROVIDERS: tuple[Provider, ...] = ("openai-chat", "anthropic")

__all__ = ["DEFAULT_PROVIDERS", "PROVIDERS", "ProtocolProblem", "check_protocol"]


def check_protocol(
    messages: Sequence[Any],
    providers: Iterable[str] = DEFAULT_PROVIDERS,
    *,
    index: MessageIndex | None = None,
) -> tuple[ProtocolProblem, ...]:
    """Pairing problems plus each provider's role-order problems, sorted by message index.

    ``messages`` are wire dicts (OpenAI Chat Completions) or :class:`Message` objects.
    ``index``: an index built over these very messages, whose pairing problems are used
    instead of scanning for them again (an index over other messages is ignored).
    """
    chosen = tuple(check_provider(p) for p in providers)
    msgs = from_caller(messages).messages
    pairing = index.problems if index is not None and _indexes(index, msgs) else None
    return tuple(provider_problems(msgs, chosen, pairing=pairing))


def _indexes(index: MessageIndex, messages: Sequence[Message]) -> bool:
    """Whether ``index`` was built over ``messages`` (the same objects, in order)."""
    built = index.messages
    return len(built) == len(messages) and all(map(operator.is_, built, messages))
