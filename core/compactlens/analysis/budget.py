"""What a compacted history still costs, and why: the budget by protection reason.

:func:`budget_breakdown` splits an engine result's tokens after compaction by the
protection that kept each group (system, the newest groups, an unresolved call...),
collapsed lines, summaries and the rest; :func:`compact_budget` does the same for the
one-shot ``compact()`` candidate from its boundary analysis. Both sum to the tokens they
describe, so a chart of them is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compactlens.compact.boundary import BoundaryAnalysis
from compactlens.compact.contract import summary_message
from compactlens.engine.index import MessageIndex, index_counter
from compactlens.engine.result import CompactionResult, ProtectedItem
from compactlens.engine.vocabulary import PROTECTIONS, protection_words

#: Why content was kept, in words (the vocabulary's table).
PROTECTION_WORDS = PROTECTIONS


def unique_protections(items: Sequence[ProtectedItem]) -> list[ProtectedItem]:
    """Protected items without repeats (pipeline stages often report the same content)."""
    seen: set[tuple[str, tuple[int, ...]]] = set()
    out: list[ProtectedItem] = []
    for item in items:
        key = (item.why, tuple(item.group_ids))
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def protection_label(kind: str) -> str:
    return protection_words(kind)


#: What the summaries' bar is: written by the compaction itself, so not what "cannot be
#: removed" (a lower summary limit shortens it).
SUMMARY_DETAIL = "written by the compaction: a lower “summary length cap” shortens them"
#: The label of that bar.
SUMMARIES = "summaries"


@dataclass(frozen=True, slots=True)
class BudgetPart:
    """One bar of the budget waterfall."""

    label: str
    tokens: int
    detail: str
    group_ids: tuple[int, ...] = ()


def budget_breakdown(result: CompactionResult, index: MessageIndex) -> list[BudgetPart]:
    """What the compacted history still costs, by reason, summing to ``tokens_after``.

    Each kept group is attributed to the first protection that names it (system, the
    newest groups kept by ``minimum_preserved`` / ``keep_last_messages``, an unresolved
    call...), collapsed lines and inserted summaries get their own bars, and what is
    left is "other kept content" (kept because the target was met before reaching it,
    or because no stage could touch it).
    """
    after = {d.group_id: d.tokens_after for d in result.decisions if d.group_id is not None}
    claimed: dict[int, str] = {}
    details: dict[str, str] = {}
    order: list[str] = []
    system = [g.id for g in index.groups if g.is_system and after.get(g.id, 0) > 0]
    if system:
        label = "system messages"
        claimed.update((gid, label) for gid in system)
        details[label] = "system and developer instructions"
        order.append(label)
    for item in result.explanation.protected:
        if item.why in ("replacement_text", "summary_wrapper", "summary_range"):
            continue
        label = protection_label(item.why)
        for gid in item.group_ids:
            if gid in after and gid not in claimed and after[gid] > 0:
                claimed[gid] = label
        if label not in details:
            details[label] = item.detail
            order.append(label)
    parts: list[BudgetPart] = []
    sums: dict[str, tuple[int, list[int]]] = {}
    other_tokens = 0
    other_ids: list[int] = []
    collapsed_tokens = 0
    collapsed_ids: list[int] = []
    inserted_tokens = 0
    for d in result.decisions:
        if d.action == "inserted":
            inserted_tokens += d.tokens_after
            continue
        if d.group_id is None or d.tokens_after <= 0:
            continue
        if d.action == "collapsed":
            collapsed_tokens += d.tokens_after
            collapsed_ids.append(d.group_id)
            continue
        owner = claimed.get(d.group_id)
        if owner is None:
            other_tokens += d.tokens_after
            other_ids.append(d.group_id)
        else:
            tokens, ids = sums.get(owner, (0, []))
            ids.append(d.group_id)
            sums[owner] = (tokens + d.tokens_after, ids)
    for label in order:
        if label in sums:
            tokens, ids = sums[label]
            parts.append(BudgetPart(label, tokens, details.get(label, ""), tuple(ids)))
    if collapsed_tokens:
        parts.append(
            BudgetPart(
                "collapsed lines",
                collapsed_tokens,
                "the notes that replaced collapsed tool-call groups",
                tuple(collapsed_ids),
            )
        )
    if inserted_tokens:
        parts.append(BudgetPart(SUMMARIES, inserted_tokens, SUMMARY_DETAIL))
    if other_tokens:
        untouched = result.status == "unchanged"
        parts.append(
            BudgetPart(
                "not compacted (no trigger fired)" if untouched else "other kept content",
                other_tokens,
                "no trigger fired, so no stage ran"
                if untouched
                else "kept because no stage removed it before the run ended",
                tuple(other_ids),
            )
        )
    wrapper = next((p for p in result.explanation.protected if p.why == "summary_wrapper"), None)
    if wrapper is not None and not inserted_tokens:
        parts.append(BudgetPart("summary wrapper", wrapper.tokens, wrapper.detail))
    return parts


def compact_budget(boundary: BoundaryAnalysis, index: MessageIndex) -> list[BudgetPart]:
    """The ``compact()`` candidate's budget: what stays besides the summary, by reason.

    Leading system messages, every kept message by its first protection reason, the
    re-inserted latest user message and the summary wrapper (its prefix and framing).
    What is left under the target is the room for the summary text.
    """
    counter = index_counter(index)
    sums: dict[str, tuple[int, set[int], str]] = {}
    order: list[str] = []

    def add(label: str, tokens: int, gid: int, detail: str) -> None:
        if label not in sums:
            sums[label] = (0, set(), detail)
            order.append(label)
        total, ids, first_detail = sums[label]
        ids.add(gid)
        sums[label] = (total + tokens, ids, first_detail)

    for row in boundary.messages:
        tokens = index.message_tokens[row.index]
        gid = index.group_of[row.index]
        if row.state == "leading-system":
            add("leading system messages", tokens, gid, "system messages before the range")
        elif row.state == "summarized":
            if row.reinserted:
                add(
                    "re-inserted latest user message",
                    tokens,
                    gid,
                    "the latest user message is summarized and also kept verbatim",
                )
        else:
            reason = row.reasons[0] if row.reasons else None
            label = protection_label(reason.kind) if reason is not None else "after the range"
            add(label, tokens, gid, reason.detail if reason is not None else "")
    parts = [
        BudgetPart(label, sums[label][0], sums[label][2], tuple(sorted(sums[label][1])))
        for label in order
    ]
    parts.append(
        BudgetPart(
            "summary wrapper",
            counter([summary_message("")]),
            "the summary message's prefix and framing, before any summary text",
        )
    )
    return parts


__all__ = [
    "PROTECTION_WORDS",
    "SUMMARIES",
    "SUMMARY_DETAIL",
    "BudgetPart",
    "budget_breakdown",
    "compact_budget",
    "protection_label",
    "unique_protections",
]
