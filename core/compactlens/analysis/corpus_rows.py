"""The rows of a corpus table: one :class:`CorpusRow` per transcript, its columns and
their types, and the row of an analyzed or failed file."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from compactlens.analysis.report import CompactionReport
from compactlens.analysis.verdict import Verdict
from compactlens.model.errors import ConfigError


@dataclass(frozen=True, slots=True)
class CorpusRow:
    """One transcript's line of the corpus table (``status="failed"`` with ``error`` on failure)."""

    file: str
    status: str
    format: str | None = None
    messages_before: int | None = None
    messages_after: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    reason: str | None = None
    fact_recall: float | None = None
    facts_extracted: int | None = None
    facts_lost: int | None = None
    latest_request_lost: bool | None = None
    cache_prefix_messages: int | None = None
    cache_prefix_tokens: int | None = None
    cache_rewrite_tokens: int | None = None
    break_even_turn: int | None = None
    savings_usd: float | None = None
    turns_until_trigger: int | None = None
    problems: int | None = None
    problems_introduced: int | None = None
    problem_kinds: str | None = None
    warnings: str | None = None
    verdict: str | None = None
    costs: str | None = None
    next_step: str | None = None
    error: str | None = None
    duration_ms: float | None = None

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CorpusRow:
        """Rebuild a row, converting the strings a CSV file holds back to their types.

        :class:`~compactlens.model.errors.ConfigError` (a ``ValueError``) naming the column
        when a value does not fit its type, when ``file`` is missing or ``status`` is not one
        of :data:`ROW_STATUSES`.
        """
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = data.get(f.name)
            try:
                values[f.name] = _coerce(raw, COLUMN_TYPES[f.name])
            except (TypeError, ValueError):
                kind = COLUMN_TYPES[f.name].__name__
                raise ConfigError(f"column {f.name!r}: {str(raw)[:40]!r} is not {kind}") from None
        if not values["file"]:
            raise ConfigError("the row has no 'file'")
        if values["status"] not in ROW_STATUSES:
            raise ConfigError(
                f"column 'status': {str(values['status'])[:40]!r} is not one of {ROW_STATUSES}"
            )
        return cls(**values)


#: The statuses a row can have: a compaction's, or ``failed``.
ROW_STATUSES: tuple[str, ...] = ("compacted", "unchanged", "cannot-fit", "failed")

#: Column name -> Python type of a :class:`CorpusRow`, in table order.
COLUMN_TYPES: dict[str, type] = {
    "file": str,
    "status": str,
    "format": str,
    "messages_before": int,
    "messages_after": int,
    "tokens_before": int,
    "tokens_after": int,
    "reason": str,
    "fact_recall": float,
    "facts_extracted": int,
    "facts_lost": int,
    "latest_request_lost": bool,
    "cache_prefix_messages": int,
    "cache_prefix_tokens": int,
    "cache_rewrite_tokens": int,
    "break_even_turn": int,
    "savings_usd": float,
    "turns_until_trigger": int,
    "problems": int,
    "problems_introduced": int,
    "problem_kinds": str,
    "warnings": str,
    "verdict": str,
    "costs": str,
    "next_step": str,
    "error": str,
    "duration_ms": float,
}
COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(CorpusRow))
assert set(COLUMNS) == set(COLUMN_TYPES)


def _coerce(raw: Any, kind: type) -> Any:
    if raw is None or (isinstance(raw, str) and raw == "" and kind is not str):
        return None
    if isinstance(raw, float) and math.isnan(raw):
        return None
    if kind is bool:
        if isinstance(raw, str):
            text = raw.strip().lower()
            if text not in ("true", "1", "yes", "false", "0", "no"):
                raise ValueError(raw)
            return text in ("true", "1", "yes")
        return bool(raw)
    if kind is int:
        value = float(raw) if isinstance(raw, str) else raw
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(raw)
        return int(value)
    if kind is float:
        number = float(raw)
        if not math.isfinite(number):
            raise ValueError(raw)
        return number
    if not isinstance(raw, str):
        raise TypeError(raw)
    return raw if raw != "" else None


def row_from_report(
    file: str,
    fmt: str | None,
    report: CompactionReport,
    duration_ms: float,
    judged: Verdict | None = None,
) -> CorpusRow:
    """The table row of one analyzed transcript; ``judged``, the run's verdict, gives the
    ``verdict`` (its level), ``costs`` (the checks that did not pass) and ``next_step``
    columns."""
    errors = report.errors
    kinds = sorted({f"{p.provider}:{p.kind}" for p in errors})
    cost = report.cache.cost
    return CorpusRow(
        file=file,
        status=report.status,
        format=fmt,
        messages_before=report.messages_before,
        messages_after=report.messages_after,
        tokens_before=report.tokens_before,
        tokens_after=report.tokens_after,
        reason=report.reason,
        fact_recall=round(report.facts.recall, 6),
        facts_extracted=report.facts.extracted,
        facts_lost=len(report.facts.lost),
        latest_request_lost=report.facts.latest_request_lost,
        cache_prefix_messages=report.cache.prefix_messages,
        cache_prefix_tokens=report.cache.prefix_tokens,
        cache_rewrite_tokens=report.cache.rewrite_tokens,
        break_even_turn=cost.break_even_turn if cost is not None else None,
        savings_usd=round(cost.savings, 8) if cost is not None else None,
        turns_until_trigger=report.retrigger.turns_until_trigger,
        problems=len(errors),
        problems_introduced=sum(1 for p in report.introduced if p.severity == "error"),
        problem_kinds=", ".join(kinds) or None,
        warnings=" | ".join(report.warnings) or None,
        verdict=judged.level if judged is not None else None,
        costs=" | ".join(r.text for r in judged.costs) or None if judged is not None else None,
        next_step=judged.next_step if judged is not None else None,
        duration_ms=round(duration_ms, 3),
    )


def failed_row(
    file: str, error: BaseException | str, duration_ms: float | None = None
) -> CorpusRow:
    """The row of a file that could not be processed."""
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return CorpusRow(
        file=file,
        status="failed",
        reason="failed",
        error=text[:2000],
        duration_ms=round(duration_ms, 3) if duration_ms is not None else None,
    )
