"""Run a strategy over a transcript: index once, plan, project, explain.

``apply_compaction`` is the one-call entry point. ``run_strategy`` plans over an
index you already built, which is what the inspector does on every parameter
change: no re-parsing, no re-tokenizing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from compactlens.gc_pause import gc_paused
from compactlens.index import MessageIndex, _scan
from compactlens.plan import Plan
from compactlens.result import (
    CompactionResult,
    Decisions,
    Explanation,
    GroupDecision,
    ProtectedItem,
    StageEvent,
    Status,
    Suggestion,
)
from compactlens.strategies.base import RunContext, StageOutcome, Strategy
from compactlens.summarizers.base import SummaryResponse
from compactlens.tokens import Tokenizer
from compactlens.wire import CallerMessages, from_caller

#: How many single-parameter variants are re-run to find a fix for a cannot-fit.
MAX_VARIANTS = 64


def _plan(
    index: MessageIndex,
    strategy: Strategy,
    tokenizer_given: bool,
    replay: dict[str, SummaryResponse] | None = None,
) -> tuple[Plan, RunContext, StageOutcome]:
    """Run ``strategy`` on a fresh plan. With ``replay`` (a finished run's summaries) the
    run may reuse those answers but makes no new summarizer call."""
    plan = Plan(index)
    ctx = RunContext(tokenizer=index.tokenizer, tokenizer_given=tokenizer_given)
    if replay is not None:
        ctx.summaries = dict(replay)
        ctx.replay_only = True
    outcome = strategy.run(plan, ctx)
    return plan, ctx, outcome


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


def _suggestions(
    index: MessageIndex,
    strategy: Strategy,
    tokenizer_given: bool,
    limit: int | None,
    summaries: dict[str, SummaryResponse],
) -> tuple[Suggestion, ...]:
    """Re-run single-parameter variants and keep the first that fits per parameter.

    Re-runs replay the summaries of the original run and never call a summarizer:
    a variant that would need a new summary is not suggested.
    """
    found: dict[str, Suggestion] = {}
    for variant in strategy.variants()[:MAX_VARIANTS]:
        if variant.parameter in found:
            continue
        plan, _ctx, outcome = _plan(index, variant.strategy, tokenizer_given, summaries)
        if outcome.fired and outcome.target_met:
            spare = None if limit is None else limit - plan.tokens
            spare_text = f" with {spare:,} tokens to spare" if spare is not None else ""
            found[variant.parameter] = Suggestion(
                change=f"{variant.change} fits ({plan.tokens:,} tokens{spare_text})",
                parameter=variant.parameter,
                value=variant.value,
                tokens_after=plan.tokens,
                spare_tokens=spare,
            )
    return tuple(found.values())


def _cannot_fit_reason(events: Sequence[StageEvent]) -> str:
    """Why a run that fired did not meet its target: the last failure, else the last miss."""
    failures = [e for e in events if e.event == "failed"]
    missed = [e for e in events if e.event == "target-missed"]
    if failures:
        return failures[-1].detail or "a stage failed"
    if missed:
        last = missed[-1]
        return f"{last.strategy}: target {last.target} not reached; protected content remains"
    return "target not reached"


def _explain(
    index: MessageIndex,
    strategy: Strategy,
    plan: Plan,
    ctx: RunContext,
    outcome: StageOutcome,
    status: Status,
    tokenizer_given: bool,
) -> tuple[Explanation, str | None]:
    protected: tuple[ProtectedItem, ...] = tuple(strategy.protections(plan))
    limit = outcome.target.token_limit if outcome.target is not None else None
    if status == "unchanged":
        return Explanation("No trigger fired: the transcript was left as it is.", protected), None
    if status == "compacted":
        return (
            Explanation(
                f"Target met: {index.total_tokens:,} -> {plan.tokens:,} tokens.",
                protected,
                target_tokens=limit,
            ),
            None,
        )
    reason = _cannot_fit_reason(ctx.events)
    collapsed = [g for g, act in enumerate(plan.action) if act == "collapsed"]
    if collapsed or plan.insertions:
        remainder = sum(plan.group_tokens(g) for g in collapsed)
        remainder += sum(ins.tokens for ins in plan.insertions)
        protected += (
            ProtectedItem(
                "replacement_text",
                tuple(collapsed),
                remainder,
                "what collapsed lines and inserted summaries still cost",
            ),
        )
    parts = [reason]
    for item in protected:
        parts.append(f"{item.why}: {item.tokens:,} tokens in {len(item.group_ids)} groups")
    smallest = plan.tokens
    suggestions = list(_suggestions(index, strategy, tokenizer_given, limit, ctx.summaries))
    if limit is not None:
        suggestions.append(
            Suggestion(
                change=f"a target of at least {smallest:,} tokens fits with these parameters",
                parameter="target_tokens",
                value=smallest,
                tokens_after=smallest,
                spare_tokens=0,
            )
        )
    return (
        Explanation(
            "; ".join(parts),
            protected,
            target_tokens=limit,
            smallest_target=smallest,
            suggestions=tuple(suggestions),
        ),
        reason,
    )


def run_strategy(
    index: MessageIndex,
    strategy: Strategy,
    *,
    caller: CallerMessages | None = None,
    tokenizer_given: bool = True,
    explain: bool = True,
) -> CompactionResult:
    """Plan ``strategy`` over a prebuilt ``index`` and build the result.

    ``caller`` decides the kind of ``result.messages`` (default: :class:`Message`).
    """
    start = time.perf_counter()
    plan, ctx, outcome = _plan(index, strategy, tokenizer_given)
    status: Status
    if not outcome.fired:
        status = "unchanged"
    elif outcome.target_met:
        status = "compacted"
    else:
        status = "cannot-fit"
    events = tuple(_renumber(ctx.events))
    if explain:
        explanation, reason = _explain(index, strategy, plan, ctx, outcome, status, tokenizer_given)
    else:
        explanation = Explanation(status)
        reason = _cannot_fit_reason(ctx.events) if status == "cannot-fit" else None
    projection = tuple(plan.project()) if status != "unchanged" else index.messages
    messages = caller.emit(projection) if caller is not None else list(projection)
    # Groups are kept or dropped whole and replacements are plain text, so a projection
    # can only have pairing problems the input had: with none in the index there is
    # nothing to re-scan. (A summary inserted inside a split pair can add one, which
    # the re-scan then finds.)
    if status == "unchanged" or not index.problems:
        problems = index.problems
    else:
        problems = _scan(projection).problems
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
    )


def _renumber(events: Sequence[StageEvent]) -> list[StageEvent]:
    from dataclasses import replace

    return [replace(e, stage=i) for i, e in enumerate(events)]


def apply_compaction(
    messages: Sequence[Any],
    strategy: Strategy,
    tokenizer: Tokenizer | None = None,
    *,
    format: str | None = None,
) -> CompactionResult:
    """Compact ``messages`` (wire dicts or :class:`Message`) with ``strategy``.

    Returns a :class:`CompactionResult` whose ``messages`` are of the same kind as
    the input; unchanged messages are the very same objects. The input is never
    mutated. Without a ``tokenizer`` tokens are estimated (characters / 4). The cyclic
    garbage collector is paused during the call (see :mod:`compactlens.gc_pause`).
    """
    with gc_paused():
        caller = from_caller(messages, format=format)
        index = MessageIndex.build(caller.messages, tokenizer)
        return run_strategy(index, strategy, caller=caller, tokenizer_given=tokenizer is not None)


async def apply_compaction_async(
    messages: Sequence[Any],
    strategy: Strategy,
    tokenizer: Tokenizer | None = None,
    *,
    format: str | None = None,
) -> CompactionResult:
    """The async twin of :func:`apply_compaction` (runs it in a worker thread)."""
    return await asyncio.to_thread(apply_compaction, messages, strategy, tokenizer, format=format)
