"""What every strategy shares: the run context, the stage log and the exclusion loop."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from compactlens.engine.guards import Guards, resolve_guards
from compactlens.engine.index import GroupKind, MessageIndex
from compactlens.engine.plan import Plan, newest_non_system
from compactlens.engine.repair import (
    REPAIR_STAGE,
    add_user_note,
    keep_one,
    needs_a_message,
    needs_user_first,
    omitted_note,
)
from compactlens.engine.result import ProtectedItem, StageEvent
from compactlens.engine.triggers import Trigger
from compactlens.engine.vocabulary import change_words
from compactlens.model.messages import Message
from compactlens.model.tokens import Tokenizer, count_messages
from compactlens.model.validation import check_int
from compactlens.summarizers.base import SummaryRequest, SummaryResponse


@dataclass(slots=True)
class RunContext:
    """Shared by the stages of one run: the tokenizer and the stage log.

    ``summaries`` holds the summarizer answers of the run by request (see
    :meth:`summary_key`); ``replay_only`` marks the re-runs that explanations make
    to test parameter changes: they may replay those answers but never ask a
    summarizer again (that would be a new, paid, possibly different model call).
    """

    tokenizer: Tokenizer
    tokenizer_given: bool
    events: list[StageEvent] = field(default_factory=list)
    depth: int = 0
    summaries: dict[str, SummaryResponse] = field(default_factory=dict)
    replay_only: bool = False
    #: Answers of an earlier call on the same history (an agent loop), by the same key:
    #: a request found here is answered without a new summarizer call.
    known: Mapping[str, SummaryResponse] = field(default_factory=dict)

    @staticmethod
    def summary_key(summarizer: object, request: SummaryRequest) -> str:
        return f"{id(summarizer)}:{request.cache_key()}"

    def count(self, message: Message) -> int:
        return count_messages([message], self.tokenizer)[0]


@dataclass(frozen=True, slots=True)
class StageOutcome:
    """What one strategy did: whether its trigger fired and whether its target then held."""

    fired: bool
    target_met: bool
    target: Trigger | None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Variant:
    """One single-parameter change of a strategy, for cannot-fit suggestions."""

    change: str
    parameter: str
    value: Any
    strategy: Strategy


@runtime_checkable
class Strategy(Protocol):
    """A compaction strategy: changes a :class:`Plan` and logs :class:`StageEvent` records."""

    @property
    def name(self) -> str: ...

    def run(self, plan: Plan, ctx: RunContext) -> StageOutcome: ...

    def protections(self, plan: Plan) -> list[ProtectedItem]: ...

    def variants(self) -> list[Variant]: ...

    def to_dict(self) -> dict[str, Any]: ...


def check_count(value: object, name: str, *, minimum: int = 0) -> int:
    """Validate an integer parameter (no bools, no floats); see :func:`check_int`."""
    return check_int(name, value, minimum=minimum)


def resolve(
    trigger: Trigger | None, target: Trigger | None
) -> tuple[Trigger | None, Trigger | None]:
    """The target defaults to the negation of the trigger."""
    if target is None and trigger is not None:
        target = trigger.negate()
    return trigger, target


def protected_newest(plan: Plan, count: int) -> set[int]:
    return newest_non_system(plan, count)


def system_ids(plan: Plan) -> set[int]:
    return {g.id for g in plan.index.groups if g.is_system and plan.included(g.id)}


def protection(plan: Plan, why: str, ids: Iterable[int], detail: str = "") -> ProtectedItem | None:
    chosen = sorted(i for i in ids if plan.included(i))
    if not chosen:
        return None
    return ProtectedItem(why, tuple(chosen), sum(plan.group_tokens(i) for i in chosen), detail)


def exclude_until(
    plan: Plan,
    candidates: Sequence[int],
    target: Trigger | None,
    strategy: str,
    reason: str,
    *,
    action: str = "excluded",
    step: Callable[[int], bool] | None = None,
) -> int:
    """Exclude candidates oldest first, re-checking the target before each (O(1) per step).

    A custom ``step`` does the change itself and returns False when it left the group as is.
    """
    changed = 0
    for gid in candidates:
        if target is not None and target(plan):
            break
        if not plan.included(gid) or plan.locked(gid):
            continue
        if step is None:
            if not plan.exclude(gid, strategy, reason, action=action):
                continue
        elif not step(gid):
            continue
        changed += 1
    return changed


class Stage:
    """Times a stage and appends its :class:`StageEvent`."""

    def __init__(
        self,
        plan: Plan,
        ctx: RunContext,
        name: str,
        trigger: Trigger | None,
        target: Trigger | None,
    ) -> None:
        self.plan = plan
        self.ctx = ctx
        self.name = name
        self.trigger = trigger
        self.target = target
        self.start = time.perf_counter()
        self.tokens_before = plan.tokens
        self.messages_before = plan.messages
        self.trigger_values = trigger.values(plan) if trigger is not None else {}
        self.slot = len(ctx.events)
        self.log_start = len(plan.log)
        self.insertions_start = len(plan.insertions)

    def done(self, event: str, changed: int, target_met: bool, detail: str = "") -> None:
        plan = self.plan
        self.ctx.events.insert(
            self.slot,
            StageEvent(
                stage=self.slot,
                strategy=self.name,
                event=event,
                trigger=self.trigger.describe() if self.trigger is not None else "(none)",
                trigger_values=self.trigger_values,
                target=self.target.describe() if self.target is not None else "(none)",
                tokens_before=self.tokens_before,
                tokens_after=plan.tokens,
                messages_before=self.messages_before,
                messages_after=plan.messages,
                groups_changed=changed,
                target_met=target_met,
                duration_ms=(time.perf_counter() - self.start) * 1000.0,
                detail=detail,
                depth=self.ctx.depth,
                group_ids=tuple(plan.log[self.log_start :]),
                inserted=len(plan.insertions) - self.insertions_start,
            ),
        )


def trigger_dict(trigger: Trigger | None) -> dict[str, Any] | None:
    return trigger.to_dict() if trigger is not None else None


def countdown_variants(
    strategy: Any, parameter: str, current: int, lowest: int = 0
) -> list[Variant]:
    """Variants with ``parameter`` lowered one step at a time, ``current - 1`` to ``lowest``."""
    return [
        Variant(
            change_words(parameter, n, _stage_type(strategy)),
            parameter,
            n,
            replace(strategy, **{parameter: n}),
        )
        for n in range(current - 1, lowest - 1, -1)
    ]


def flag_variant(strategy: Any, parameter: str, value: bool) -> Variant:
    """The variant with a boolean ``parameter`` set to ``value``."""
    return Variant(
        change_words(parameter, value, _stage_type(strategy)),
        parameter,
        value,
        replace(strategy, **{parameter: value}),
    )


def _stage_type(strategy: Any) -> str:
    """The config ``type`` of ``strategy`` (for words that depend on the stage)."""
    try:
        return str(strategy.to_dict().get("type", ""))
    except (AttributeError, TypeError):
        return ""


def newest_tool_groups(plan: Plan, count: int) -> set[int]:
    """Ids of the newest ``count`` untouched tool-call groups."""
    out: set[int] = set()
    if count <= 0:
        return out
    for g in reversed(plan.index.groups):
        if g.kind is GroupKind.TOOL_CALL and plan.untouched(g.id):
            out.add(g.id)
            if len(out) >= count:
                break
    return out


def open_tool_stage(
    plan: Plan,
    ctx: RunContext,
    name: str,
    trigger: Trigger | None,
    target: Trigger | None,
    protected: set[int],
    *,
    untouched_only: bool,
) -> tuple[Stage, list[int], StageOutcome | None]:
    """Start a stage over the older tool-call groups: the stage, its candidates (the
    guards' prunable groups first, then oldest first; locked groups never, and with
    ``untouched_only``, a content-changing stage, no group whose tools must stay verbatim),
    and the outcome when there is nothing to do (trigger false, or no trigger and no
    eligible group)."""
    stage = Stage(plan, ctx, name, trigger, target)
    locks = plan.locks

    def eligible(gid: int) -> bool:
        if not untouched_only:
            return plan.included(gid)
        # A stage that changes content: clamped groups may go further, verbatim ones never.
        return (plan.untouched(gid) or gid in plan.clamped) and gid not in locks.verbatim

    candidates = locks.order(
        g.id
        for g in plan.index.groups
        if g.kind is GroupKind.TOOL_CALL and eligible(g.id) and g.id not in protected
    )
    if trigger is not None and not trigger(plan):
        stage.done("skipped", 0, True)
        return stage, candidates, StageOutcome(False, True, target)
    if trigger is None and not candidates:
        stage.done("skipped", 0, True, "no tool-call group is eligible")
        return stage, candidates, StageOutcome(False, True, None)
    return stage, candidates, None


def plan_strategy(
    index: MessageIndex,
    strategy: Strategy,
    tokenizer_given: bool,
    replay: dict[str, SummaryResponse] | None = None,
    guards: Guards | None = None,
    known: Mapping[str, SummaryResponse] | None = None,
) -> tuple[Plan, RunContext, StageOutcome]:
    """Run ``strategy`` on a fresh plan under ``guards`` (default :class:`Guards`), then
    make the plan valid for the guards' provider. With ``replay`` (a finished run's
    summaries) the run may reuse those answers but makes no new summarizer call; with
    ``known`` (an earlier call's summaries) it reuses them and asks only for new ranges."""
    plan = Plan(index, locks=resolve_guards(index, guards))
    ctx = RunContext(tokenizer=index.tokenizer, tokenizer_given=tokenizer_given)
    if known:
        ctx.known = known
    if replay is not None:
        ctx.summaries = dict(replay)
        ctx.replay_only = True
    outcome = strategy.run(plan, ctx)
    return plan, ctx, _repair(plan, ctx, outcome)


def _repair(plan: Plan, ctx: RunContext, outcome: StageOutcome) -> StageOutcome:
    """Make the plan valid for its provider as a logged stage (see
    :mod:`compactlens.engine.repair`); the target is re-checked after it."""
    missing = needs_a_message(plan)
    at = needs_user_first(plan) if missing is None else None
    if missing is None and at is None:
        return outcome
    stage = Stage(plan, ctx, REPAIR_STAGE, None, outcome.target)
    details: list[str] = []
    if missing is not None:
        details.append(keep_one(plan, missing))
        at = needs_user_first(plan)  # the group put back may open with an assistant turn
    if at is not None:
        details.append(add_user_note(plan, at, ctx.count(omitted_note())))
    met = outcome.target_met and (outcome.target is None or outcome.target(plan))
    stage.done("applied", 1, met, "; ".join(details))
    return replace(outcome, target_met=met)
