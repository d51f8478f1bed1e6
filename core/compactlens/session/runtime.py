"""``CompactionSession``: compaction for a continuing conversation (an agent loop).

Call :meth:`CompactionSession.prepare` before every model request with the full,
original history; send what it returns. It

1. **restores** the saved checkpoint when the history still starts with the exact
   prefix it covers (SHA-256 of the canonical JSON of that prefix); a rewind or an
   edit of that prefix silently drops the checkpoint. A checkpoint that cannot be used
   (its content checksum fails, it is truncated or not JSON, its replacement does not
   read as a transcript) is reported with a ``discarded`` event, set aside by the
   store's ``on_corrupt`` policy (see :mod:`compactlens.session.checkpoints`) and the
   evaluation goes on from the original history, as if there were no checkpoint;
2. **evaluates** the triggers in order (first match wins) on the full request
   estimate: messages plus ``overhead_tokens`` (instructions, tool definitions), or
   a measured baseline from :meth:`record_usage` plus the appended messages;
3. **compacts** with ``target_tokens - overhead_tokens`` as the message target
   (``request-overhead`` when the overhead alone uses up the target);
4. **persists** the checkpoint before the compacted history is used; a failure to
   write it fails the compaction.

The prefix digests (of the checkpoint's prefix, of what is sent for the usage baseline,
of the history a new checkpoint covers) are incremental
(:class:`~compactlens.session.digest.PrefixDigest`): a call serialises only the messages
appended since the last one, and a rewind or an edit is hashed again from before it.
:meth:`CompactionSession.reset` releases what they keep.

The original history is never rewritten. Lifecycle events (each with an evaluation
id) go to ``on_event`` in this order: ``restored`` (or ``discarded``), ``started``, then
``completed`` or ``failed``. Events carry counts, ranges, phases and reasons, never summary text
or raw error text (only the exception's class name).

On ``cannot-fit`` and ``request-overhead`` the session emits ``failed`` and returns
the uncompacted (restored) history. On an exception (summarizer error, store
failure, a trigger that raises...) it emits ``failed`` with reason ``error`` and
re-raises, unless ``on_error="return"``, in which case it returns the uncompacted
history; a store that fails to read (``failed`` with phase ``restore``) then lets the
evaluation go on from the original history, so the session still compacts when a
trigger fires. Cancellation always raises
:class:`~compactlens.compact.cancel.CompactionCancelled`.

**Strategies.** By default the session compacts with ``compact()`` and its
``summarizer``. ``strategy=`` runs an engine strategy instead (``TruncationStrategy(...)``
and the like, counted with ``tokenizer``), or a function ``message_target_tokens ->
strategy`` that builds one for the current target. An engine run compacts only when it
meets its own target and fits the message target; otherwise it is ``protected-history``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import is_
from typing import Any, Literal, TypeAlias

from compactlens.compact.cancel import CompactionCancelled
from compactlens.compact.contract import CountTokens, acompact, compact, make_counter
from compactlens.compact.result import CANNOT_FIT_REASONS
from compactlens.engine.guards import Guards
from compactlens.engine.providers import Provider
from compactlens.engine.run import apply_compaction, with_provider
from compactlens.engine.strategies.base import Strategy
from compactlens.engine.telemetry import emit_session_outcome
from compactlens.engine.triggers import Trigger
from compactlens.formats.caller import CallerMessages, from_caller
from compactlens.model.errors import ConfigError, InputTypeError, UsageError
from compactlens.model.messages import Message
from compactlens.model.tokens import Tokenizer
from compactlens.model.validation import check_int
from compactlens.session.checkpoints import (
    Checkpoint,
    CheckpointCorruptError,
    CheckpointStore,
    InMemoryCheckpointStore,
)
from compactlens.session.digest import PrefixDigest
from compactlens.session.triggers import TriggerContext
from compactlens.summarizers.base import Summarizer, Usage

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

#: A trigger: a :class:`compactlens.Trigger` value, or a custom ``(TriggerContext) -> bool``.
SessionTrigger: TypeAlias = Trigger | Callable[[TriggerContext], bool]


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
class CheckpointDiscarded:
    """The stored checkpoint could not be used and the evaluation went on without it.

    ``store`` and ``key`` name it, ``reason`` says what is wrong (never its content),
    ``action`` what the store did with it (set aside, deleted, or why it could not).
    """

    evaluation_id: str
    store: str
    key: str
    reason: str
    action: str
    type: Literal["discarded"] = "discarded"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "evaluation_id": self.evaluation_id,
            "store": self.store,
            "key": self.key,
            "reason": self.reason,
            "action": self.action,
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
    CheckpointRestored
    | CheckpointDiscarded
    | CompactionStarted
    | CompactionCompleted
    | CompactionFailed
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
    target: int
    started: float = field(default_factory=time.perf_counter)


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What a compaction gave the session, whichever ran (``compact()`` or an engine run)."""

    compacted: bool
    messages: list[Any]
    tokens_before: int
    tokens_after: int
    reason: str | None
    replaced_range: tuple[int, int] | None = None
    usage: Usage | None = None


class CompactionSession:
    """Compaction runtime for a continuing conversation; see the module docstring.

    ``summarizer`` is required unless ``strategy`` is given; an engine ``strategy`` runs
    under ``guards`` (``provider`` is a shorthand for ``guards.provider``, see
    :mod:`compactlens.engine.guards`). ``store`` defaults to an
    :class:`~compactlens.session.checkpoints.InMemoryCheckpointStore`; ``key`` names this
    conversation in the store. ``cache_retention_ms`` feeds
    :func:`~compactlens.cache_likely_cold` (see
    :func:`~compactlens.session.triggers.infer_cache_retention_ms`).
    """

    def __init__(
        self,
        *,
        triggers: Sequence[SessionTrigger],
        target_tokens: int,
        summarizer: Summarizer | None = None,
        keep_last_messages: int = 4,
        instructions: str | None = None,
        store: CheckpointStore | None = None,
        key: str = "default",
        on_event: Callable[[SessionEvent], None] | None = None,
        count_tokens: CountTokens | None = None,
        strategy: Strategy | Callable[[int], Strategy] | None = None,
        tokenizer: Tokenizer | None = None,
        cache_retention_ms: int | None = None,
        format: str | None = None,
        on_error: Literal["raise", "return"] = "raise",
        id_factory: Callable[[], str] | None = None,
        guards: Guards | None = None,
        provider: Provider | None = None,
    ) -> None:
        self.target_tokens = check_int("target_tokens", target_tokens)
        self.keep_last_messages = check_int("keep_last_messages", keep_last_messages)
        if instructions is not None and not isinstance(instructions, str):
            raise InputTypeError(
                f"instructions must be a string, got {type(instructions).__name__}"
            )
        if strategy is None and not callable(getattr(summarizer, "summarize", None)):
            raise InputTypeError(
                "a summarizer (with summarize()) is required unless strategy is given"
            )
        if strategy is not None and not (isinstance(strategy, Strategy) or callable(strategy)):
            raise InputTypeError(
                "strategy must be an engine strategy or a function target -> strategy"
            )
        triggers = tuple(triggers)
        for i, trigger in enumerate(triggers):
            if not callable(trigger):
                raise InputTypeError(f"triggers[{i}] is not callable")
        if cache_retention_ms is not None:
            check_int("cache_retention_ms", cache_retention_ms)
        if on_error not in ("raise", "return"):
            raise ConfigError("on_error must be 'raise' or 'return'")
        if not isinstance(key, str) or not key:
            raise ConfigError("key must be a non-empty string")
        self.triggers: tuple[SessionTrigger, ...] = triggers
        self.summarizer = summarizer
        self.instructions = instructions
        self.store: CheckpointStore = store if store is not None else InMemoryCheckpointStore()
        self.key = key
        self.on_event = on_event
        self.count_tokens = count_tokens
        self.strategy = strategy
        self.tokenizer = tokenizer
        self.cache_retention_ms = cache_retention_ms
        self.format = format
        self.on_error = on_error
        # Engine strategies run under these (the latest request kept by default; the
        # provider of ``format`` unless one is given). compact() keeps the latest request
        # and is valid for every provider by construction.
        self.guards = with_provider(guards, provider)
        self._new_id = id_factory or (lambda: uuid.uuid4().hex)
        self._sent: tuple[int, str] | None = None
        self._baseline: tuple[int, int, str] | None = None
        self._last_read: tuple[tuple[Any, ...], CallerMessages] | None = None
        # Incremental prefix digests: of the original history (checkpoint coverage and
        # save) and of the working messages (what is sent, the usage baseline).
        self._history_digest = PrefixDigest()
        self._sent_digest = PrefixDigest()
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
        try:
            if self.strategy is not None:
                outcome = self._run_engine(ev)
            else:
                outcome = self._from_compact(compact(**self._compact_args(ev, cancel)))
        except Exception as exc:
            return self._fail_exception(ev.evaluation_id, ev.working, "compact", exc)
        return self._finish(ev, outcome)

    async def aprepare(
        self,
        history: Sequence[Any],
        *,
        overhead_tokens: int = 0,
        cache_age_ms: float | None = None,
        cancel: Any = None,
    ) -> list[Any]:
        """Async :meth:`prepare` (``compact()`` runs as :func:`~compactlens.acompact`).

        The store and engine strategies are called synchronously.
        """
        ev = self._evaluate(history, overhead_tokens, cache_age_ms)
        if isinstance(ev, list):
            return ev
        try:
            if self.strategy is not None:
                outcome = self._run_engine(ev)
            else:
                outcome = self._from_compact(await acompact(**self._compact_args(ev, cancel)))
        except Exception as exc:
            return self._fail_exception(ev.evaluation_id, ev.working, "compact", exc)
        return self._finish(ev, outcome)

    def record_usage(self, input_tokens: int) -> None:
        """Calibrate: the provider's measured input tokens for the request just sent.

        The next estimate is this count plus the estimate of the messages appended
        since, as long as the sent messages are still the prefix. A compaction, a
        prefix change or a custom ``count_tokens`` invalidates it (with a custom
        counter the measured count is not used at all).
        """
        if isinstance(input_tokens, bool) or not isinstance(input_tokens, int) or input_tokens < 0:
            raise ConfigError(f"input_tokens must be a non-negative integer, got {input_tokens!r}")
        if self._sent is None:
            raise UsageError("record_usage() needs a request prepared with prepare() first")
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
        """Delete this session's checkpoint and forget the usage baseline and what the
        session kept of the history (its prefix digests)."""
        self.store.delete(self.key)
        self._baseline = None
        self._sent = None
        self._history_digest.clear()
        self._sent_digest.clear()

    # ----------------------------------------------------------------- internals
    def _emit(self, event: SessionEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _read(self, items: Sequence[Any]) -> CallerMessages:
        """``items`` read in the session's format; the same items again in one call (the
        history, the working messages, what is sent) are read once."""
        held = tuple(items)
        last = self._last_read
        if last is not None and len(last[0]) == len(held) and all(map(is_, last[0], held)):
            return last[1]
        caller = from_caller(held, format=self.format)
        self._last_read = (held, caller)
        return caller

    def _remember(self, sent: list[Any]) -> list[Any]:
        """Note what is sent (for :meth:`record_usage`); never raises: messages that do not
        read back only leave the session without a baseline. Ends the call's reading."""
        try:
            caller = self._read(sent)
            self._sent = (len(caller.messages), self._sent_digest.digest(caller.messages))
        except Exception:
            self._sent = None
        self._last_read = None
        return sent

    def _fail_exception(
        self, eid: str, working: list[Any], phase: FailPhase, exc: Exception
    ) -> list[Any]:
        self._emit(CompactionFailed(eid, phase, "error", type(exc).__name__))
        if self.on_error == "raise" or isinstance(exc, CompactionCancelled):
            raise exc
        return self._remember(working)

    def _restore(self, eid: str, history: tuple[Any, ...], caller: CallerMessages) -> list[Any]:
        try:
            cp = self.store.load(self.key)
        except CheckpointCorruptError as exc:
            self._emit(CheckpointDiscarded(eid, exc.store, exc.key, exc.reason, exc.action))
            return list(history)
        if cp is None:
            return list(history)
        same_kind = cp.kind == caller.kind and (
            cp.kind == "messages" or cp.wire_format == caller.format.name
        )
        if not same_kind or not cp.covers(caller.messages, digest=self._history_digest.digest):
            self.store.delete(self.key)  # rewound or edited: drop silently
            return list(history)
        problem = self._replacement_problem(cp)
        if problem is not None:  # a store that does not check what it holds
            self.store.delete(self.key)
            store = type(self.store).__name__
            self._emit(CheckpointDiscarded(eid, store, self.key, problem, "deleted"))
            return list(history)
        self._emit(CheckpointRestored(eid, cp.prefix_length, len(cp.replacement)))
        return [*cp.replacement, *history[cp.prefix_length :]]

    def _replacement_problem(self, cp: Checkpoint) -> str | None:
        """Why ``cp.replacement`` cannot stand in for the prefix, or None."""
        if cp.kind == "messages":
            if all(isinstance(m, Message) for m in cp.replacement):
                return None
            return "the replacement holds items that are not messages"
        try:
            from_caller(list(cp.replacement), format=cp.wire_format)
        except Exception as exc:
            where = getattr(exc, "location", "") or type(exc).__name__
            return f"the replacement does not read as {cp.wire_format} (at {where})"
        return None

    def _estimate(self, working: list[Any], overhead: int) -> int:
        caller = self._read(working)
        counter = make_counter(caller, self.count_tokens)
        msgs = caller.messages
        if self._baseline is not None and self.count_tokens is None:
            base, length, digest = self._baseline
            if len(msgs) >= length and self._sent_digest.digest(msgs, length) == digest:
                return base + counter(msgs[length:])
            self._baseline = None  # the prefix changed
        return counter(msgs) + overhead

    def _evaluate(
        self, history: Sequence[Any], overhead_tokens: Any, cache_age_ms: Any
    ) -> _Evaluation | list[Any]:
        """Restore, estimate and check the triggers: the evaluation to compact, or the
        messages to send as they are."""
        check_int("overhead_tokens", overhead_tokens, minimum=0)
        if cache_age_ms is not None and (
            isinstance(cache_age_ms, bool) or not isinstance(cache_age_ms, int | float)
        ):
            raise ConfigError(f"cache_age_ms must be a number or None, got {cache_age_ms!r}")
        eid = self._new_id()
        original = tuple(history)
        self._last_read = None
        caller = self._read(original)
        try:
            working = self._restore(eid, original, caller)
        except Exception as exc:
            # on_error="return": go on from the original history (compact from scratch)
            self._fail_exception(eid, list(original), "restore", exc)
            working = list(original)
        try:
            estimate = self._estimate(working, overhead_tokens)
            fired = self._first_trigger(
                TriggerContext(
                    history=tuple(working),
                    tokens=estimate,
                    overhead_tokens=overhead_tokens,
                    cache_age_ms=cache_age_ms,
                    cache_retention_ms=self.cache_retention_ms,
                    format=self.format,
                )
            )
        except Exception as exc:
            return self._fail_exception(eid, working, "evaluate", exc)
        if fired is None:
            return self._remember(working)
        self._emit(
            CompactionStarted(
                eid, fired, estimate, self.target_tokens, len(working), overhead_tokens
            )
        )
        target = self.target_tokens - overhead_tokens
        if target < 1:
            self._emit(CompactionFailed(eid, "compact", "request-overhead"))
            return self._remember(working)
        return _Evaluation(eid, original, caller, working, estimate, overhead_tokens, target)

    def _first_trigger(self, ctx: TriggerContext) -> int | None:
        for i, trigger in enumerate(self.triggers):
            if trigger(ctx):
                return i
        return None

    def _compact_args(self, ev: _Evaluation, cancel: Any) -> dict[str, Any]:
        assert self.summarizer is not None
        return {
            "messages": ev.working,
            "summarizer": self.summarizer,
            "target_tokens": ev.target,
            "keep_last_messages": self.keep_last_messages,
            "instructions": self.instructions,
            "count_tokens": self.count_tokens,
            "cancel": cancel,
            "format": self.format,
        }

    def _from_compact(self, result: Any) -> _Outcome:
        self.last_result = result
        return _Outcome(
            compacted=result.status == "compacted",
            messages=list(result.messages),
            tokens_before=result.tokens.before,
            tokens_after=result.tokens.after,
            reason=result.reason,
            replaced_range=result.replaced_range,
            usage=result.usage,
        )

    def _run_engine(self, ev: _Evaluation) -> _Outcome:
        """The engine strategy over the working messages; ``protected-history`` unless it
        met its own target and fits the message target."""
        chosen = self.strategy
        if not isinstance(chosen, Strategy):
            assert chosen is not None
            chosen = chosen(ev.target)
        result = apply_compaction(
            ev.working, chosen, self.tokenizer, format=self.format, guards=self.guards
        )
        self.last_result = result
        if result.status == "compacted" and result.tokens_after <= ev.target:
            return _Outcome(True, result.messages, result.tokens_before, result.tokens_after, None)
        before = result.tokens_before
        return _Outcome(False, list(ev.working), before, before, "protected-history")

    def _finish(self, ev: _Evaluation, outcome: _Outcome) -> list[Any]:
        emit_session_outcome(outcome, ev.working, self.strategy, ev.started)
        if not outcome.compacted:
            reason: FailReason = outcome.reason if outcome.reason in _CANNOT_FIT else "error"  # type: ignore[assignment]
            self._emit(CompactionFailed(ev.evaluation_id, "compact", reason))
            return self._remember(ev.working)
        compacted = list(outcome.messages)
        try:
            checkpoint = Checkpoint(
                prefix_length=len(ev.history),
                prefix_sha256=self._history_digest.digest(ev.caller.messages),
                replacement=tuple(compacted),
                kind=ev.caller.kind,
                wire_format=ev.caller.format.name,
                tokens_before=outcome.tokens_before,
                tokens_after=outcome.tokens_after,
            )
            self.store.save(self.key, checkpoint)
        except Exception as exc:
            return self._fail_exception(ev.evaluation_id, ev.working, "persist", exc)
        self._baseline = None
        self._emit(
            CompactionCompleted(
                ev.evaluation_id,
                outcome.tokens_before + ev.overhead,
                outcome.tokens_after + ev.overhead,
                outcome.replaced_range,
                outcome.usage,
            )
        )
        return self._remember(compacted)


__all__ = [
    "CheckpointDiscarded",
    "CheckpointRestored",
    "CompactionCompleted",
    "CompactionFailed",
    "CompactionSession",
    "CompactionStarted",
    "FailPhase",
    "FailReason",
    "SessionEvent",
    "SessionTrigger",
]
