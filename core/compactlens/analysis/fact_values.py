"""The values of fact survival: what a fact is (:data:`FactKind`, :data:`FactSource`,
:class:`Fact`), whether it survived (:class:`FactCheck`) and the report of one compaction
(:class:`FactReport`, with its recall by kind)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from compactlens.analysis.judge import JudgeScore

FactKind: TypeAlias = Literal[
    "url",
    "email",
    "path",
    "date",
    "money",
    "quantity",
    "identifier",
    "quoted",
    "tool_name",
    "latest_request",
]

#: Every fact kind, in reporting order.
FACT_KINDS: tuple[FactKind, ...] = (
    "latest_request",
    "identifier",
    "path",
    "url",
    "email",
    "money",
    "quantity",
    "date",
    "quoted",
    "tool_name",
)

#: Where in a message a fact was found.
FactSource: TypeAlias = Literal[
    "text", "reasoning", "tool_call", "tool_arguments", "tool_result", "approval", "media"
]


@dataclass(frozen=True, slots=True)
class Fact:
    """A verbatim string a continuation may need, and the message it came from.

    ``message_index`` is the position in the original transcript of the first
    affected message holding it; ``source`` says which part (text, tool_result...).
    """

    kind: FactKind
    value: str
    message_index: int
    role: str
    source: FactSource

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "value": self.value,
            "message_index": self.message_index,
            "role": self.role,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class FactCheck:
    """One extracted fact and whether it still appears verbatim after compaction."""

    fact: Fact
    survived: bool

    def to_dict(self) -> dict[str, Any]:
        return {**self.fact.to_dict(), "survived": self.survived}


@dataclass(frozen=True, slots=True)
class KindRecall:
    """Recall of one fact kind."""

    kind: FactKind
    extracted: int
    survived: int

    @property
    def recall(self) -> float:
        return self.survived / self.extracted if self.extracted else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "extracted": self.extracted,
            "survived": self.survived,
            "recall": round(self.recall, 6),
        }


@dataclass(frozen=True, slots=True)
class FactReport:
    """Fact survival of one compaction (deterministic, no model).

    ``affected_messages`` are the original indices of the removed, collapsed or
    summarized messages the facts were extracted from. ``judge`` is an optional,
    model-graded score (see :mod:`compactlens.analysis.judge`), never part of
    ``recall``.
    """

    checks: tuple[FactCheck, ...]
    affected_messages: tuple[int, ...]
    judge: JudgeScore | None = None

    @property
    def extracted(self) -> int:
        return len(self.checks)

    @property
    def survived(self) -> int:
        return sum(1 for c in self.checks if c.survived)

    @property
    def recall(self) -> float:
        """``survived / extracted``; 1.0 when no fact was extracted."""
        return self.survived / self.extracted if self.checks else 1.0

    @property
    def lost(self) -> tuple[Fact, ...]:
        return tuple(c.fact for c in self.checks if not c.survived)

    @property
    def latest_request_lost(self) -> bool:
        return any(f.kind == "latest_request" for f in self.lost)

    def by_kind(self) -> tuple[KindRecall, ...]:
        counts: dict[FactKind, list[int]] = {}
        for c in self.checks:
            slot = counts.setdefault(c.fact.kind, [0, 0])
            slot[0] += 1
            slot[1] += int(c.survived)
        return tuple(KindRecall(k, counts[k][0], counts[k][1]) for k in FACT_KINDS if k in counts)

    def to_dict(self, *, max_lost: int | None = None) -> dict[str, Any]:
        lost = self.lost
        shown = lost if max_lost is None else lost[:max_lost]
        return {
            "extracted": self.extracted,
            "survived": self.survived,
            "recall": round(self.recall, 6),
            "latest_request_lost": self.latest_request_lost,
            "affected_messages": list(self.affected_messages),
            "by_kind": [k.to_dict() for k in self.by_kind()],
            "lost": [f.to_dict() for f in shown],
            "lost_total": len(lost),
            "judge": self.judge.to_dict() if self.judge is not None else None,
        }
