"""Sliding window: keep the newest user turns (or the newest groups), drop the rest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compactlens.engine.plan import Plan
from compactlens.engine.result import ProtectedItem
from compactlens.engine.strategies.base import (
    RunContext,
    Stage,
    StageOutcome,
    Variant,
    check_count,
    countdown_variants,
    exclude_until,
    flag_variant,
    protected_newest,
    protection,
    resolve,
    system_ids,
    trigger_dict,
)
from compactlens.engine.triggers import Trigger, turns_exceed
from compactlens.model.errors import ConfigError


@dataclass(frozen=True, slots=True)
class SlidingWindowStrategy:
    """Exclude whole user turns, oldest first, until the target holds.

    A turn is a user message and everything until the next one. ``keep_last_turns=N``
    is shorthand for ``trigger=turns_exceed(N)``. The newest ``minimum_preserved``
    turns are never touched. With the reference keyword ``keep_last_groups=K`` the
    window counts non-system groups instead: everything but the newest K
    non-system groups is excluded (system groups too when ``preserve_system`` is
    off, even when at most K non-system groups are left).
    """

    trigger: Trigger | None = None
    target: Trigger | None = None
    minimum_preserved: int = 1
    keep_last_turns: int | None = None
    keep_last_groups: int | None = None
    preserve_system: bool = True
    label: str = "sliding_window"

    def __post_init__(self) -> None:
        check_count(self.minimum_preserved, "minimum_preserved")
        given = [x is not None for x in (self.trigger, self.keep_last_turns, self.keep_last_groups)]
        if sum(given) != 1:
            raise ConfigError(
                "SlidingWindowStrategy needs exactly one of trigger, keep_last_turns "
                "or keep_last_groups"
            )
        if self.keep_last_turns is not None:
            check_count(self.keep_last_turns, "keep_last_turns", minimum=1)
        if self.keep_last_groups is not None:
            check_count(self.keep_last_groups, "keep_last_groups", minimum=1)

    @property
    def name(self) -> str:
        return self.label

    def triggers(self) -> tuple[Trigger | None, Trigger | None]:
        if self.keep_last_turns is not None:
            return resolve(turns_exceed(self.keep_last_turns), self.target)
        if self.keep_last_groups is not None:
            t = Trigger("exceed", "groups", self.keep_last_groups)
            return t, t.negate()
        return resolve(self.trigger, self.target)

    def _turns_kept(self, plan: Plan) -> set[int]:
        """The newest ``minimum_preserved`` turns that still have included groups."""
        kept: set[int] = set()
        if self.minimum_preserved <= 0:
            return kept
        for g in reversed(plan.index.groups):
            if g.turn is None or not plan.included(g.id):
                continue
            kept.add(g.turn)
            if len(kept) >= self.minimum_preserved:
                break
        return kept

    @staticmethod
    def _positional_turns(plan: Plan) -> list[int]:
        """Each group's turn; a system group (which has none) takes the turn it stands in."""
        out: list[int] = []
        current = 0
        for g in plan.index.groups:
            if g.turn is not None:
                current = g.turn
            out.append(current)
        return out

    def _protected(self, plan: Plan) -> set[int]:
        if self.keep_last_groups is not None:
            keep = protected_newest(plan, max(self.keep_last_groups, self.minimum_preserved))
        else:
            turns = self._turns_kept(plan)
            at = self._positional_turns(plan)
            keep = {g.id for g in plan.index.groups if at[g.id] in turns}
        if self.preserve_system:
            keep |= system_ids(plan)
        return keep

    def _system_outside(self, plan: Plan) -> bool:
        """Group window without ``preserve_system``: an included system group is outside."""
        return (
            self.keep_last_groups is not None
            and not self.preserve_system
            and bool(system_ids(plan))
        )

    def run(self, plan: Plan, ctx: RunContext) -> StageOutcome:
        trigger, target = self.triggers()
        stage = Stage(plan, ctx, self.name, trigger, target)
        if trigger is not None and not trigger(plan) and not self._system_outside(plan):
            stage.done("skipped", 0, True)
            return StageOutcome(False, True, target)
        keep = self._protected(plan)
        groups = plan.index.groups
        if self.keep_last_groups is not None:
            candidates = [g.id for g in groups if g.id not in keep]
            changed = exclude_until(plan, candidates, None, self.name, "outside the group window")
        else:
            # Exclude a whole turn at a time: check the target only between turns.
            changed = 0
            # System groups are in ``keep`` unless preserve_system is off; then they go
            # with the turn they stand in.
            at = self._positional_turns(plan)
            by_turn: dict[int, list[int]] = {}
            for g in groups:
                if g.id not in keep:
                    by_turn.setdefault(at[g.id], []).append(g.id)
            for turn in sorted(by_turn):
                if target is not None and target(plan):
                    break
                changed += exclude_until(
                    plan, by_turn[turn], None, self.name, f"turn {turn} is outside the window"
                )
        met = target is None or target(plan)
        stage.done("applied" if met else "target-missed", changed, met)
        return StageOutcome(True, met, target)

    def protections(self, plan: Plan) -> list[ProtectedItem]:
        if self.keep_last_groups is not None:
            newest = protection(
                plan,
                "minimum_preserved",
                protected_newest(plan, max(self.keep_last_groups, self.minimum_preserved)),
                f"the newest {self.keep_last_groups} non-system groups",
            )
        else:
            turns = self._turns_kept(plan)
            newest = protection(
                plan,
                "minimum_preserved",
                [g.id for g in plan.index.groups if g.turn in turns],
                "the newest user turn"
                if self.minimum_preserved == 1
                else f"the newest {self.minimum_preserved:,} user turns",
            )
        items = [
            protection(plan, "system", system_ids(plan) if self.preserve_system else ()),
            newest,
        ]
        return [i for i in items if i is not None]

    def variants(self) -> list[Variant]:
        if self.keep_last_groups is not None:
            out = countdown_variants(self, "keep_last_groups", self.keep_last_groups, lowest=1)
        else:
            out = countdown_variants(self, "minimum_preserved", self.minimum_preserved)
        if self.preserve_system:
            out.append(flag_variant(self, "preserve_system", False))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "sliding_window",
            "trigger": trigger_dict(self.trigger),
            "target": trigger_dict(self.target),
            "minimum_preserved": self.minimum_preserved,
            "keep_last_turns": self.keep_last_turns,
            "keep_last_groups": self.keep_last_groups,
            "preserve_system": self.preserve_system,
        }
