"""What a session's triggers see, and how long a provider keeps its prompt cache.

A session evaluates :class:`compactlens.Trigger` values (``tokens_exceed``,
``messages_exceed``, ``turns_exceed``, ``cache_likely_cold``, their combinations) in
order; the first that is true wins and its index is recorded. They see a
:class:`TriggerContext`: the request about to be sent. A plain callable
``(TriggerContext) -> bool`` works as a custom trigger too.

:func:`infer_cache_retention_ms` reads the retention window from a provider request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactlens.engine.index import GroupKind, MessageIndex
from compactlens.formats.caller import from_caller

FIVE_MINUTES_MS = 5 * 60 * 1000
ONE_HOUR_MS = 60 * 60 * 1000
ONE_DAY_MS = 24 * ONE_HOUR_MS


@dataclass(frozen=True, slots=True)
class TriggerContext:
    """The request about to be sent, as trigger metrics (:class:`compactlens.engine.Metrics`).

    ``history`` are the working messages (after any restored checkpoint) in the caller's
    kind; ``tokens`` is the full request estimate (messages plus ``overhead_tokens``, or a
    measured baseline plus the appended messages); ``messages`` the message count;
    ``groups``, ``turns`` and ``tool_call_groups`` are computed from the history the first
    time a trigger asks. ``cache_age_ms`` is the age of the provider's prompt cache when
    known and ``cache_retention_ms`` the session's retention window when known.
    """

    history: Sequence[Any]
    tokens: int
    overhead_tokens: int = 0
    cache_age_ms: float | None = None
    cache_retention_ms: int | None = None
    format: str | None = None
    _structure: list[tuple[int, int, int]] = field(default_factory=list, compare=False, repr=False)

    @property
    def messages(self) -> int:
        return len(self.history)

    def _counts(self) -> tuple[int, int, int]:
        if not self._structure:
            ix = MessageIndex.build(from_caller(self.history, format=self.format).messages)
            tools = sum(1 for g in ix.groups if g.kind is GroupKind.TOOL_CALL)
            self._structure.append((ix.non_system_groups, ix.total_turns, tools))
        return self._structure[0]

    @property
    def groups(self) -> int:
        return self._counts()[0]

    @property
    def turns(self) -> int:
        return self._counts()[1]

    @property
    def tool_call_groups(self) -> int:
        return self._counts()[2]


# ----------------------------------------------------------------- retention inference


def _anthropic_window(control: Any) -> int | None:
    """Retention of one ``cache_control`` object, or None when unknown."""
    if not isinstance(control, Mapping) or control.get("type") != "ephemeral":
        return None
    ttl = control.get("ttl")
    if ttl is None or ttl == "5m":
        return FIVE_MINUTES_MS
    if ttl == "1h":
        return ONE_HOUR_MS
    return None


def _cache_controls(request: Mapping[str, Any]) -> list[Any]:
    """Every ``cache_control`` of an Anthropic Messages request (top level, system, tools,
    message content blocks and blocks nested in tool results)."""
    found: list[Any] = []

    def blocks(value: Any) -> None:
        if isinstance(value, Mapping):
            if "cache_control" in value:
                found.append(value["cache_control"])
            nested = value.get("content")
            if isinstance(nested, list):
                for item in nested:
                    blocks(item)
        elif isinstance(value, list):
            for item in value:
                blocks(item)

    if "cache_control" in request:
        found.append(request["cache_control"])
    blocks(request.get("system"))
    blocks(request.get("tools"))
    messages = request.get("messages")
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, Mapping):
                if "cache_control" in message:
                    found.append(message["cache_control"])
                blocks(message.get("content"))
    return found


def infer_cache_retention_ms(request: Mapping[str, Any]) -> int | None:
    """The prompt-cache retention window of a provider request, in ms, or None if unknown.

    * Anthropic ``cache_control: {"type": "ephemeral"}``: 5 minutes by default (or
      ``ttl: "5m"``), 1 hour with ``ttl: "1h"``; mixed windows, other types or other
      TTLs are unknown.
    * OpenAI ``prompt_cache_retention``: ``"in_memory"`` is at most 1 hour,
      ``"24h"`` is 24 hours; any other value is unknown.
    * Anything else (no cache hints) is unknown.
    """
    if not isinstance(request, Mapping):
        return None
    windows: set[int] = set()
    for control in _cache_controls(request):
        window = _anthropic_window(control)
        if window is None:
            return None
        windows.add(window)
    if "prompt_cache_retention" in request:
        value = request["prompt_cache_retention"]
        if value == "in_memory":
            windows.add(ONE_HOUR_MS)
        elif value == "24h":
            windows.add(ONE_DAY_MS)
        else:
            return None
    if len(windows) != 1:
        return None
    return next(iter(windows))


__all__ = [
    "FIVE_MINUTES_MS",
    "ONE_DAY_MS",
    "ONE_HOUR_MS",
    "TriggerContext",
    "infer_cache_retention_ms",
]
