"""Notebook views of the one-shot ``compact()`` result: its repr and its display card."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compactlens.engine.vocabulary import param_words
from compactlens.model import Card

if TYPE_CHECKING:
    from compactlens.compact.result import CompactResult


def compact_card(result: CompactResult) -> Card:
    facts: list[tuple[str, str]] = [
        (param_words("keep_last_messages"), f"{result.keep_last_messages:,}"),
        ("messages out", f"{len(result.messages):,}"),
    ]
    if result.replaced_range is not None:
        start, end = result.replaced_range
        facts.append(("replaced", f"messages {start:,} to {end - 1:,}"))
    if result.summary:
        facts.append(("summary", result.summary))
    reason: str = result.reason or ""
    if result.detail:
        reason = f"{reason}: {result.detail}" if reason else result.detail
    return Card(
        title="CompactResult",
        status=result.status,
        tokens_before=result.tokens.before,
        tokens_after=result.tokens.after,
        budget=result.target_tokens,
        facts=tuple(facts),
        reason=reason,
    )
