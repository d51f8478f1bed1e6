"""Run a strategy over a transcript: index once, plan, project, explain.

``apply_compaction`` is the one-call entry point. ``run_strategy`` plans over an
index you already built, which is what the inspector does on every parameter
change: no re-parsing, no re-tokenizing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from compactlens.engine.explain import cannot_fit_reason, explain_run
from compactlens.engine.guards import DEFAULT_GUARDS, Guards
from compactlens.engine.index import Grouping, MessageIndex, pairing_problems
from compactlens.engine.plan import Plan
from compactlens.engine.profiles import (
    get_profile,
    profile_guards,
    profile_tokenizer,
    run_guards,
)
from compactlens.engine.providers import Provider, check_provider
from compactlens.engine.result import (
    CompactionResult,
    Decisions,
    Explanation,
    GroupDecision,
    StageEvent,
    Status,
)
from compactlens.engine.strategies.base import Strategy, plan_strategy
from compactlens.engine.strategies.config import with_profile
from compactlens.engine.strategies.registry import strategy_triggers
from compactlens.engine.telemetry import emit_engine_result
from compactlens.engine.triggers import Trigger
from compactlens.engine.wire_index import wire_index
from compactlens.formats import OPENAI_CHAT
from compactlens.formats.caller import CallerMessages, from_caller
from compactlens.model.gc_pause import gc_paused
from compactlens.model.tokens import Tokenizer
from compactlens.summarizers.base import SummaryResponse


def _decisions(plan: Plan) -> tuple[GroupDecision, ...]:
    out: list[GroupDecision] = []
    ix = plan.index
    inserted_at: dict[int, list[GroupDecision]] = {}
    for ins in plan.insertions:
        inserted_at.setdefault(ins.position, []).append(
            GroupDecision(
                group_id=None,
                kind=ins.kind.value,
                action="inserted",
                strategy=ins.strategy,
                reason=ins.reason,
                tokens_before=0,
                tokens_after=ins.tokens,
                position=ins.position,
            )
        )
    for g in ix.groups:
        before = inserted_at.pop(g.first, None)
        if before:
            out.extend(before)
        act = plan.action[g.id]
        out.append(
            GroupDecision(
                group_id=g.id,
                kind=g.kind.value,
                action=act,  # type: ignore[arg-type]
                strategy=plan.by[g.id],
                reason=plan.why[g.id] or ("protected or not needed" if act == "kept" else ""),
                tokens_before=g.tokens,
                tokens_after=plan.group_tokens(g.id),
                position=g.first,
                message_indices=g.indices,
                turn=g.turn,
            )
        )
    for rest in inserted_at.values():
        out.extend(rest)
    return tuple(out)


def run_strategy(
    index: MessageIndex,
    strategy: Strategy,
    *,
    caller: CallerMessages | None = None,
    tokenizer_given: bool = True,
    explain: bool = True,
    guards: Guards | None = None,
    profile: str | None = None,
    known: Mapping[str, SummaryResponse] | None = None,
) -> CompactionResult:
    """Plan ``strategy`` over a prebuilt ``index`` under ``guards`` and build the result.

    ``caller`` decides the kind of ``result.messages`` (default: :class:`Message`).
    ``guards`` default to the profile's (:class:`Guards`: keep the latest user request;
    the provider of ``caller``'s format, else ``any``). ``profile`` (``compactlens``,
    ``maf``, ``deepagents``) sets the defaults of every stage left unset (see
    :mod:`compactlens.engine.profiles`); build ``index`` with the profile's grouping.
    ``known`` (an earlier run's ``summaries``) answers the summary requests it holds
    without a new summarizer call.
    """
    start = time.perf_counter()
    strategy = with_profile(strategy, profile)
    guards = run_guards(caller.format.name if caller else None, guards, profile=profile)
    plan, ctx, outcome = plan_strategy(index, strategy, tokenizer_given, guards=guards, known=known)
    status: Status
    if not outcome.fired:
        status = "unchanged"
    elif outcome.target_met:
        status = "compacted"
    else:
        status = "cannot-fit"
    events = tuple(_renumber(ctx.events))
    if explain:
        explanation, reason = explain_run(
            index, strategy, plan, ctx, outcome, status, tokenizer_given, guards
        )
    else:
        explanation = Explanation(status)
        reason = cannot_fit_reason(ctx.events) if status == "cannot-fit" else None
    projection = tuple(plan.project()) if status != "unchanged" else index.messages
    messages = caller.emit(projection) if caller is not None else list(projection)
    # Groups are kept or dropped whole and replacements are plain text, so a projection
    # can only have pairing problems the input had: with none in the index there is
    # nothing to re-scan. (A summary inserted inside a split pair can add one, which
    # the re-scan then finds.)
    if status == "unchanged" or not index.problems:
        problems = index.problems
    else:
        problems = pairing_problems(projection)
    return CompactionResult(
        status=status,
        messages=messages,
        projection=projection,
        tokens_before=index.total_tokens,
        tokens_after=plan.tokens,
        messages_before=index.total_messages,
        messages_after=len(projection),
        decisions=Decisions(lambda: _decisions(plan)),
        events=events,
        explanation=explanation,
        strategy=strategy.name,
        tokenizer=index.tokenizer_name,
        reason=reason,
        problems=problems,
        duration_ms=(time.perf_counter() - start) * 1000.0,
        summaries=dict(ctx.summaries),
        triggers=_triggers_of(strategy, tokenizer_given),
    )


def _triggers_of(strategy: Strategy, tokenizer_given: bool) -> tuple[Trigger, ...] | None:
    """The triggers that start ``strategy`` (None when its configuration cannot say: a
    strategy of the caller's own whose ``to_dict`` is not a known configuration)."""
    try:
        return strategy_triggers(strategy, tokenizer_given=tokenizer_given)
    except (TypeError, ValueError, AttributeError):
        return None


def _renumber(events: Sequence[StageEvent]) -> list[StageEvent]:
    return [replace(e, stage=i) for i, e in enumerate(events)]


def apply_compaction(
    messages: Sequence[Any],
    strategy: Strategy,
    tokenizer: Tokenizer | None = None,
    *,
    format: str | None = None,
    guards: Guards | None = None,
    provider: Provider | None = None,
    profile: str | None = None,
) -> CompactionResult:
    """Compact ``messages`` (wire dicts or :class:`Message`) with ``strategy``.

    Returns a :class:`CompactionResult` whose ``messages`` are of the same kind as
    the input; unchanged messages are the very same objects. The input is never
    mutated. Without a ``tokenizer`` tokens are estimated (characters / 4). The cyclic
    garbage collector is paused during the call (see :mod:`compactlens.model.gc_pause`).

    ``guards`` (default :class:`Guards`: the latest user request is kept) hold what every
    strategy must keep; ``provider`` (shorthand for ``guards.provider``; default: the
    provider of the input's format) is the API the result must be valid for. ``profile``
    (``compactlens``, ``maf``, ``deepagents``) gives the defaults, guards, grouping and
    estimator of the system it names, so code written for that system gives its result.
    """
    result, _, _ = read_and_apply(
        messages,
        strategy,
        tokenizer,
        format=format,
        guards=guards,
        provider=provider,
        profile=profile,
    )
    emit_engine_result("apply_compaction", result, messages)
    return result


def read_and_apply(
    messages: Sequence[Any],
    strategy: Strategy,
    tokenizer: Tokenizer | None = None,
    *,
    format: str | None = None,
    guards: Guards | None = None,
    provider: Provider | None = None,
    profile: str | None = None,
    known: Mapping[str, SummaryResponse] | None = None,
    read: tuple[CallerMessages, MessageIndex] | None = None,
) -> tuple[CompactionResult, CallerMessages, MessageIndex]:
    """:func:`apply_compaction` without its telemetry, with what it read and indexed (an
    integration in an agent loop keeps them for the next call) and the ``known`` summaries
    of an earlier call (see :func:`run_strategy`). ``read`` is ``messages`` already read
    and indexed (with the profile's grouping and :func:`run_counter`'s tokenizer)."""
    if guards is None:
        guards = profile_guards(profile)
    guards = with_provider(guards, provider)
    chosen = get_profile(profile)
    with gc_paused():
        caller, index = read or _read_and_index(
            messages, format, run_counter(tokenizer, profile), chosen.grouping
        )
        result = run_strategy(
            index,
            strategy,
            caller=caller,
            tokenizer_given=tokenizer is not None,
            guards=guards,
            profile=profile,
            known=known,
        )
    return result, caller, index


def run_counter(tokenizer: Tokenizer | None, profile: str | None) -> Tokenizer | None:
    """The tokenizer a run counts with: the caller's, else the profile's (None: the estimate)."""
    return tokenizer if tokenizer is not None or profile is None else profile_tokenizer(profile)


def _read_and_index(
    messages: Sequence[Any], format: str | None, counter: Tokenizer | None, grouping: Grouping
) -> tuple[CallerMessages, MessageIndex]:
    """The caller's messages and their index: OpenAI Chat dicts of the common shape in one
    pass (:mod:`compactlens.engine.wire_index`), anything else read, then indexed."""
    if format is None or format == OPENAI_CHAT.name:
        fast = wire_index(messages, counter, grouping)
        if fast is not None:
            return fast
    caller = from_caller(messages, format=format)
    return caller, MessageIndex.build(caller.messages, counter, grouping=grouping)


def with_provider(guards: Guards | None, provider: Provider | None) -> Guards:
    """``guards`` (default :class:`Guards`) with ``provider`` when one is given."""
    guards = guards or DEFAULT_GUARDS
    if provider is None:
        return guards
    return replace(guards, provider=check_provider(provider))


async def apply_compaction_async(
    messages: Sequence[Any],
    strategy: Strategy,
    tokenizer: Tokenizer | None = None,
    *,
    format: str | None = None,
    guards: Guards | None = None,
    provider: Provider | None = None,
    profile: str | None = None,
) -> CompactionResult:
    """The async twin of :func:`apply_compaction` (runs it in a worker thread)."""
    return await asyncio.to_thread(
        apply_compaction,
        messages,
        strategy,
        tokenizer,
        format=format,
        guards=guards,
        provider=provider,
        profile=profile,
    )
