"""The values of fact survival: what a fact is (:data:`FactKind`, :data:`FactSource`,
:class:`Fact`), whether it survived (:class:`FactCheck`) and the report of one compaction
(:class:`FactReport`, with its recall by kind).

Not every extracted value is a fact a reader would miss: dates and times as tools print
them (``16:42:11``, ``Apr 9``, ``2026-02-12``), hashes and machine code (``8e41c07``,
``4883c480``), memory addresses (``DAT_0040074c``), percentages in tool output (a test
runner's ``3%``), tool names, paths of a long machine listing (``ls -R``), placeholders
(``../path/to/your.db``), redactions or secrets (``[REDACTED]``) and long bare numbers
a tool printed (``9971519902956727284``, a process handle) are *minor*
(:func:`minor_kind`). A report counts them apart (``minor``) and keeps them out of
recall, so the headline is driven by identifiers, paths, numbers with units, error
codes, names and decisions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from compactlens.analysis.judge import JudgeScore
from compactlens.model.noise import NoiseKind, noise_kind

#: What :func:`~compactlens.model.noise.noise_kind` says of a value: that function, or one
#: that remembers its answers for one analysis (:func:`noise_memo`).
NoiseOf: TypeAlias = Callable[[str], NoiseKind | None]


def noise_memo() -> NoiseOf:
    """:func:`~compactlens.model.noise.noise_kind` that answers each distinct value once,
    for one analysis (made per call, dropped with it): the context checks and the report
    look at each value two or three times, and a conversation repeats values across its
    messages."""
    return functools.cache(noise_kind)


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

#: Each kind in plain words, for a reader who does not know the code names.
FACT_KIND_LABELS: Mapping[FactKind, str] = MappingProxyType(
    {
        "latest_request": "the latest request",
        "identifier": "identifier",
        "path": "file path",
        "url": "link",
        "email": "e-mail address",
        "money": "amount of money",
        "quantity": "number with a unit",
        "date": "date",
        "quoted": "quoted name or text",
        "tool_name": "tool name",
    }
)

#: The minor kinds: values counted apart from the facts that matter (the value kinds of
#: :mod:`compactlens.model.noise`, tool names, and paths of a long machine listing).
MinorKind: TypeAlias = Literal[
    "timestamp",
    "hash",
    "api_id",
    "address",
    "percentage",
    "tool_name",
    "listing",
    "placeholder",
    "redaction",
    "number",
]
#: Each minor kind in plain words, in reporting order.
MINOR_KIND_LABELS: Mapping[MinorKind, str] = MappingProxyType(
    {
        "timestamp": "date or time",
        "hash": "hash or encoded blob",
        "api_id": "message or call id an API minted",
        "address": "memory address or machine code",
        "percentage": "percentage in tool output",
        "tool_name": "tool name",
        "listing": "path in a long file listing",
        "placeholder": "placeholder or example value",
        "redaction": "redaction or secret",
        "number": "long number in tool output (a handle or a counter)",
    }
)

#: Where a person wrote the text (a date written there may matter).
_PROSE_SOURCES = frozenset({"text", "reasoning", "approval"})
# An abbreviated month and day with no year, anywhere in the value (Apr 9), and a clock
# time anywhere in it (16:42, 02:00:01.874Z).
_CLOCK = re.compile(r"\d\d?:\d\d")
_MONTH_DAY = re.compile(r"^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.? \d\d?$")


def minor_kind(fact: Fact, noise_of: NoiseOf = noise_kind) -> MinorKind | None:
    """The minor kind of ``fact``, None for a fact that matters.

    The latest request always matters; a kind the fact's context gave
    (:attr:`Fact.minor`) wins; a tool name is not a fact about the task. Otherwise the
    value decides (:func:`~compactlens.model.noise.noise_kind`), within its kind: hex text
    is noise as an identifier or quoted (an address also as a quantity), a percentage only
    in tool output, and a date in tool output always; in prose, a time or a month and day
    with no year (``Apr 9``) is a timestamp, a calendar date a person wrote
    (``2024-03-28``, ``April 22``) matters. ``noise_of``: ``noise_kind`` or a
    :func:`noise_memo`.
    """
    if fact.kind == "latest_request":
        return None
    if fact.minor is not None:
        return fact.minor
    if fact.kind == "tool_name":
        return "tool_name"
    value = fact.value
    noise = noise_of(value)
    if noise in ("redaction", "placeholder"):
        return noise
    if fact.kind == "date":
        if fact.source not in _PROSE_SOURCES or _CLOCK.search(value) or _MONTH_DAY.match(value):
            return "timestamp"
        return None
    if noise in ("hash", "api_id", "address", "timestamp") and fact.kind in (
        "identifier",
        "quoted",
    ):
        return noise
    if noise == "hash" and fact.kind == "path":
        return noise  # an encoded blob with a slash in it (base64 is not a path)
    if noise == "address" and fact.kind == "quantity":
        return noise
    if noise == "percentage" and fact.kind == "quantity" and fact.source == "tool_result":
        return noise
    if noise == "number" and fact.source not in _PROSE_SOURCES:
        return noise  # a process handle, a counter: a number a person wrote still counts
    return None


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
    #: The minor kind the fact's context gives, None when its value alone decides (see
    #: :func:`minor_kind`): a path found only in a long machine listing, a short hex
    #: number in a disassembly.
    minor: MinorKind | None = None

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

    The facts are those of the whole conversation (one denominator per transcript);
    ``affected_messages`` are the original indices of the removed, collapsed or
    summarized messages, the only ones a fact can be lost from. ``judge`` is an optional,
    model-graded score (see :mod:`compactlens.analysis.judge`), never part of
    ``recall``.
    """

    checks: tuple[FactCheck, ...]
    affected_messages: tuple[int, ...]
    judge: JudgeScore | None = None
    #: The minor values (timestamps, hashes, redaction placeholders; see
    #: :func:`minor_kind`), checked like facts but outside ``checks`` and recall.
    minor: tuple[FactCheck, ...] = ()

    @classmethod
    def of(
        cls,
        checks: Iterable[FactCheck],
        affected_messages: Iterable[int],
        judge: JudgeScore | None = None,
        *,
        noise_of: NoiseOf = noise_kind,
    ) -> FactReport:
        """A report of ``checks``, the minor ones set apart (:func:`minor_kind`, asking
        ``noise_of``)."""
        major: list[FactCheck] = []
        minor: list[FactCheck] = []
        for c in checks:
            (minor if minor_kind(c.fact, noise_of) is not None else major).append(c)
        return cls(tuple(major), tuple(affected_messages), judge, tuple(minor))

    @property
    def minor_extracted(self) -> int:
        return len(self.minor)

    @property
    def minor_survived(self) -> int:
        return sum(1 for c in self.minor if c.survived)

    @property
    def minor_lost(self) -> tuple[Fact, ...]:
        return tuple(c.fact for c in self.minor if not c.survived)

    def minor_by_kind(self) -> tuple[tuple[MinorKind, int, int], ...]:
        """(minor kind, extracted, survived) of each minor kind found, in label order."""
        counts: dict[MinorKind, list[int]] = {}
        for c in self.minor:
            kind = minor_kind(c.fact)
            if kind is not None:
                slot = counts.setdefault(kind, [0, 0])
                slot[0] += 1
                slot[1] += int(c.survived)
        return tuple((k, *counts[k]) for k in MINOR_KIND_LABELS if k in counts)  # type: ignore[misc]

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
            "minor": {
                "extracted": self.minor_extracted,
                "survived": self.minor_survived,
                "by_kind": [
                    {"kind": k, "extracted": n, "survived": kept}
                    for k, n, kept in self.minor_by_kind()
                ],
            },
        }
