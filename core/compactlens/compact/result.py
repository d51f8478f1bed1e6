"""The exact result contract of :func:`compactlens.compact.contract.compact`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from compactlens.engine.result import TokenCounts
from compactlens.model.display import card_html, card_text
from compactlens.model.messages import Message
from compactlens.model.serialize import message_to_dict
from compactlens.summarizers.base import Usage

CompactStatus: TypeAlias = Literal["compacted", "cannot-fit"]

#: Why ``compact()`` could not produce a history under the target.
CannotFitReason: TypeAlias = Literal[
    "no-safe-boundary",
    "protected-history",
    "incomplete-summary",
    "empty-summary",
    "summary-too-large",
]
CANNOT_FIT_REASONS: tuple[CannotFitReason, ...] = (
    "no-safe-boundary",
    "protected-history",
    "incomplete-summary",
    "empty-summary",
    "summary-too-large",
)


def _item_to_json(item: Any) -> Any:
    if isinstance(item, Message):
        return message_to_dict(item)
    if isinstance(item, Mapping):
        return dict(item)
    return item


@dataclass(frozen=True, slots=True)
class CompactResult:
    """What one ``compact()`` call did.

    Always: ``status``, ``messages`` (the caller's kind; on ``cannot-fit`` a new list
    holding the very same input objects), ``tokens`` (``after == before`` on
    ``cannot-fit``), ``usage`` (the summarizer's whenever it was called, even when
    its output was rejected; None when it was not called or reported nothing).

    On ``compacted``: ``summary`` (trimmed summary text, without the prefix) and
    ``replaced_range`` (half-open ``(start, end)`` into the input). On
    ``cannot-fit``: ``reason``.

    Diagnostics (for the inspector): ``detail`` says in words why; ``candidate_tokens``
    is the count of the rejected candidate (empty summary for ``protected-history``,
    the real summary for ``summary-too-large``); ``rejected_summary`` the text the
    summarizer returned when it was rejected; ``range_considered`` the range that was
    (or would have been) replaced; ``reinserted_index`` the input index of the latest
    user message re-inserted after the summary; ``summary_index`` the output index of
    the summary message; ``finish_reason`` and ``model`` from the summarizer.
    """

    status: CompactStatus
    messages: list[Any]
    tokens: TokenCounts
    target_tokens: int
    keep_last_messages: int
    usage: Usage | None = None
    summary: str | None = None
    replaced_range: tuple[int, int] | None = None
    reason: CannotFitReason | None = None
    detail: str | None = None
    candidate_tokens: int | None = None
    rejected_summary: str | None = None
    range_considered: tuple[int, int] | None = None
    reinserted_index: int | None = None
    summary_index: int | None = None
    finish_reason: str | None = None
    model: str | None = None
    summarizer_called: bool = False

    @property
    def compacted(self) -> bool:
        return self.status == "compacted"

    @property
    def cannot_fit(self) -> bool:
        return self.status == "cannot-fit"

    @property
    def smallest_target(self) -> int | None:
        """The smallest target this call's other parameters could fit, on ``cannot-fit``:
        the rejected candidate's tokens, plus the one token any summary text needs when
        the reason is ``protected-history`` (that candidate has an empty summary). None
        when it compacted or no candidate was counted. Every surface that names "the
        smallest target" of a ``compact()`` call reads this one number."""
        if self.status != "cannot-fit" or self.candidate_tokens is None:
            return None
        return self.candidate_tokens + (1 if self.reason == "protected-history" else 0)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable dict (messages as wire dicts or canonical message dicts)."""
        return {
            "status": self.status,
            "messages": [_item_to_json(m) for m in self.messages],
            "tokens": self.tokens.to_dict(),
            "target_tokens": self.target_tokens,
            "keep_last_messages": self.keep_last_messages,
            "usage": self.usage.to_dict() if self.usage else None,
            "summary": self.summary,
            "replaced_range": list(self.replaced_range) if self.replaced_range else None,
            "reason": self.reason,
            "detail": self.detail,
            "candidate_tokens": self.candidate_tokens,
            "rejected_summary": self.rejected_summary,
            "range_considered": list(self.range_considered) if self.range_considered else None,
            "reinserted_index": self.reinserted_index,
            "summary_index": self.summary_index,
            "finish_reason": self.finish_reason,
            "model": self.model,
            "summarizer_called": self.summarizer_called,
        }

    def __repr__(self) -> str:
        from compactlens.compact.display import compact_card

        return card_text(compact_card(self))

    def _repr_html_(self) -> str:
        from compactlens.compact.display import compact_card

        return card_html(compact_card(self))


__all__ = [
    "CANNOT_FIT_REASONS",
    "CannotFitReason",
    "CompactResult",
    "CompactStatus",
    "TokenCounts",
]
