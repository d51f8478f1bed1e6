"""The one compaction step every integration runs before a model call.

A :class:`Compactor` holds the tuned configuration, either an engine strategy (with its
tokenizer, guards and profile) or a ``compact()`` one-shot (:class:`OneShot`: summarizer,
target, kept tail and the token count that triggers it), and an optional
:class:`~compactlens.integrations.Recorder`. :meth:`Compactor.run` compacts JSON wire
items of one format with :func:`~compactlens.apply_compaction` or
:func:`~compactlens.compact` (so the framework's model gets exactly what those give on
the same input, and the run's span and log record are emitted) and records the call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compactlens.compact.contract import compact
from compactlens.engine.guards import Guards
from compactlens.engine.index import MessageIndex
from compactlens.engine.profiles import get_profile
from compactlens.engine.result import CompactionResult, GroupDecision
from compactlens.engine.run import apply_compaction, read_and_apply, run_counter
from compactlens.engine.strategies.base import Strategy
from compactlens.engine.strategies.config import strategy_from_config, with_profile
from compactlens.engine.strategies.truncation import TruncationStrategy
from compactlens.engine.telemetry import emit_engine_result, history_changed, listening
from compactlens.formats.caller import from_caller
from compactlens.integrations.loop import LoopMemory, Totals, quiet
from compactlens.integrations.outcome import CompactorRun
from compactlens.integrations.recording import Recorder
from compactlens.integrations.window import (
    firing,
    remember,
    window_read,
    window_result,
    windowed,
)
from compactlens.model.errors import ConfigError
from compactlens.model.tokens import CharEstimator, Tokenizer, count_messages, tokenizer_name
from compactlens.summarizers.base import Summarizer


@dataclass(frozen=True, slots=True, kw_only=True)
class OneShot:
    """A ``compact()`` configuration: summarize the older history once it is over
    ``trigger_tokens`` (every call when ``None``) so that it fits ``target_tokens``."""

    summarizer: Summarizer
    target_tokens: int
    keep_last_messages: int = 4
    trigger_tokens: int | None = None


def _trigger(result: CompactionResult) -> str | None:
    acted = [e for e in result.events if e.groups_changed or e.inserted]
    for event in [*acted, *result.events]:
        if event.trigger and event.trigger != "(none)":
            return event.trigger
    return None


def _engine_run(result: CompactionResult, changed: bool | None = None) -> CompactorRun:
    """The run of ``result``; ``changed`` when the caller knows it (see
    :func:`_projection_changed`), so that no group's decision needs building."""
    if changed is None:
        changed = history_changed(result)
        summarized = any(d.action in ("summarized", "inserted") for d in result.decisions)
    else:  # a summary is an insertion, and every insertion is counted by its stage
        summarized = any(e.inserted for e in result.events)
    return CompactorRun(
        messages=list(result.messages),
        changed=changed,
        status=result.status,
        strategy=result.strategy,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        trigger=_trigger(result),
        summarized=summarized,
        events=tuple(e.to_dict() for e in result.events),
        result=result,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Compactor:
    """A strategy or a one-shot with its guards, profile, tokenizer and recorder."""

    strategy: Strategy | None = None
    one_shot: OneShot | None = None
    tokenizer: Tokenizer | None = None
    guards: Guards | None = None
    profile: str | None = None
    recorder: Recorder | None = None

    def __post_init__(self) -> None:
        if (self.strategy is None) == (self.one_shot is None):
            raise ConfigError("a Compactor needs exactly one of strategy= or one_shot=")
        if self.recorder is not None:
            self.recorder.configure(self.configuration())

    def configuration(self) -> dict[str, Any]:
        """What a recording stores to replay a call: the strategy configuration (or the
        one-shot's numbers), the profile, the guards and the tokenizer's name."""
        out: dict[str, Any] = {
            "tokenizer": "estimate" if self.tokenizer is None else tokenizer_name(self.tokenizer),
            "profile": self.profile,
            "guards": None if self.guards is None else self.guards.to_dict(),
        }
        if self.strategy is not None:
            out["strategy"] = self.strategy.to_dict()
        elif self.one_shot is not None:
            shot = self.one_shot
            out["one_shot"] = {
                "target_tokens": shot.target_tokens,
                "keep_last_messages": shot.keep_last_messages,
                "trigger_tokens": shot.trigger_tokens,
            }
        return out

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        *,
        summarizer: Summarizer | None = None,
        guards: Mapping[str, Any] | Guards | None = None,
        profile: str | None = None,
        tokenizer: Tokenizer | None = None,
        record_to: str | os.PathLike[str] | None = None,
        framework: str = "python",
        format: str = "openai-chat",
    ) -> Compactor:
        """Build from a strategy configuration (the inspector's exported JSON).

        ``record_to`` names a folder: each run then writes a recording there (the
        integrations set ``framework`` and ``format`` for you).
        """
        if isinstance(guards, Mapping):
            guards = Guards.from_dict(guards)
        return cls(
            strategy=strategy_from_config(config, summarizer=summarizer, profile=profile),
            tokenizer=tokenizer,
            guards=guards,
            profile=profile,
            recorder=_recorder(record_to, framework, format),
        )

    @classmethod
    def from_one_shot(
        cls,
        one_shot: OneShot,
        *,
        tokenizer: Tokenizer | None = None,
        record_to: str | os.PathLike[str] | None = None,
        framework: str = "python",
        format: str = "openai-chat",
    ) -> Compactor:
        """A ``compact()`` one-shot compactor (tokens counted with ``tokenizer``)."""
        recorder = _recorder(record_to, framework, format)
        return cls(one_shot=one_shot, tokenizer=tokenizer, recorder=recorder)

    def recording(self, framework: str, format: str) -> Compactor:
        """This compactor with its recorder set to ``framework`` / ``format``."""
        if self.recorder is None or (
            self.recorder.framework == framework and self.recorder.format == format
        ):
            return self
        recorder = Recorder(self.recorder.folder, framework=framework, format=format)
        return replace(self, recorder=recorder)

    def run(
        self, items: Sequence[Any], format: str, *, memory: LoopMemory | None = None
    ) -> CompactorRun:
        """Compact ``items`` (JSON wire items of ``format``) and record the call.

        Send ``run.messages`` on when ``run.changed``: a strategy run that missed its
        target (``cannot-fit``) still sends the shortened history. With ``memory`` (one
        per agent loop; see :mod:`compactlens.integrations.loop`) a call on a history
        that only grew reads only what was appended, and one its trigger cannot fire on
        answers "unchanged" from running totals (``run.result`` is then None); the
        answer is the one a call without memory gives.
        """
        if memory is None:
            done = (
                self._strategy_run(items, format)
                if self.strategy is not None
                else self._compact(items, format)
            )
        else:
            with memory.lock:
                if self.strategy is not None:
                    done = self._loop_run(items, format, memory)
                else:
                    done = self._compact(items, format, memory)
        if self.recorder is not None:
            self.recorder.record(items, done)
        return done

    def _strategy_run(self, items: Sequence[Any], format: str) -> CompactorRun:
        assert self.strategy is not None
        result = apply_compaction(
            items,
            self.strategy,
            self.tokenizer,
            format=format,
            guards=self.guards,
            profile=self.profile,
        )
        return _engine_run(result)

    def _loop_run(self, items: Sequence[Any], format: str, memory: LoopMemory) -> CompactorRun:
        """:meth:`_strategy_run` that remembers (see :meth:`run`)."""
        assert self.strategy is not None
        counter = run_counter(self.tokenizer, self.profile)
        totals = memory.totals(items, format, counter)
        window = memory.window
        if totals is None or (window is not None and memory.reread_from < window.start):
            memory.window = None  # a message before the window was read again
        if totals is not None and not listening():
            strategy = with_profile(self.strategy, self.profile)
            tokens, messages = totals
            still, trigger = quiet(strategy, Totals(tokens, messages), self.tokenizer is not None)
            if still and messages:
                return CompactorRun(
                    messages=list(items),
                    changed=False,
                    status="unchanged",
                    strategy=strategy.name,
                    tokens_before=tokens,
                    tokens_after=tokens,
                    trigger=trigger,
                )
        if totals is not None:
            done = self._window_run(items, format, memory, counter, totals)
            if done is not None:
                return done
        read = None
        if totals is not None:  # read only what was appended; group the whole history
            read = memory.read(items, format, counter, get_profile(self.profile).grouping)
        result, caller, index = read_and_apply(
            items,
            self.strategy,
            self.tokenizer,
            format=format,
            guards=self.guards,
            profile=self.profile,
            known=memory.summaries,
            read=read,
        )
        emit_engine_result("apply_compaction", result, items)
        memory.summaries = result.summaries
        if totals is None:
            # Messages seeded after a call that had nothing to do would only be freed
            # on a later idle call (all at once, a spike in that call): keep them only
            # when the next call may need them.
            counts = index.message_tokens
            idle = result.status == "unchanged" and self._quiet(Totals(sum(counts), len(counts)))
            memory.seed(items, format, counter, caller.messages, counts, keep=not idle)
        memory.window = None
        if self._windowed():
            memory.window = remember(self, result, index, counter)
        return _engine_run(result, _projection_changed(result, index))

    def _quiet(self, totals: Totals) -> bool:
        """Whether the strategy certainly leaves a history with ``totals`` unchanged."""
        assert self.strategy is not None
        strategy = with_profile(self.strategy, self.profile)
        return quiet(strategy, totals, self.tokenizer is not None)[0]

    def _windowed(self) -> bool:
        assert self.strategy is not None
        strategy = with_profile(self.strategy, self.profile)
        return windowed(strategy, self.guards, self.profile, self.tokenizer is not None)

    def _window_run(
        self,
        items: Sequence[Any],
        format: str,
        memory: LoopMemory,
        counter: Tokenizer | None,
        totals: tuple[int, int],
    ) -> CompactorRun | None:
        """The call on the window the last call left (see
        :mod:`compactlens.integrations.window`), or None when it must be a full run."""
        window = memory.window
        memory.window = None
        if window is None or window.owner is not self or listening():
            return None
        strategy = with_profile(self.strategy, self.profile)
        assert isinstance(strategy, TruncationStrategy)
        grouping = get_profile(self.profile).grouping
        read = window_read(window, memory.messages, memory.counts, counter, format, grouping)
        if read is None:
            return None
        caller, index = read
        result, _, _ = read_and_apply(
            caller.originals,
            firing(strategy, self.tokenizer is not None),
            self.tokenizer,
            format=format,
            guards=self.guards,
            profile=self.profile,
            read=read,
        )
        whole = memory.history()  # not copied now: a copy costs the whole history

        def decisions() -> tuple[GroupDecision, ...]:
            # One decision per group of the whole history: a full run builds them.
            full, _, _ = read_and_apply(
                whole(),
                strategy,
                self.tokenizer,
                format=format,
                guards=self.guards,
                profile=self.profile,
            )
            return tuple(full.decisions)

        given = self.tokenizer is not None
        moved = window_result(window, result, index, strategy, given, totals, decisions)
        if moved is None:
            return None
        memory.window = remember(self, moved, index, counter, window)
        return _engine_run(moved, True)

    def _compact(
        self, items: Sequence[Any], format: str, memory: LoopMemory | None = None
    ) -> CompactorRun:
        shot = self.one_shot
        assert shot is not None
        tokenizer = self.tokenizer or CharEstimator()

        def count(wire: Sequence[Any]) -> int:
            return sum(count_messages(from_caller(wire, format=format).messages, tokenizer))

        trigger = None if shot.trigger_tokens is None else f"tokens > {shot.trigger_tokens}"
        if shot.trigger_tokens is not None:
            before = _remembered_count(items, format, tokenizer, memory) or count(items)
            if before <= shot.trigger_tokens:
                return CompactorRun(
                    messages=list(items),
                    changed=False,
                    status="unchanged",
                    strategy="compact()",
                    tokens_before=before,
                    tokens_after=before,
                )
        result = compact(
            items,
            summarizer=shot.summarizer,
            target_tokens=shot.target_tokens,
            keep_last_messages=shot.keep_last_messages,
            count_tokens=count,
            format=format,
        )
        done = result.status == "compacted"
        return CompactorRun(
            messages=list(result.messages),
            changed=done,
            status=result.status,
            strategy="compact()",
            tokens_before=result.tokens.before,
            tokens_after=result.tokens.after,
            trigger=trigger,
            summarized=done,
            summary=result.summary,
            events=(
                {"replaced_range": list(result.replaced_range or ()), "reason": result.reason},
            ),
            result=result,
        )


def _projection_changed(result: CompactionResult, index: MessageIndex) -> bool:
    """:func:`history_changed` without building every group's decision: a run changed
    the history when its projection is not the index's messages, object for object (a
    dropped, collapsed or inserted message shows there)."""
    if result.status == "unchanged":
        return False
    projection, messages = result.projection, index.messages
    return len(projection) != len(messages) or any(
        a is not b for a, b in zip(projection, messages, strict=True)
    )


def _remembered_count(
    items: Sequence[Any], format: str, tokenizer: Tokenizer, memory: LoopMemory | None
) -> int | None:
    """The token count of ``items`` from ``memory`` (kept up to date), or None."""
    if memory is None:
        return None
    totals = memory.totals(items, format, tokenizer)
    if totals is not None:
        return totals[0]
    caller = from_caller(items, format=format)
    counts = count_messages(caller.messages, tokenizer)
    memory.seed(items, format, tokenizer, caller.messages, counts)
    return sum(counts)


def _recorder(
    folder: str | os.PathLike[str] | None, framework: str, format: str
) -> Recorder | None:
    return None if folder is None else Recorder(folder, framework=framework, format=format)


def changed(run: CompactorRun) -> bool:
    """Whether ``run.messages`` differ from the input (compacted, or shortened short of
    the target)."""
    return run.changed


__all__ = ["Compactor", "CompactorRun", "OneShot", "changed"]
