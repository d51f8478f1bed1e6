"""Truncation: exclude the oldest groups until the target holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compactlens.engine.plan import Plan
from compactlens.engine.profiles import check_profile, get_profile, with_profile_key
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
from compactlens.engine.triggers import Trigger
from compactlens.model.errors import ConfigError


@dataclass(frozen=True, slots=True)
class TruncationStrategy:
    """Exclude the oldest non-system groups, one at a time, until the target holds.

    Give a ``trigger`` (and optionally a ``target``, which defaults to the trigger's
    negation), or the reference keywords ``max_n`` / ``compact_to``: those measure
    tokens when a tokenizer is given to :func:`apply_compaction` and included
    messages otherwise. The newest ``minimum_preserved`` non-system groups and (with
    ``preserve_system``) system groups are never excluded. ``minimum_preserved``
    left unset takes the ``profile``'s default (32; 1 under ``maf``).
    """

    trigger: Trigger | None = None
    target: Trigger | None = None
    minimum_preserved: int | None = None
    preserve_system: bool = True
    preserve_first_user_group: bool = False
    max_n: int | None = None
    compact_to: int | None = None
    label: str = "truncation"
    profile: str | None = None

    def __post_init__(self) -> None:
        if self.profile is not None:
            check_profile(self.profile)
        if self.minimum_preserved is not None:
            check_count(self.minimum_preserved, "minimum_preserved")
        if self.max_n is not None or self.compact_to is not None:
            if self.trigger is not None:
                raise ConfigError("give either trigger/target or max_n/compact_to, not both")
            max_n = check_count(self.max_n, "max_n", minimum=1)
            compact_to = check_count(self.compact_to, "compact_to", minimum=1)
            if compact_to > max_n:
                raise ConfigError("compact_to must be less than or equal to max_n")
        elif self.trigger is None:
            raise ConfigError("TruncationStrategy needs a trigger (or max_n and compact_to)")

    @property
    def name(self) -> str:
        return self.label

    @property
    def preserved(self) -> int:
        """``minimum_preserved``, or the profile's default when unset."""
        if self.minimum_preserved is not None:
            return self.minimum_preserved
        return get_profile(self.profile).truncation_minimum_preserved

    def triggers(self, ctx: RunContext) -> tuple[Trigger | None, Trigger | None]:
        if self.max_n is not None and self.compact_to is not None:
            metric = "tokens" if ctx.tokenizer_given else "messages"
            return Trigger("exceed", metric, self.max_n), Trigger(
                "at_most", metric, self.compact_to
            )
        return resolve(self.trigger, self.target)

    def _protected(self, plan: Plan) -> set[int]:
        keep = protected_newest(plan, self.preserved)
        if self.preserve_system:
            keep |= system_ids(plan)
        if self.preserve_first_user_group:
            first_user = next((g.id for g in plan.index.groups if g.kind.value == "user"), None)
            if first_user is not None:
                keep.add(first_user)
        return keep

    def run(self, plan: Plan, ctx: RunContext) -> StageOutcome:
        trigger, target = self.triggers(ctx)
        stage = Stage(plan, ctx, self.name, trigger, target)
        if trigger is not None and not trigger(plan):
            stage.done("skipped", 0, True)
            return StageOutcome(False, True, target)
        keep = self._protected(plan)
        candidates = [g.id for g in plan.index.groups if g.id not in keep]
        changed = exclude_until(plan, candidates, target, self.name, "oldest first")
        met = target is None or target(plan)
        stage.done("applied" if met else "target-missed", changed, met)
        return StageOutcome(True, met, target)

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
        out = countdown_variants(self, "minimum_preserved", self.preserved, lowest=1)
        if self.preserve_system:
            out.append(flag_variant(self, "preserve_system", False))
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "truncation",
            "trigger": trigger_dict(self.trigger),
            "target": trigger_dict(self.target),
            "minimum_preserved": self.preserved,
            "preserve_system": self.preserve_system,
            "preserve_first_user_group": self.preserve_first_user_group,
            "max_n": self.max_n,
            "compact_to": self.compact_to,
        }
        return with_profile_key(out, self.profile)
