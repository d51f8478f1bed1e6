"""LLM summarization: replace older groups by one summary group."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compactlens.engine.index import GroupKind
from compactlens.engine.plan import Insertion, Plan
from compactlens.engine.profiles import check_profile, get_profile
from compactlens.engine.result import ProtectedItem
from compactlens.engine.strategies.base import (
    RunContext,
    Stage,
    StageOutcome,
    Variant,
    check_count,
    protected_newest,
    protection,
    resolve,
    system_ids,
    trigger_dict,
)
from compactlens.engine.triggers import Trigger
from compactlens.engine.vocabulary import plural
from compactlens.model.errors import ConfigError, InputTypeError
from compactlens.model.messages import SUMMARY_PREFIX, Message, TextPart
from compactlens.model.whitespace import summary_text
from compactlens.summarizers.base import (
    FINISH_STOP,
    Summarizer,
    SummaryResponse,
    build_summary_request,
    is_offline,
)

#: How a re-run that would need a new (model) summary says so in its stage event.
NOT_RERUN = "not re-run"


@dataclass(frozen=True, slots=True)
class _NoSummary:
    """Why the summarizer gave no answer to use (the stage fails with ``detail``)."""

    detail: str


@dataclass(frozen=True, slots=True)
class SummarizationStrategy:
    """Send older groups to a :class:`~compactlens.summarizers.base.Summarizer` and insert
    the summary as a ``summary`` group where the first summarized group stood.

    The newest ``minimum_preserved`` non-system groups are kept. The summarizer's
    input is capped at ``max_input_tokens`` by whole groups, oldest first. The
    summary is a user message starting with ``Previous conversation summary:``. On a
    summarizer error, a non-normal finish or empty text nothing changes and the
    stage reports it. Reference keywords: ``target_count`` / ``threshold`` count
    included non-system messages (trigger above ``target_count + threshold``;
    ``threshold`` left unset takes the profile's default: 0, or 2 under ``maf``).
    """

    summarizer: Summarizer
    trigger: Trigger | None = None
    target: Trigger | None = None
    minimum_preserved: int | None = None
    max_input_tokens: int = 8000
    max_summary_tokens: int = 2048
    instructions: str | None = None
    target_count: int | None = None
    threshold: int | None = None
    preserve_system: bool = True
    label: str = "summarization"
    profile: str | None = None

    def __post_init__(self) -> None:
        if self.profile is not None:
            check_profile(self.profile)
        if self.minimum_preserved is not None:
            check_count(self.minimum_preserved, "minimum_preserved")
        check_count(self.max_input_tokens, "max_input_tokens", minimum=1)
        check_count(self.max_summary_tokens, "max_summary_tokens", minimum=1)
        if self.target_count is not None:
            check_count(self.target_count, "target_count", minimum=1)
            if self.threshold is not None:
                check_count(self.threshold, "threshold")
            if self.trigger is not None:
                raise ConfigError("give either trigger/target or target_count/threshold")
        elif self.trigger is None:
            raise ConfigError("SummarizationStrategy needs a trigger (or target_count)")
        if self.instructions is not None and not isinstance(self.instructions, str):
            raise InputTypeError("instructions must be a string")

    @property
    def name(self) -> str:
        return self.label

    @property
    def preserved(self) -> int:
        """``minimum_preserved``, or the profile's default when unset."""
        if self.minimum_preserved is not None:
            return self.minimum_preserved
        return get_profile(self.profile).summarization_minimum_preserved

    @property
    def margin(self) -> int:
        """``threshold``, or the profile's default when unset."""
        if self.threshold is not None:
            return self.threshold
        return get_profile(self.profile).summarization_threshold

    def _newest_kept(self, plan: Plan) -> set[int]:
        """Keep-newest selection (MAF): the newest included non-system groups, newest
        first, until at least ``target_count`` of their messages are kept (at least one)."""
        kept: set[int] = set()
        count = 0
        for g in reversed(plan.index.groups):
            if g.is_system or not plan.included(g.id):
                continue
            if count >= (self.target_count or 0) and kept:
                break
            kept.add(g.id)
            count += g.message_count if plan.untouched(g.id) else 1
        return kept

    def _non_system_messages(self, plan: Plan) -> int:
        system = sum(
            plan.index.groups[g].message_count for g in system_ids(plan) if plan.untouched(g)
        )
        return plan.messages - system

    def run(self, plan: Plan, ctx: RunContext) -> StageOutcome:
        trigger, target = resolve(self.trigger, self.target)
        count_style = self.target_count is not None
        if count_style:
            limit = (self.target_count or 0) + self.margin
            trigger = Trigger("exceed", "messages", limit)
            target = None
        stage = Stage(plan, ctx, self.name, trigger, target)
        if count_style:
            fired = self._non_system_messages(plan) > limit
            stage.trigger_values = {"non_system_messages": self._non_system_messages(plan)}
        else:
            fired = trigger is None or trigger(plan)
        if not fired:
            stage.done("skipped", 0, True)
            return StageOutcome(False, True, target)

        chosen, too_big, skipped = self._choose(plan, count_style)
        if not chosen:
            return self._nothing_chosen(stage, target, too_big, skipped)
        response = self._response(plan, ctx, chosen)
        if isinstance(response, _NoSummary):
            stage.done("failed", 0, False, response.detail)
            return StageOutcome(True, False, target, response.detail)
        text = summary_text(response.text)
        if response.finish_reason != FINISH_STOP or response.has_tool_call:
            detail = f"summary incomplete (finish reason {response.finish_reason!r})"
            stage.done("failed", 0, False, detail)
            return StageOutcome(True, False, target, detail)
        if not text:
            stage.done("failed", 0, False, "summarizer returned empty text")
            return StageOutcome(True, False, target, "empty summary")

        self._insert_summary(plan, ctx, chosen, text)
        # In count style the goal is to keep about ``target_count`` of the newest messages:
        # the summary just inserted is not one of them (counting it would make every run
        # with ``threshold`` 0 miss its target by exactly that one message).
        met = (
            self._non_system_messages(plan) - 1 <= (self.target_count or 0) + self.margin
            if count_style
            else (target is None or target(plan))
        )
        stage.done("applied" if met else "target-missed", len(chosen), met)
        return StageOutcome(True, met, target)

    def _choose(self, plan: Plan, count_style: bool) -> tuple[list[int], int | None, int]:
        """The groups to summarize, oldest first within the input cap; the first too-big
        group's tokens (if one stopped the choice) and how many were passed over."""
        profile = get_profile(self.profile)
        keep_newest = count_style and profile.summary_selection == "keep-newest"
        keep = protected_newest(plan, self.preserved)
        if keep_newest:
            keep |= self._newest_kept(plan)
        if self.preserve_system:
            keep |= system_ids(plan)
        chosen: list[int] = []
        too_big: int | None = None
        skipped = 0
        budget = self.max_input_tokens
        used = 0
        retained = self._non_system_messages(plan)
        for g in plan.index.groups:
            if g.id in keep or not plan.included(g.id) or plan.locked(g.id):
                continue
            if count_style and not keep_newest and retained <= (self.target_count or 0):
                break
            cost = plan.group_tokens(g.id)
            if chosen and used + cost > budget:
                break
            if not chosen and cost > budget:
                too_big = cost if too_big is None else too_big
                if profile.oversized_first_group == "skip":
                    skipped += 1  # MAF passes over it to the later groups
                    continue
                break
            chosen.append(g.id)
            used += cost
            retained -= g.message_count if plan.untouched(g.id) else 1
        return chosen, too_big, skipped

    def _nothing_chosen(
        self, stage: Stage, target: Trigger | None, too_big: int | None, skipped: int
    ) -> StageOutcome:
        """The stage's end when no group could be summarized."""
        if too_big is None:
            detail = "no group is eligible for summarization"
            stage.done("target-missed", 0, False, detail)
            return StageOutcome(True, False, target, "nothing to summarize")
        # Not protected content: the summarizer's input cap stops it (a true reason).
        detail = (
            f"the oldest eligible group ({too_big:,} tokens) exceeds "
            f"max_input_tokens={self.max_input_tokens:,}"
        )
        if skipped > 1:
            detail = f"every eligible group ({skipped}) exceeds max_input_tokens"
        stage.done("failed", 0, False, detail)
        return StageOutcome(True, False, target, detail)

    def _response(
        self, plan: Plan, ctx: RunContext, chosen: list[int]
    ) -> SummaryResponse | _NoSummary:
        """The summarizer's answer for the chosen groups (the run's cached one when there is
        one), or why there is none."""
        ix = plan.index
        msgs: list[Message] = []
        for gid in chosen:
            if plan.action[gid] == "collapsed":
                msgs.extend(plan.replacement[gid][0])
            else:
                msgs.extend(ix.messages[k] for k in ix.groups[gid].indices)
        request = build_summary_request(
            msgs, max_output_tokens=self.max_summary_tokens, instructions=self.instructions
        )
        key = ctx.summary_key(self.summarizer, request)
        cached = ctx.summaries.get(key)
        if cached is not None:
            return cached
        cached = ctx.known.get(key)
        if cached is not None:  # an earlier call in the loop summarized this very range
            ctx.summaries[key] = cached
            return cached
        if ctx.replay_only and not is_offline(self.summarizer):
            return _NoSummary(f"{NOT_RERUN}: this would need a new summarizer call")
        try:
            response = self.summarizer.summarize(request)
        except Exception as exc:  # the engine reports, it does not raise
            return _NoSummary(f"summarizer failed: {type(exc).__name__}")
        ctx.summaries[key] = response
        return response

    def _insert_summary(self, plan: Plan, ctx: RunContext, chosen: list[int], text: str) -> None:
        """Exclude the chosen groups and insert the summary where the first one stood."""
        summary = Message(role="user", parts=(TextPart(SUMMARY_PREFIX + text),))
        first = plan.index.groups[chosen[0]].first
        for gid in chosen:
            plan.exclude(gid, self.name, "summarized", action="summarized")
        plan.insert(
            Insertion(
                position=first,
                messages=(summary,),
                tokens=ctx.count(summary),
                kind=GroupKind.SUMMARY,
                strategy=self.name,
                reason=f"summary of {plural(len(chosen), 'group')}",
                replaces=tuple(chosen),
            )
        )

    def protections(self, plan: Plan) -> list[ProtectedItem]:
        items = [
            protection(plan, "system", system_ids(plan) if self.preserve_system else ()),
            protection(
                plan,
                "minimum_preserved",
                protected_newest(plan, self.preserved),
                f"the newest {self.preserved} non-system groups",
            ),
        ]
        return [i for i in items if i is not None]

    def variants(self) -> list[Variant]:
        # Re-running would call the model again; suggestions come from cheaper stages.
        return []

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "summarization",
            "summarizer": type(self.summarizer).__name__,
            "trigger": trigger_dict(self.trigger),
            "target": trigger_dict(self.target),
            "minimum_preserved": self.preserved,
            "max_input_tokens": self.max_input_tokens,
            "max_summary_tokens": self.max_summary_tokens,
            "instructions": self.instructions,
            "target_count": self.target_count,
            "threshold": self.threshold,
            "preserve_system": self.preserve_system,
        } | ({"profile": self.profile} if self.profile is not None else {})
