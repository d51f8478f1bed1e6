"""Pipelines and token-budget composition: several strategies, gentlest first."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from compactlens.engine.plan import Plan
from compactlens.engine.result import ProtectedItem
from compactlens.engine.strategies.base import (
    RunContext,
    Stage,
    StageOutcome,
    Strategy,
    Variant,
    check_count,
    exclude_until,
    protected_newest,
    protection,
    system_ids,
    trigger_dict,
)
from compactlens.engine.triggers import Trigger, tokens_at_most, tokens_exceed
from compactlens.engine.vocabulary import change_words, plural, stage_words
from compactlens.model.errors import ConfigError


def _run_children(
    children: tuple[Strategy, ...], plan: Plan, ctx: RunContext, stop: Trigger | None
) -> tuple[bool, StageOutcome | None]:
    ctx.depth += 1
    fired_any = False
    last: StageOutcome | None = None
    try:
        for child in children:
            if stop is not None and fired_any and stop(plan):
                break
            outcome = child.run(plan, ctx)
            if outcome.fired:
                fired_any = True
                last = outcome
    finally:
        ctx.depth -= 1
    return fired_any, last


def _child_variants(children: tuple[Strategy, ...], rebuild: Any) -> list[Variant]:
    out: list[Variant] = []
    for i, child in enumerate(children):
        for v in child.variants():
            new_children = (*children[:i], v.strategy, *children[i + 1 :])
            out.append(
                Variant(
                    f"{stage_words(child.name)}: {v.change}",
                    f"{child.name}.{v.parameter}",
                    v.value,
                    rebuild(new_children),
                )
            )
    return out


@dataclass(frozen=True, slots=True, init=False)
class PipelineStrategy:
    """Run strategies in order, each checking its own trigger against what the previous left.

    The pipeline's target is ``target`` if given, else the target of the last stage
    that fired, checked on the final state.
    """

    strategies: tuple[Strategy, ...]
    target: Trigger | None
    label: str

    def __init__(
        self, *strategies: Strategy, target: Trigger | None = None, label: str = "pipeline"
    ) -> None:
        if len(strategies) == 1 and isinstance(strategies[0], list | tuple):
            strategies = tuple(strategies[0])
        if not strategies:
            raise ConfigError("a pipeline needs at least one strategy")
        object.__setattr__(self, "strategies", tuple(strategies))
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "label", label)

    @property
    def name(self) -> str:
        return self.label

    def run(self, plan: Plan, ctx: RunContext) -> StageOutcome:
        stage = Stage(plan, ctx, self.name, None, self.target)
        fired, last = _run_children(self.strategies, plan, ctx, None)
        target = self.target if self.target is not None else (last.target if last else None)
        if not fired:
            stage.done("skipped", 0, True, "no stage's trigger fired")
            return StageOutcome(False, True, target)
        met = target(plan) if target is not None else bool(last and last.target_met)
        changed = sum(1 for a in plan.action if a != "kept") + len(plan.insertions)
        stage.done("applied" if met else "target-missed", changed, met)
        return StageOutcome(True, met, target)

    def protections(self, plan: Plan) -> list[ProtectedItem]:
        out: list[ProtectedItem] = []
        for child in self.strategies:
            out.extend(child.protections(plan))
        return out

    def variants(self) -> list[Variant]:
        return _child_variants(
            self.strategies, lambda ch: PipelineStrategy(*ch, target=self.target, label=self.label)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "pipeline",
            "target": trigger_dict(self.target),
            "strategies": [s.to_dict() for s in self.strategies],
        }


@dataclass(frozen=True, slots=True)
class TokenBudgetComposedStrategy:
    """Run strategies until the included tokens fit ``token_budget``, then fall back.

    The fallback excludes the oldest non-system groups, never the newest
    ``minimum_preserved`` (at least one, so the projection is never empty).
    System groups are kept unless ``drop_system_if_needed`` is set.
    """

    token_budget: int
    strategies: tuple[Strategy, ...] = ()
    early_stop: bool = True
    minimum_preserved: int = 1
    drop_system_if_needed: bool = False
    label: str = "token_budget"

    def __post_init__(self) -> None:
        check_count(self.token_budget, "token_budget", minimum=1)
        check_count(self.minimum_preserved, "minimum_preserved", minimum=1)
        object.__setattr__(self, "strategies", tuple(self.strategies))

    @property
    def name(self) -> str:
        return self.label

    def run(self, plan: Plan, ctx: RunContext) -> StageOutcome:
        trigger = tokens_exceed(self.token_budget)
        target = tokens_at_most(self.token_budget)
        stage = Stage(plan, ctx, self.name, trigger, target)
        if not trigger(plan):
            stage.done("skipped", 0, True)
            return StageOutcome(False, True, target)
        _run_children(self.strategies, plan, ctx, target if self.early_stop else None)
        changed = 0
        notes: list[str] = []
        if plan.messages == 0 and plan.index.total_messages:
            # A stage removed everything: bring back the newest group (non-system first),
            # since a projection is never empty.
            groups = plan.index.groups
            newest = next((g for g in reversed(groups) if not g.is_system), groups[-1])
            if plan.action[newest.id] == "excluded":
                plan.restore(newest.id, self.name, "restored: a projection is never empty")
                changed += 1
                notes.append(f"restored group {newest.id}")
        if not target(plan):
            keep = protected_newest(plan, self.minimum_preserved)
            candidates = [g.id for g in plan.index.groups if not g.is_system and g.id not in keep]
            excluded = exclude_until(plan, candidates, target, self.name, "token budget fallback")
            changed += excluded
            notes.append(f"fallback excluded {plural(excluded, 'group')}")
            if not target(plan) and self.drop_system_if_needed:
                groups = plan.index.groups
                systems = [g.id for g in groups if g.is_system and plan.included(g.id)]
                if plan.messages == sum(groups[g].message_count for g in systems):
                    # Nothing but system groups is left: keep the newest one, since a
                    # projection is never empty.
                    systems = systems[:-1]
                dropped = exclude_until(
                    plan, systems, target, self.name, "token budget fallback (system)"
                )
                changed += dropped
                notes.append(f"then {dropped} system groups")
        met = target(plan)
        stage.done("applied" if met else "target-missed", changed, met, ", ".join(notes))
        return StageOutcome(True, met, target)

    def protections(self, plan: Plan) -> list[ProtectedItem]:
        items = [
            protection(plan, "system", () if self.drop_system_if_needed else system_ids(plan)),
            protection(
                plan,
                "minimum_preserved",
                protected_newest(plan, self.minimum_preserved),
                "the newest non-system group (a projection is never empty)",
            ),
        ]
        return [i for i in items if i is not None]

    def variants(self) -> list[Variant]:
        out: list[Variant] = []
        if not self.drop_system_if_needed:
            out.append(
                Variant(
                    change_words("drop_system_if_needed", True, "token_budget"),
                    "drop_system_if_needed",
                    True,
                    replace(self, drop_system_if_needed=True),
                )
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "token_budget",
            "token_budget": self.token_budget,
            "early_stop": self.early_stop,
            "minimum_preserved": self.minimum_preserved,
            "drop_system_if_needed": self.drop_system_if_needed,
            "strategies": [s.to_dict() for s in self.strategies],
        }
