"""Clamp oversized content: cut a huge text or tool output to its head and tail.

One pasted log or one tool result of 40,000 tokens can make a history impossible to fit
while everything around it is small. Clamping keeps every message and every call/result
pair where it is and shortens only the content above a limit: the head and the tail stay,
with a marker in between saying how much was elided.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from compactlens.engine.index import GroupKind
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
    protected_newest,
    protection,
    resolve,
    trigger_dict,
)
from compactlens.engine.triggers import Trigger
from compactlens.engine.vocabulary import change_words, plural
from compactlens.model.errors import ConfigError
from compactlens.model.messages import Message, Part, TextPart, ToolResultPart

#: The share of the kept characters that comes from the head (the rest is the tail).
HEAD_SHARE = 0.7


def elision_marker(chars: int, tokens: int) -> str:
    return f"\n[... {chars:,} characters (about {tokens:,} tokens) elided by compaction ...]\n"


def clamp_text(text: str, tokens: int, limit: int) -> str | None:
    """``text`` (of ``tokens`` tokens) cut to about ``limit`` tokens, head and tail kept;
    None when it is within the limit."""
    if tokens <= limit:
        return None
    keep = max(1, int(len(text) * limit / tokens))
    head = int(keep * HEAD_SHARE)
    tail = keep - head
    elided = len(text) - head - tail
    if elided <= 0:
        return None
    cut = text[:head] + elision_marker(elided, tokens - limit) + (text[-tail:] if tail else "")
    return cut


@dataclass(frozen=True, slots=True)
class ClampStrategy:
    """Cut every text or tool output above a token limit to its head and tail.

    ``max_tokens`` is the limit for one text part or one tool output; ``per_tool`` sets
    another limit for the outputs of a named tool. Tool-call arguments, media and opaque
    content are never cut. Groups are clamped oldest first (the guards' prunable tools
    first); with a ``trigger`` the stage stops once the ``target`` holds and never touches
    the newest ``minimum_preserved`` non-system groups, without one every oversized part is
    clamped. A clamped group keeps its messages, ids and order: it is reported as
    ``collapsed`` by ``clamp`` and may still be collapsed or dropped by a later stage.
    """

    max_tokens: int = 2000
    per_tool: Mapping[str, int] = field(default_factory=dict)
    trigger: Trigger | None = None
    target: Trigger | None = None
    minimum_preserved: int = 0
    label: str = "clamp"

    def __post_init__(self) -> None:
        check_count(self.max_tokens, "max_tokens", minimum=1)
        check_count(self.minimum_preserved, "minimum_preserved")
        if not isinstance(self.per_tool, Mapping):
            raise ConfigError(f"per_tool must map tool names to limits, got {self.per_tool!r}")
        for name, limit in self.per_tool.items():
            if not isinstance(name, str) or not name:
                raise ConfigError(f"per_tool: tool names must be non-empty strings, got {name!r}")
            check_count(limit, f"per_tool[{name!r}]", minimum=1)
        object.__setattr__(self, "per_tool", dict(self.per_tool))

    @property
    def name(self) -> str:
        return self.label

    def _limit(self, tool: str | None) -> int:
        if tool is not None and tool in self.per_tool:
            return self.per_tool[tool]
        return self.max_tokens

    def _part(self, part: Part, ctx: RunContext, names: Mapping[str, str]) -> Part:
        if isinstance(part, TextPart):
            cut = clamp_text(part.text, ctx.tokenizer.count_tokens(part.text), self.max_tokens)
            return part if cut is None else TextPart(cut)
        if isinstance(part, ToolResultPart):
            tool = part.name or names.get(part.call_id)
            limit = self._limit(tool)
            cut = clamp_text(part.output, ctx.tokenizer.count_tokens(part.output), limit)
            return part if cut is None else replace(part, output=cut)
        return part

    def clamp_message(
        self, message: Message, ctx: RunContext, names: Mapping[str, str]
    ) -> Message | None:
        """The clamped copy of ``message``, or None when nothing in it is over its limit."""
        parts = tuple(self._part(p, ctx, names) for p in message.parts)
        if all(a is b for a, b in zip(parts, message.parts, strict=True)):
            return None
        # ``wire`` is cleared so the message is written again from its parts; ``origin``
        # keeps the provider's unknown keys.
        return replace(message, parts=parts, wire=None, origin=message.wire or message.origin)

    def _clamp_group(self, plan: Plan, ctx: RunContext, gid: int) -> bool:
        ix = plan.index
        group = ix.groups[gid]
        names = dict(zip(group.call_ids, group.tool_names, strict=False))
        originals = [ix.messages[k] for k in group.indices]
        clamped = [self.clamp_message(m, ctx, names) for m in originals]
        if all(c is None for c in clamped):
            return False
        out = tuple(c if c is not None else m for c, m in zip(clamped, originals, strict=True))
        tokens = sum(ctx.count(m) for m in out)
        if tokens >= group.tokens:
            return False
        cut = group.tokens - tokens
        return plan.clamp(gid, out, tokens, self.name, f"clamped: {cut:,} tokens elided")

    def _protected(self, plan: Plan) -> set[int]:
        return protected_newest(plan, self.minimum_preserved) if self.trigger else set()

    def run(self, plan: Plan, ctx: RunContext) -> StageOutcome:
        trigger, target = resolve(self.trigger, self.target)
        stage = Stage(plan, ctx, self.name, trigger, target)
        if trigger is not None and not trigger(plan):
            stage.done("skipped", 0, True)
            return StageOutcome(False, True, target)
        protected = self._protected(plan)
        locks = plan.locks
        candidates = locks.order(
            g.id
            for g in plan.index.groups
            if not g.is_system
            and g.kind is not GroupKind.SUMMARY
            and plan.untouched(g.id)
            and g.id not in protected
            and g.id not in locks.verbatim
        )
        changed = exclude_until(
            plan, candidates, target, self.name, "", step=lambda g: self._clamp_group(plan, ctx, g)
        )
        met = target is None or target(plan)
        if trigger is None and not changed:
            stage.done("skipped", 0, True, "no content is over its limit")
            return StageOutcome(False, True, None)
        limits = f"limit {self.max_tokens:,} tokens" + (
            f", {len(self.per_tool)} per-tool limits" if self.per_tool else ""
        )
        stage.done(
            "applied" if met else "target-missed",
            changed,
            met,
            f"{plural(changed, 'group')} clamped ({limits})",
        )
        return StageOutcome(True, met, target)

    def protections(self, plan: Plan) -> list[ProtectedItem]:
        items = [
            protection(plan, "minimum_preserved", self._protected(plan), "the newest groups"),
            protection(
                plan,
                "keep_tools",
                plan.locks.verbatim,
                "outputs of these tools are never clamped (guards)",
            ),
        ]
        return [i for i in items if i is not None]

    def variants(self) -> list[Variant]:
        out: list[Variant] = []
        for limit in (self.max_tokens // 2, self.max_tokens // 4, self.max_tokens // 10):
            if 1 <= limit < self.max_tokens:
                out.append(
                    Variant(
                        change_words("max_tokens", limit, "clamp"),
                        "max_tokens",
                        limit,
                        replace(self, max_tokens=limit),
                    )
                )
        if self.trigger is not None and self.minimum_preserved:
            out.extend(countdown_variants(self, "minimum_preserved", self.minimum_preserved))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "clamp",
            "max_tokens": self.max_tokens,
            "per_tool": dict(self.per_tool),
            "trigger": trigger_dict(self.trigger),
            "target": trigger_dict(self.target),
            "minimum_preserved": self.minimum_preserved,
        }
