"""``CompactionSession``: compaction for a continuing conversation (an agent loop).

Call :meth:`CompactionSession.prepare` before every model request with the full,
original history; send what it returns. It

1. **restores** the saved checkpoint when the history still starts with the exact
   prefix it covers (SHA-256 of the canonical JSON of that prefix); a rewind or an
   edit of that prefix silently drops the checkpoint;
2. **evaluates** the triggers in order (first match wins) on the full request
   estimate: messages plus ``overhead_tokens`` (instructions, tool definitions), or
   a measured baseline from :meth:`record_usage` plus the appended messages;
3. **compacts** with ``target_tokens - overhead_tokens`` as the message target
   (``request-overhead`` when the overhead alone uses up the target);
4. **persists** the checkpoint before the compacted history is used; a failure to
   write it fails the compaction.

The original history is never rewritten. Lifecycle events (each with an evaluation
id) go to ``on_event`` in this order: ``restored``, ``started``, then ``completed``
or ``failed``. Events carry counts, ranges, phases and reasons, never summary text
or raw error text (only the exception's class name).

On ``cannot-fit`` and ``request-overhead`` the session emits ``failed`` and returns
the uncompacted (restored) history. On an exception (summarizer error, store
failure, a trigger that raises...) it emits ``failed`` with reason ``error`` and
re-raises, unless ``on_error="return"``, in which case it returns the uncompacted
history. Cancellation always raises
:class:`~compactlens.cancel.CompactionCancelled`.

**Strategy hook.** ``strategy`` replaces ``compact()``: a callable
``(messages, message_target_tokens) -> CompactResult-like`` (an object with
``status``, ``messages``, ``tokens.before``, ``tokens.after``, ``replaced_range``,
``usage`` and ``reason``). An engine strategy (``TruncationStrategy(...)`` and the
like) is accepted directly and wrapped with
:func:`~compactlens.session_strategy.engine_strategy`; wrap it yourself to pass a
tokenizer or to build the strategy from the session's message target.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from compactlens.boundary import check_positive_int
from compactlens.cancel import CompactionCancelled
from compactlens.checkpoints import (
    Checkpoint,
    CheckpointStore,
    InMemoryCheckpointStore,
    prefix_digest,
)
from compactlens.compact import CountTokens, acompact, compact, make_counter
from compactlens.compact_result import CANNOT_FIT_REASONS
from compactlens.session_strategy import engine_strategy
from compactlens.session_triggers import Trigger, TriggerContext, as_session_trigger
from compactlens.strategies.base import Strategy as EngineStrategy
from compactlens.summarizers.base import Summarizer, Usage
from compactlens.wire import CallerMessages, from_caller

FailPhase: TypeAlias = Literal["restore", "evaluate", "compact", "persist"]
FailReason: TypeAlias = Literal[
    "no-safe-boundary",
    "protected-history",
    "incomplete-summary",
    "empty-summary",
    "summary-too-large",
    "request-overhead",
    "error",
]

_CANNOT_FIT: frozenset[str] = frozenset(CANNOT_FIT_REASONS)

#: ``(messages, message_target_tokens) -> CompactResult-like``; see the module docstring.
Strategy: TypeAlias = Callable[[list[Any], int], Any]


@dataclass(frozen=True, slots=True)
class CheckpointRestored:
    """A checkpoint replaced the first ``source_message_count`` messages."""

    evaluation_id: str
    source_message_count: int
    replacement_message_count: int
    type: Literal["restored"] = "restored"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "evaluation_id": self.evaluation_id,
            "source_message_count": self.source_message_count,
            "replacement_message_count": self.replacement_message_count,
        }


@dataclass(frozen=True, slots=True)
class CompactionStarted:
    """Trigger ``trigger_index`` fired; compaction of ``message_count`` messages begins.

    ``tokens_before`` is the request estimate the triggers saw (with overhead);
    ``target_tokens`` the session's request target.
    """

    evaluation_id: str
    trigger_index: int
    tokens_before: int
    target_tokens: int
    message_count: int
    overhead_tokens: int = 0
    type: Literal["started"] = "started"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "evaluation_id": self.evaluation_id,
            "trigger_index": self.trigger_index,
            "tokens_before": self.tokens_before,
            "target_tokens": self.target_tokens,
            "message_count": self.message_count,
            "overhead_tokens": self.overhead_tokens,
        }


@dataclass(frozen=True, slots=True)
class CompactionCompleted:
    """The compacted history was saved and is used from now on.

    Tokens are request tokens (the compaction's message counts plus overhead);
    ``replaced_range`` indexes the working history (after any restore).
    """

    evaluation_id: str
    tokens_before: int
    tokens_after: int
    replaced_range: tuple[int, int] | None
    usage: Usage | None
    type: Literal["completed"] = "completed"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "evaluation_id": self.evaluation_id,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "replaced_range": list(self.replaced_range) if self.replaced_range else None,
            "usage": self.usage.to_dict() if self.usage else None,
        }


@dataclass(frozen=True, slots=True)
class CompactionFailed:
    """Something failed in ``phase``; ``error_type`` is the exception class name, if any."""

    evaluation_id: str
    phase: FailPhase
    reason: FailReason
    error_type: str | None = None
    type: Literal["failed"] = "failed"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "evaluation_id": self.evaluation_id,
            "phase": self.phase,
            "reason": self.reason,
            "error_type": self.error_type,
        }


SessionEvent: TypeAlias = (
    CheckpointRestored | CompactionStarted | CompactionCompleted | CompactionFailed
)


@dataclass(frozen=True, slots=True)
class _Evaluation:
    """State between evaluation and compaction of one ``prepare`` call."""

    evaluation_id: str
    history: tuple[Any, ...]
    caller: CallerMessages
    working: list[Any]
    estimate: int
    overhead: int
    trigger_index: int | None


class CompactionSession:
    """Compaction runtime for a continuing conversation; see the module docstring.

    ``summarizer`` is required unless ``strategy`` is given. ``store`` defaults to an
    :class:`~compactlens.checkpoints.InMemoryCheckpointStore`; ``key`` names this
    conversation in the store. ``cache_retention_ms`` feeds
    :func:`~compactlens.session_triggers.cache_likely_cold` (see
    :func:`~compactlens.session_triggers.infer_cache_retention_ms`).
    """

    def __init__(
        self,
        *,
        triggers: Sequence[Trigger],
        target_tokens: int,
        summarizer: Summarizer | None = None,
        keep_last_messages: int = 4,
        instructions: str | None = None,
        store: CheckpointStore | None = None,
        key: str = "default",
        on_event: Callable[[SessionEvent], None] | None = None,
        count_tokens: CountTokens | None = None,
        strategy: Strategy | None = None,
        cache_retention_ms: int | None = None,
        format: str | None = None,
        on_error: Literal["raise", "return"] = "raise",
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        self.target_tokens = check_positive_int("target_tokens", target_tokens)
        self.keep_last_messages = check_positive_int("keep_last_messages", keep_last_messages)
        if instructions is not None and not isinstance(instructions, str):
            raise TypeError(f"instructions must be a string, got {type(instructions).__name__}")
        if strategy is None and not callable(getattr(summarizer, "summarize", None)):
            raise TypeError("a summarizer (with summarize()) is required unless strategy is given")
        if isinstance(strategy, EngineStrategy):
            strategy = engine_strategy(strategy, format=format)
        if strategy is not None and not callable(strategy):
            raise TypeError("strategy must be callable")
        triggers = tuple(as_session_trigger(t) for t in triggers)
        for i, trigger in enumerate(triggers):
            if not callable(trigger):
                raise TypeError(f"triggers[{i}] is not callable")
        if cache_retention_ms is not None:
            check_positive_int("cache_retention_ms", cache_retention_ms)
        if on_error not in ("raise", "return"):
            raise ValueError("on_error must be 'raise' or 'return'")
        if not isinstance(key, str) or not key:
            raise ValueError("key must be a non-empty string")
        self.triggers: tuple[Trigger, ...] = triggers
        self.summarizer = summarizer
        self.instructions = instructions
        self.store: CheckpointStore = store if store is not None else InMemoryCheckpointStore()
        self.key = key
        self.on_event = on_event
        self.count_tokens = count_tokens
        self.strategy = strategy
        self.cache_retention_ms = cache_retention_ms
        self.format = format
        self.on_error = on_error
        self._new_id = id_factory or (lambda: uuid.uuid4().hex)
        self._sent: tuple[int, str] | None = None
        self._baseline: tuple[int, int, str] | None = None
        self.last_result: Any = None

    # ----------------------------------------------------------------- public API
    def prepare(
        self,
        history: Sequence[Any],
        *,
        overhead_tokens: int = 0,
        cache_age_ms: float | None = None,
        cancel: Any = None,
    ) -> list[Any]:
        """The messages to send now: restored, and compacted when a trigger fires."""
        ev = self._evaluate(history, overhead_tokens, cache_age_ms)
        if isinstance(ev, list):
            return ev
        target = self._message_target(ev)
        if target is None:
            return self._remember(ev.working)
        try:
            if self.strategy is not None:
                result = self.strategy(list(ev.working), target)
            else:
                result = compact(
                    ev.working,
                    summarizer=self._summarizer(),
                    target_tokens=target,
                    keep_last_messages=self.keep_last_messages,
                    instructions=self.instructions,
                    count_tokens=self.count_tokens,
                    cancel=cancel,
                    format=self.format,
                )
        except Exception as exc:
            return self._fail_exception(ev, "compact", exc)
        return self._finish(ev, result)

    async def aprepare(
        self,
        history: Sequence[Any],
        *,
        overhead_tokens: int = 0,
        cache_age_ms: float | None = None,
        cancel: Any = None,
    ) -> list[Any]:
        """Async :meth:`prepare` (uses :func:`~compactlens.compact.acompact`).

        The store is called synchronously. A ``strategy`` may return an awaitable.
        """
        ev = self._evaluate(history, overhead_tokens, cache_age_ms)
        if isinstance(ev, list):
            return ev
        target = self._message_target(ev)
        if target is None:
            return self._remember(ev.working)
        try:
            if self.strategy is not None:
                outcome = self.strategy(list(ev.working), target)
                result = await outcome if isinstance(outcome, Awaitable) else outcome
            else:
                result = await acompact(
                    ev.working,
                    summarizer=self._summarizer(),
                    target_tokens=target,
                    keep_last_messages=self.keep_last_messages,
                    instructions=self.instructions,
                    count_tokens=self.count_tokens,
                    cancel=cancel,
                    format=self.format,
                )
        except Exception as exc:
            return self._fail_exception(ev, "compact", exc)
        return self._finish(ev, result)

    def record_usage(self, input_tokens: int) -> None:
        """Calibrate: the provider's measured input tokens for the request just sent.

        The next estimate is this count plus the estimate of the messages appended
        since, as long as the sent messages are still the prefix. A compaction, a
        prefix change or a custom ``count_tokens`` invalidates it (with a custom
        counter the measured count is not used at all).
        """
        if isinstance(input_tokens, bool) or not isinstance(input_tokens, int) or input_tokens < 0:
            raise ValueError(f"input_tokens must be a non-negative integer, got {input_tokens!r}")
        if self._sent is None:
            raise RuntimeError("record_usage() needs a request prepared with prepare() first")
        if self.count_tokens is not None:
            self._baseline = None
            return
        self._baseline = (input_tokens, *self._sent)

    @property
    def baseline_tokens(self) -> int | None:
        """The measured input count in use as a baseline, if any."""
        return self._baseline[0] if self._baseline else None

    def checkpoint(self) -> Checkpoint | None:
        """The stored checkpoint of this session, if any."""
        return self.store.load(self.key)

    def reset(self) -> None:
        """Delete this session's checkpoint and forget the usage baseline."""
        self.store.delete(self.key)
        self._baseline = None
        self._sent = None

    # ----------------------------------------------------------------- internals
    def _emit(self, event: SessionEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _summarizer(self) -> Summarizer:
        assert self.summarizer is not None
        return self.summarizer

    def _remember(self, sent: list[Any]) -> list[Any]:
        caller = from_caller(sent, format=self.format)
        self._sent = (len(caller.messages), prefix_digest(caller.messages))
        return sent

    def _fail_exception(self, ev: _Evaluation, phase: FailPhase, exc: BaseException) -> list[Any]:
        self._emit(CompactionFailed(ev.evaluation_id, phase, "error", type(exc).__name__))
        if self.on_error == "raise" or isinstance(exc, CompactionCancelled):
            raise exc
        return self._remember(ev.working)

    def _restore(self, eid: str, history: tuple[Any, ...], caller: CallerMessages) -> list[Any]:
        cp = self.store.load(self.key)
        if cp is None:
            return list(history)
        same_kind = cp.kind == caller.kind and (
            cp.kind == "messages" or cp.wire_format == caller.format.name
        )
        if not same_kind or not cp.covers(caller.messages):
            self.store.delete(self.key)  # rewound or edited: drop silently
            return list(history)
        self._emit(CheckpointRestored(eid, cp.prefix_length, len(cp.replacement)))
        return [*cp.replacement, *history[cp.prefix_length :]]

    def _estimate(self, working: list[Any], overhead: int) -> int:
        caller = from_caller(working, format=self.format)
        counter = make_counter(caller, self.count_tokens)
        msgs = caller.messages
        if self._baseline is not None and self.count_tokens is None:
            base, length, digest = self._baseline
            if len(msgs) >= length and prefix_digest(msgs[:length]) == digest:
                return base + counter(msgs[length:])
            self._baseline = None  # the prefix changed
        return counter(msgs) + overhead

    def _evaluate(
        self, history: Sequence[Any], overhead_tokens: Any, cache_age_ms: Any
    ) -> _Evaluation | list[Any]:
        if (
            isinstance(overhead_tokens, bool)
            or not isinstance(overhead_tokens, int)
            or overhead_tokens < 0
        ):
            raise ValueError(
                f"overhead_tokens must be a non-negative integer, got {overhead_tokens!r}"
            )
        if cache_age_ms is not None and (
            isinstance(cache_age_ms, bool) or not isinstance(cache_age_ms, int | float)
        ):
            raise ValueError(f"cache_age_ms must be a number or None, got {cache_age_ms!r}")
        eid = self._new_id()
        original = tuple(history)
        caller = from_caller(original, format=self.format)
        probe = _Evaluation(eid, original, caller, list(original), 0, overhead_tokens, None)
        try:
            working = self._restore(eid, original, caller)
        except Exception as exc:
            return self._fail_exception(probe, "restore", exc)
        probe = _Evaluation(eid, original, caller, working, 0, overhead_tokens, None)
        try:
            estimate = self._estimate(working, overhead_tokens)
            ctx = TriggerContext(
                messages=tuple(working),
                token_estimate=estimate,
                overhead_tokens=overhead_tokens,
                cache_age_ms=cache_age_ms,
                cache_retention_ms=self.cache_retention_ms,
            )
            fired: int | None = None
            for i, trigger in enumerate(self.triggers):
                if trigger(ctx):
                    fired = i
                    break
        except Exception as exc:
            return self._fail_exception(probe, "evaluate", exc)
        if fired is None:
            return self._remember(working)
        ev = _Evaluation(eid, original, caller, working, estimate, overhead_tokens, fired)
        self._emit(
            CompactionStarted(
                eid, fired, estimate, self.target_tokens, len(working), overhead_tokens
            )
        )
        return ev

    def _message_target(self, ev: _Evaluation) -> int | None:
        target = self.target_tokens - ev.overhead
        if target < 1:
            self._emit(CompactionFailed(ev.evaluation_id, "compact", "request-overhead"))
            return None
        return target

    def _finish(self, ev: _Evaluation, result: Any) -> list[Any]:
        self.last_result = result
        if getattr(result, "status", None) != "compacted":
            raw = getattr(result, "reason", None)
            reason: FailReason = raw if raw in _CANNOT_FIT else "error"
            self._emit(CompactionFailed(ev.evaluation_id, "compact", reason))
            return self._remember(ev.working)
        compacted = list(result.messages)
        try:
            checkpoint = Checkpoint(
                prefix_length=len(ev.history),
                prefix_sha256=prefix_digest(ev.caller.messages),
                replacement=tuple(compacted),
                kind=ev.caller.kind,
                wire_format=ev.caller.format.name,
                tokens_before=result.tokens.before,
                tokens_after=result.tokens.after,
            )
            self.store.save(self.key, checkpoint)
        except Exception as exc:
            return self._fail_exception(ev, "persist", exc)
        self._baseline = None
        self._emit(
            CompactionCompleted(
                ev.evaluation_id,
                result.tokens.before + ev.overhead,
                result.tokens.after + ev.overhead,
                getattr(result, "replaced_range", None),
                getattr(result, "usage", None),
            )
        )
        return self._remember(compacted)


__all__ = [
    "CheckpointRestored",
    "CompactionCompleted",
    "CompactionFailed",
    "CompactionSession",
    "CompactionStarted",
    "FailPhase",
    "FailReason",
    "SessionEvent",
    "Strategy",
]
