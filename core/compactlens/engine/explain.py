"""Why an engine run ended as it did, and which single change would make it fit.

When a run ends ``cannot-fit``, :func:`explain_run` asks the strategy for its
protections and for single-parameter variants, re-plans each variant over the same index
(replaying the run's summaries, never calling a summarizer) and keeps the first that
fits per parameter. The one-shot ``compact()`` is explained by
:mod:`compactlens.compact.explain`, with the same :class:`Explanation` and
:class:`Suggestion` values.
"""

from __future__ import annotations

from collections.abc import Sequence

from compactlens.engine.guards import LATEST_REQUEST, PINNED, Guards
from compactlens.engine.index import MessageIndex
from compactlens.engine.plan import Plan
from compactlens.engine.result import (
    Explanation,
    ProtectedItem,
    StageEvent,
    Status,
    Suggestion,
)
from compactlens.engine.strategies.base import RunContext, StageOutcome, Strategy, plan_strategy
from compactlens.engine.vocabulary import condition_words, plural, protection_words, stage_words
from compactlens.summarizers.base import SummaryResponse

#: How many single-parameter variants are re-run to find a fix for a cannot-fit.
MAX_VARIANTS = 64


def target_suggestion(smallest: int) -> Suggestion:
    """The suggestion every explanation ends with: the smallest target these parameters
    reach. Worded as a bound, never as a promise: with the triggers as they are a target of
    ``smallest`` may fit while the trigger it then needs makes the stages stop elsewhere
    (the verdict's next step names the change that fits)."""
    return Suggestion(
        change=f"a target under {smallest:,} tokens cannot fit with these parameters",
        parameter="target_tokens",
        value=smallest,
        tokens_after=smallest,
        spare_tokens=0,
    )


def unchanged_explanation(protected: tuple[ProtectedItem, ...] = ()) -> Explanation:
    """The explanation of a run whose trigger did not fire."""
    return Explanation("No trigger fired: the transcript was left as it is.", protected)


def met_explanation(
    before: int, after: int, protected: tuple[ProtectedItem, ...], target_tokens: int | None
) -> Explanation:
    """The explanation of a run that met its target."""
    return Explanation(
        f"Target met: {before:,} → {after:,} tokens.",
        protected,
        target_tokens=target_tokens,
        target_met=True,
    )


def _suggestions(
    index: MessageIndex,
    strategy: Strategy,
    tokenizer_given: bool,
    limit: int | None,
    summaries: dict[str, SummaryResponse],
    guards: Guards | None = None,
) -> tuple[Suggestion, ...]:
    """Re-run single-parameter variants and keep the first that fits per parameter.

    Re-runs replay the summaries of the original run and never call a summarizer:
    a variant that would need a new summary is not suggested.
    """
    found: dict[str, Suggestion] = {}
    for variant in strategy.variants()[:MAX_VARIANTS]:
        if variant.parameter in found:
            continue
        plan, _ctx, outcome = plan_strategy(
            index, variant.strategy, tokenizer_given, summaries, guards
        )
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


def guard_protections(plan: Plan) -> list[ProtectedItem]:
    """What the run's guards keep: pinned groups and the latest user request."""
    by_why: dict[str, list[int]] = {}
    for gid, why in sorted(plan.locks.locked.items()):
        if plan.included(gid):
            by_why.setdefault(why, []).append(gid)
    details = {
        LATEST_REQUEST: "kept by the guard that keeps the latest request",
        PINNED: "pinned messages are never dropped or changed",
    }
    return [
        ProtectedItem(why, tuple(ids), sum(plan.group_tokens(g) for g in ids), details.get(why, ""))
        for why, ids in by_why.items()
    ]


def protected_amount(item: ProtectedItem) -> str:
    """What a protection holds: "1,205 tokens in 3 groups", or its tokens alone when they
    are in no group (inserted summaries: "21 tokens", never "in 0 groups")."""
    if not item.group_ids:
        return f"{item.tokens:,} tokens"
    return f"{item.tokens:,} tokens in {plural(len(item.group_ids), 'group')}"


def merged_protections(plan: Plan, items: Sequence[ProtectedItem]) -> tuple[ProtectedItem, ...]:
    """One item per reason, in the order each reason first comes: stages of a pipeline
    that protect for the same reason (two stages keeping the newest groups) give the
    union of their groups, counted once, with the first stage's detail."""
    order: dict[str, list[ProtectedItem]] = {}
    for item in items:
        order.setdefault(item.why, []).append(item)
    merged = []
    for why, same in order.items():
        if len(same) == 1:
            merged.append(same[0])
            continue
        ids = tuple(sorted({g for item in same for g in item.group_ids}))
        tokens = sum(plan.group_tokens(g) for g in ids)
        merged.append(ProtectedItem(why, ids, tokens, same[0].detail))
    return tuple(merged)


def cannot_fit_reason(events: Sequence[StageEvent]) -> str:
    """Why a run that fired did not meet its target: the last failure, else the last miss."""
    failures = [e for e in events if e.event == "failed"]
    missed = [e for e in events if e.event == "target-missed"]
    if failures:
        return failures[-1].detail or "a stage failed"
    if missed:
        last = missed[-1]
        return (
            f"{stage_words(last.strategy)} did not reach its target "
            f"({condition_words(last.target)}); protected content remains"
        )
    return "target not reached"


def explain_run(
    index: MessageIndex,
    strategy: Strategy,
    plan: Plan,
    ctx: RunContext,
    outcome: StageOutcome,
    status: Status,
    tokenizer_given: bool,
    guards: Guards | None = None,
) -> tuple[Explanation, str | None]:
    protected = merged_protections(plan, (*guard_protections(plan), *strategy.protections(plan)))
    limit = outcome.target.token_limit if outcome.target is not None else None
    if status == "unchanged":
        return unchanged_explanation(protected), None
    if status == "compacted":
        return met_explanation(index.total_tokens, plan.tokens, protected, limit), None
    reason = cannot_fit_reason(ctx.events)
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
    parts.extend(f"{protection_words(i.why)}: {protected_amount(i)}" for i in protected)
    smallest = plan.tokens
    suggestions = list(_suggestions(index, strategy, tokenizer_given, limit, ctx.summaries, guards))
    if limit is not None:
        suggestions.append(target_suggestion(smallest))
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


__all__ = [
    "MAX_VARIANTS",
    "cannot_fit_reason",
    "explain_run",
    "guard_protections",
    "met_explanation",
    "target_suggestion",
    "unchanged_explanation",
]
