"""Selective tool-call removal: drop older tool-call groups entirely."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compactlens.engine.index import GroupKind
from compactlens.engine.plan import Plan
from compactlens.engine.result import ProtectedItem
from compactlens.engine.strategies.base import (
    RunContext,
    StageOutcome,
    Variant,
    check_count,
    countdown_variants,
    exclude_until,
    newest_tool_groups,
    open_tool_stage,
    protected_newest,
    protection,
    resolve,
    trigger_dict,
)
from compactlens.engine.triggers import Trigger


@dataclass(frozen=True, slots=True)
class SelectiveToolCallCompactionStrategy:
    """Exclude older tool-call groups (calls and results together), oldest first.

    The newest ``keep_last_tool_call_groups`` stay; user and plain assistant
    messages are never touched. With a ``trigger`` it stops once the ``target``
    holds and never touches the newest ``minimum_preserved`` non-system groups;
    without one every eligible tool-call group goes.
    """

    trigger: Trigger | None = None
    target: Trigger | None = None
    keep_last_tool_call_groups: int = 1
    minimum_preserved: int = 0
    label: str = "selective_tool_calls"

    def __post_init__(self) -> None:
        check_count(self.keep_last_tool_call_groups, "keep_last_tool_call_groups")
        check_count(self.minimum_preserved, "minimum_preserved")

    @property
    def name(self) -> str:
        return self.label

    def _protected(self, plan: Plan) -> tuple[set[int], set[int]]:
        newest_tools = newest_tool_groups(plan, self.keep_last_tool_call_groups)
        return newest_tools, protected_newest(plan, self.minimum_preserved)

    def run(self, plan: Plan, ctx: RunContext) -> StageOutcome:
        trigger, target = resolve(self.trigger, self.target)
        newest_tools, newest = self._protected(plan)
        stage, candidates, idle = open_tool_stage(
            plan, ctx, self.name, trigger, target, newest_tools | newest, untouched_only=False
        )
        if idle is not None:
            return idle
        changed = exclude_until(plan, candidates, target, self.name, "older tool-call group")
        met = target is None or target(plan)
        stage.done("applied" if met else "target-missed", changed, met)
        return StageOutcome(True, met, target)

    def protections(self, plan: Plan) -> list[ProtectedItem]:
        newest_tools, newest = self._protected(plan)
        items = [
            protection(plan, "keep_last_tool_call_groups", newest_tools),
            protection(plan, "minimum_preserved", newest),
            protection(
                plan,
                "not_a_tool_call",
                [g.id for g in plan.index.groups if g.kind is not GroupKind.TOOL_CALL],
                "Selective tool-call removal only removes tool-call groups",
            ),
        ]
        return [i for i in items if i is not None]

    def variants(self) -> list[Variant]:
        out = countdown_variants(
            self, "keep_last_tool_call_groups", self.keep_last_tool_call_groups
        )
        out.extend(countdown_variants(self, "minimum_preserved", self.minimum_preserved))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "selective_tool_calls",
            "trigger": trigger_dict(self.trigger),
            "target": trigger_dict(self.target),
            "keep_last_tool_call_groups": self.keep_last_tool_call_groups,
            "minimum_preserved": self.minimum_preserved,
        }
