"""Triggers that decide when :class:`~compactlens.session.CompactionSession` compacts.

A trigger is any callable ``(TriggerContext) -> bool``. The session evaluates its
triggers in order; the first that returns True wins and its index is recorded.

* :func:`tokens_exceed` ``(n)``: the request estimate is strictly greater than ``n``;
* :func:`messages_exceed` ``(n)``: the message count is strictly greater than ``n``;
* :func:`cache_likely_cold` ``(retention_ms=None)``: the known prompt-cache age is at
  least the retention window (equality matches); an unknown age or retention is False.

:func:`infer_cache_retention_ms` reads the retention window from a provider request.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

FIVE_MINUTES_MS = 5 * 60 * 1000
ONE_HOUR_MS = 60 * 60 * 1000
ONE_DAY_MS = 24 * ONE_HOUR_MS


@dataclass(frozen=True, slots=True)
class TriggerContext:
    """What a trigger sees: the request about to be sent.

    ``messages`` are the working messages (after any restored checkpoint) in the
    caller's kind; ``token_estimate`` is the full request estimate (messages plus
    ``overhead_tokens``, or a measured baseline plus the appended messages);
    ``cache_age_ms`` the age of the provider's prompt cache when known and
    ``cache_retention_ms`` the session's retention window when known.
    """

    messages: Sequence[Any]
    token_estimate: int
    overhead_tokens: int = 0
    cache_age_ms: float | None = None
    cache_retention_ms: int | None = None

    @property
    def message_count(self) -> int:
        return len(self.messages)


Trigger = Callable[[TriggerContext], bool]


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class TokensExceed:
    """True when the request estimate is strictly greater than ``threshold``."""

    threshold: int

    def __call__(self, ctx: TriggerContext) -> bool:
        return ctx.token_estimate > self.threshold

    def describe(self) -> str:
        return f"tokens > {self.threshold}"


@dataclass(frozen=True, slots=True)
class MessagesExceed:
    """True when the message count is strictly greater than ``threshold``."""

    threshold: int

    def __call__(self, ctx: TriggerContext) -> bool:
        return len(ctx.messages) > self.threshold

    def describe(self) -> str:
        return f"messages > {self.threshold}"


@dataclass(frozen=True, slots=True)
class CacheLikelyCold:
    """True when a known cache age is at least the retention window (equality matches).

    ``retention_ms`` overrides the context's ``cache_retention_ms``; when both are
    None, or the age is unknown, the trigger is False.
    """

    retention_ms: int | None = None

    def __call__(self, ctx: TriggerContext) -> bool:
        retention = self.retention_ms if self.retention_ms is not None else ctx.cache_retention_ms
        age = ctx.cache_age_ms
        if retention is None or age is None:
            return False
        if isinstance(age, bool) or not isinstance(age, int | float) or not math.isfinite(age):
            return False
        return age >= retention

    def describe(self) -> str:
        window = "known retention" if self.retention_ms is None else f"{self.retention_ms} ms"
        return f"cache age >= {window}"


def tokens_exceed(n: int) -> TokensExceed:
    """Fire when the full request estimate is strictly greater than ``n`` tokens."""
    return TokensExceed(_positive_int("n", n))


def messages_exceed(n: int) -> MessagesExceed:
    """Fire when there are strictly more than ``n`` messages."""
    return MessagesExceed(_positive_int("n", n))


def cache_likely_cold(retention_ms: int | None = None) -> CacheLikelyCold:
    """Fire when the prompt cache is probably gone: known age >= retention window."""
    if retention_ms is not None:
        _positive_int("retention_ms", retention_ms)
    return CacheLikelyCold(retention_ms)


def describe_trigger(trigger: Trigger) -> str:
    """A short label for a trigger (its ``describe()`` or its name)."""
    describe = getattr(trigger, "describe", None)
    if callable(describe):
        text = describe()
        if isinstance(text, str):
            return text
    return getattr(trigger, "__name__", type(trigger).__name__)


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
    "CacheLikelyCold",
    "MessagesExceed",
    "TokensExceed",
    "Trigger",
    "TriggerContext",
    "cache_likely_cold",
    "describe_trigger",
    "infer_cache_retention_ms",
    "messages_exceed",
    "tokens_exceed",
]


# ------------------------------------------------------------ engine triggers in a session
class _RequestMetrics:
    """The engine's trigger metrics for a session request (groups and turns on demand)."""

    def __init__(self, ctx: TriggerContext) -> None:
        self._ctx = ctx
        self._counts: tuple[int, int, int] | None = None

    @property
    def tokens(self) -> int:
        return self._ctx.token_estimate

    @property
    def messages(self) -> int:
        return len(self._ctx.messages)

    def _structure(self) -> tuple[int, int, int]:
        if self._counts is None:
            from compactlens.index import GroupKind, MessageIndex
            from compactlens.wire import from_caller

            ix = MessageIndex.build(from_caller(self._ctx.messages).messages)
            tools = sum(1 for g in ix.groups if g.kind is GroupKind.TOOL_CALL)
            self._counts = (ix.non_system_groups, ix.total_turns, tools)
        return self._counts

    @property
    def groups(self) -> int:
        return self._structure()[0]

    @property
    def turns(self) -> int:
        return self._structure()[1]

    @property
    def tool_call_groups(self) -> int:
        return self._structure()[2]


@dataclass(frozen=True, slots=True)
class EngineTrigger:
    """An engine :class:`compactlens.triggers.Trigger` evaluated on a session request.

    ``tokens`` is the full request estimate (with overhead), ``messages`` the message
    count; groups, turns and tool-call groups are computed from the messages when the
    trigger looks at them.
    """

    trigger: Any

    def __call__(self, ctx: TriggerContext) -> bool:
        return bool(self.trigger(_RequestMetrics(ctx)))

    def describe(self) -> str:
        return str(self.trigger.describe())


def as_session_trigger(trigger: Any) -> Any:
    """Accept engine triggers (``compactlens.triggers``) wherever a session trigger goes."""
    from compactlens.triggers import Trigger as EngineTriggerValue

    if isinstance(trigger, EngineTriggerValue):
        return EngineTrigger(trigger)
    return trigger
