"""Why a compaction could not fit, and what would make it fit, found by re-running.

:func:`explain_cannot_fit` explains a ``compact()`` call (its boundary, the smallest
target, the largest smaller ``keep_last_messages`` that fits); :func:`compact_as_result`
shows a ``compact()`` run as an engine :class:`~compactlens.CompactionResult` so every
consumer (CLI, inspector, notebooks) reads one shape; :func:`compact_over_index` runs
``compact()`` over a prebuilt index with both. Engine runs are explained by
:mod:`compactlens.engine.explain` during the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from compactlens.compact.boundary import BoundaryAnalysis, analyze_boundary
from compactlens.compact.contract import build_candidate, compact, make_counter, summary_message
from compactlens.compact.result import CompactResult
from compactlens.engine.explain import met_explanation, target_suggestion, unchanged_explanation
from compactlens.engine.index import GroupKind, MessageIndex, index_counter, pairing_problems
from compactlens.engine.result import (
    Action,
    CompactionResult,
    Decisions,
    Explanation,
    GroupDecision,
    ProtectedItem,
    StageEvent,
    Suggestion,
)
from compactlens.engine.triggers import tokens_exceed
from compactlens.engine.vocabulary import change_words, plural
from compactlens.formats.caller import from_caller
from compactlens.model.messages import Message
from compactlens.model.validation import check_int
from compactlens.summarizers.base import Summarizer
from compactlens.summarizers.extractive import ExtractiveSummarizer
from compactlens.summarizers.testing import FakeSummarizer


@dataclass(frozen=True, slots=True)
class FitSuggestion:
    """A single parameter change, checked by actually re-running ``compact()``.

    ``status`` / ``reason`` / ``tokens_after`` are those of the re-run;
    ``verified_with`` names the summarizer used for it (``replayed summary`` re-uses
    the rejected summary text, so no model is called).
    """

    parameter: Literal["target_tokens", "keep_last_messages"]
    value: int
    status: str
    reason: str | None
    tokens_after: int | None
    verified_with: str

    @property
    def fits(self) -> bool:
        return self.status == "compacted"

    def describe(self) -> str:
        outcome = (
            f"fits ({self.tokens_after} tokens)"
            if self.fits
            else f"still cannot fit ({self.reason})"
        )
        return f"{self.parameter}={self.value}: {outcome}, checked with {self.verified_with}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameter": self.parameter,
            "value": self.value,
            "status": self.status,
            "reason": self.reason,
            "tokens_after": self.tokens_after,
            "verified_with": self.verified_with,
            "describe": self.describe(),
        }


@dataclass(frozen=True, slots=True)
class CannotFitExplanation:
    """Why a ``compact()`` call could not fit, and what single change would fix it.

    ``minimum_target_tokens`` is the smallest target at which the summarizer is
    called at all (the candidate with an empty summary plus one token);
    ``smallest_fitting_target`` the smallest target verified to compact;
    ``suggestions`` the verified single-parameter changes, best first.
    """

    reason: str | None
    detail: str | None
    analysis: BoundaryAnalysis
    minimum_target_tokens: int | None
    smallest_fitting_target: int | None
    suggestions: tuple[FitSuggestion, ...]
    lines: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "detail": self.detail,
            "analysis": self.analysis.to_dict(),
            "minimum_target_tokens": self.minimum_target_tokens,
            "smallest_fitting_target": self.smallest_fitting_target,
            "suggestions": [s.to_dict() for s in self.suggestions],
            "lines": list(self.lines),
        }


def explain_cannot_fit(
    messages: Sequence[Any],
    result: Any = None,
    *,
    target_tokens: int,
    keep_last_messages: int = 4,
    summarizer: Any = None,
    instructions: str | None = None,
    count_tokens: Any = None,
    format: str | None = None,
    max_reruns: int = 12,
) -> CannotFitExplanation:
    """Explain a ``cannot-fit`` result and find the changes that make it fit, by re-running.

    ``result`` is the ``CompactResult`` to explain (computed with ``summarizer`` or the
    extractive summarizer when omitted). Re-runs use ``summarizer`` when given (a
    model summarizer makes one call per re-run), else a replay of the rejected
    summary when there is one, else the ``ExtractiveSummarizer``.
    Tried: the smallest ``target_tokens`` (and, from it, ``smallest_fitting_target``)
    and the largest smaller ``keep_last_messages``. For ``incomplete-summary`` and
    ``empty-summary`` no parameter change is suggested: the summarizer's output was
    the problem. At most ``max_reruns`` re-runs are made.
    """
    keep = check_int("keep_last_messages", keep_last_messages)
    target = check_int("target_tokens", target_tokens)
    if result is None:
        result = compact(
            messages,
            summarizer=summarizer if summarizer is not None else ExtractiveSummarizer(),
            target_tokens=target,
            keep_last_messages=keep,
            instructions=instructions,
            count_tokens=count_tokens,
            format=format,
        )
    caller = from_caller(messages, format=format)
    msgs = caller.messages
    analysis = analyze_boundary(msgs, keep)
    counter = make_counter(caller, count_tokens)
    minimum: int | None = None
    if analysis.end is not None:
        minimum = counter(build_candidate(msgs, analysis, "")) + 1

    reason = getattr(result, "reason", None)
    detail = getattr(result, "detail", None)
    lines = list(analysis.explain())
    if detail:
        lines.append(f"{reason}: {detail}")
    if getattr(result, "status", None) == "compacted":
        lines.append("compact() succeeded; nothing to explain")
        return CannotFitExplanation(None, None, analysis, minimum, target, (), tuple(lines))

    verifier, verified_with = _verifier(summarizer, reason, result)
    budget = [max_reruns]

    def rerun(target_value: int, keep_value: int) -> Any:
        budget[0] -= 1
        return compact(
            messages,
            summarizer=verifier,
            target_tokens=target_value,
            keep_last_messages=keep_value,
            instructions=instructions,
            count_tokens=count_tokens,
            format=format,
        )

    suggestions: list[FitSuggestion] = []
    smallest: int | None = None
    if reason in ("incomplete-summary", "empty-summary"):
        lines.append(
            "the summarizer's output was rejected; no parameter change fixes that: "
            "retry, raise the model's limits or use another summarizer"
        )
    else:
        suggestions, smallest = _fit_suggestions(
            result, reason, minimum, msgs, keep, target, rerun, budget, verified_with
        )
        if not any(s.fits for s in suggestions):
            lines.append("no single change of target_tokens or keep_last_messages makes it fit")
    suggestions.sort(key=lambda s: (not s.fits, s.parameter))
    lines.extend(s.describe() for s in suggestions)
    return CannotFitExplanation(
        reason,
        detail,
        analysis,
        minimum,
        smallest,
        tuple(suggestions),
        tuple(lines),
    )


def _verifier(summarizer: Any, reason: Any, result: Any) -> tuple[Any, str]:
    """The summarizer re-runs use, and how a suggestion names it."""
    rejected = getattr(result, "rejected_summary", None)
    if summarizer is not None:
        return summarizer, type(summarizer).__name__
    if reason == "summary-too-large" and isinstance(rejected, str) and rejected.strip():
        return FakeSummarizer(text=rejected, model="replay"), "replayed summary"
    return ExtractiveSummarizer(), "extractive summarizer"


def _smallest_target_run(
    result: Any,
    reason: str,
    minimum: int,
    keep: int,
    rerun: Callable[[int, int], Any],
    budget: list[int],
) -> tuple[int, Any] | None:
    """The smallest target tried from ``minimum`` up, with its last re-run (None: no run)."""
    candidate_target = minimum
    candidate_tokens = getattr(result, "candidate_tokens", None)
    if reason == "summary-too-large" and isinstance(candidate_tokens, int):
        candidate_target = max(candidate_tokens, minimum)
    last: Any = None
    while budget[0] > 0:
        last = rerun(candidate_target, keep)
        if last.status == "compacted" or last.reason != "summary-too-large":
            break
        if not isinstance(last.candidate_tokens, int):
            break
        candidate_target = max(last.candidate_tokens, candidate_target + 1)
    if last is None:
        return None
    return candidate_target, last


def _fit_suggestions(
    result: Any,
    reason: Any,
    minimum: int | None,
    msgs: Sequence[Message],
    keep: int,
    target: int,
    rerun: Callable[[int, int], Any],
    budget: list[int],
    verified_with: str,
) -> tuple[list[FitSuggestion], int | None]:
    """The verified single changes (target, then keep), and the smallest fitting target."""
    suggestions: list[FitSuggestion] = []
    smallest: int | None = None
    # 1. The smallest target, for reasons a bigger target can fix.
    if reason in ("protected-history", "summary-too-large") and minimum is not None:
        by_target = _smallest_target_run(result, reason, minimum, keep, rerun, budget)
        if by_target is not None:
            candidate_target, last = by_target
            suggestions.append(
                FitSuggestion(
                    "target_tokens",
                    candidate_target,
                    last.status,
                    last.reason,
                    last.tokens.after if last.status == "compacted" else None,
                    verified_with,
                )
            )
            if last.status == "compacted":
                smallest = candidate_target
    # 2. The largest smaller keep_last_messages that fits at the same target.
    found = smaller_keep_that_fits(
        msgs, keep, lambda k: rerun(target, k), may_run=lambda: budget[0] > 0
    )
    if found is not None:
        k, run = found
        suggestions.append(
            FitSuggestion(
                "keep_last_messages", k, run.status, None, run.tokens.after, verified_with
            )
        )
    return suggestions, smallest


def unchanged_result(
    index: MessageIndex, name: str, trigger: str, target: str, detail: str
) -> CompactionResult:
    decisions = tuple(
        GroupDecision(
            group_id=g.id,
            kind=g.kind.value,
            action="kept",
            strategy="",
            reason="no trigger fired",
            tokens_before=g.tokens,
            tokens_after=g.tokens,
            position=g.first,
            message_indices=g.indices,
            turn=g.turn,
        )
        for g in index.groups
    )
    event = StageEvent(
        stage=0,
        strategy=name,
        event="skipped",
        trigger=trigger,
        trigger_values={"tokens": index.total_tokens},
        target=target,
        tokens_before=index.total_tokens,
        tokens_after=index.total_tokens,
        messages_before=index.total_messages,
        messages_after=index.total_messages,
        groups_changed=0,
        target_met=True,
        duration_ms=0.0,
        detail=detail,
    )
    return CompactionResult(
        status="unchanged",
        messages=list(index.messages),
        projection=index.messages,
        tokens_before=index.total_tokens,
        tokens_after=index.total_tokens,
        messages_before=index.total_messages,
        messages_after=index.total_messages,
        decisions=Decisions(decisions),
        events=(event,),
        explanation=unchanged_explanation(),
        strategy=name,
        tokenizer=index.tokenizer_name,
        problems=index.problems,
    )


def compact_failed(
    index: MessageIndex,
    name: str,
    trigger: str,
    target: str,
    detail: str,
    boundary: BoundaryAnalysis,
) -> CompactionResult:
    base = unchanged_result(index, name, trigger, target, detail)
    event = replace(base.events[0], event="failed", target_met=False, detail=detail)
    return replace(
        base,
        status="cannot-fit",
        reason=detail,
        events=(event,),
        decisions=Decisions(
            tuple(replace(d, reason="kept: the compaction failed") for d in base.decisions)
        ),
        explanation=Explanation(detail, boundary_protections(index, boundary, None)),
    )


def boundary_protections(
    index: MessageIndex, boundary: BoundaryAnalysis, replaced: tuple[int, int] | None
) -> tuple[ProtectedItem, ...]:
    """Kept messages grouped by their first protection reason, as protected items."""
    by_kind: dict[str, tuple[set[int], int, str]] = {}
    for row in boundary.messages:
        if row.state == "summarized" and replaced is not None:
            continue
        if row.state == "summarized":
            kind, detail = "summary_range", "in the range that would be summarized"
        elif row.reasons:
            kind, detail = row.reasons[0].kind, row.reasons[0].detail
        else:
            kind, detail = "kept", "after the replaced range"
        groups, tokens, first_detail = by_kind.get(kind, (set(), 0, detail))
        groups.add(index.group_of[row.index])
        by_kind[kind] = (groups, tokens + index.message_tokens[row.index], first_detail)
    return tuple(
        ProtectedItem(kind, tuple(sorted(groups)), tokens, detail)
        for kind, (groups, tokens, detail) in by_kind.items()
    )


def compact_as_result(
    index: MessageIndex,
    cres: CompactResult,
    boundary: BoundaryAnalysis,
    counter: Callable[[Sequence[Any]], int],
    name: str,
    trigger: str,
    target: str,
    duration_ms: float,
) -> CompactionResult:
    """A ``CompactResult`` as an engine :class:`CompactionResult` (decisions per group, one
    stage event, an explanation with protected content), so every page reads one shape."""
    projection = tuple(cres.messages)
    replaced = cres.replaced_range if cres.status == "compacted" else None
    summary_tokens = 0
    if replaced is not None and cres.summary_index is not None:
        summary_tokens = counter([projection[cres.summary_index]])
    decisions = _compact_decisions(index, cres, boundary, replaced, summary_tokens, name)
    status = "compacted" if cres.status == "compacted" else "cannot-fit"
    before = index.total_tokens
    after = cres.tokens.after if status == "compacted" else before
    changed = sum(1 for d in decisions if d.action not in ("kept",))
    detail = cres.detail or (cres.reason or "")
    event = StageEvent(
        stage=0,
        strategy=name,
        event="applied" if status == "compacted" else "target-missed",
        trigger=trigger,
        trigger_values={"tokens": before},
        target=target,
        tokens_before=before,
        tokens_after=after,
        messages_before=index.total_messages,
        messages_after=len(projection),
        groups_changed=changed,
        target_met=status == "compacted",
        duration_ms=duration_ms,
        detail=detail,
        group_ids=tuple(
            d.group_id for d in decisions if d.action == "summarized" and d.group_id is not None
        ),
        inserted=sum(1 for d in decisions if d.action == "inserted"),
    )
    protected = boundary_protections(index, boundary, replaced)
    if status == "compacted":
        explanation = met_explanation(before, after, protected, cres.target_tokens)
        result_reason: str | None = None
    else:
        explanation, result_reason = _cannot_fit_explanation(cres, protected, counter)
    return CompactionResult(
        status=status,  # type: ignore[arg-type]
        messages=list(projection),
        projection=projection,
        tokens_before=before,
        tokens_after=after,
        messages_before=index.total_messages,
        messages_after=len(projection),
        decisions=Decisions(tuple(decisions)),
        events=(event,),
        explanation=explanation,
        strategy=name,
        tokenizer=index.tokenizer_name,
        reason=result_reason,
        problems=pairing_problems(projection),
        duration_ms=duration_ms,
    )


def _compact_decisions(
    index: MessageIndex,
    cres: CompactResult,
    boundary: BoundaryAnalysis,
    replaced: tuple[int, int] | None,
    summary_tokens: int,
    name: str,
) -> list[GroupDecision]:
    """One decision per group of a ``compact()`` run, the summary's inserted where it stands."""
    reinserted = cres.reinserted_index
    decisions: list[GroupDecision] = []
    inserted_done = False
    for g in index.groups:
        in_range = replaced is not None and all(replaced[0] <= k < replaced[1] for k in g.indices)
        if replaced is not None and not inserted_done and g.first >= replaced[0]:
            decisions.append(
                GroupDecision(
                    group_id=None,
                    kind=GroupKind.SUMMARY.value,
                    action="inserted",
                    strategy=name,
                    reason=f"summary of messages {replaced[0]}–{replaced[1] - 1}",
                    tokens_before=0,
                    tokens_after=summary_tokens,
                    position=replaced[0],
                )
            )
            inserted_done = True
        action: Action
        if in_range and reinserted is not None and reinserted in g.indices:
            action, reason, after = (
                "kept",
                "latest user message: summarized and re-inserted verbatim after the summary",
                g.tokens,
            )
        elif in_range:
            action, reason, after = "summarized", "summarized", 0
        else:
            action, reason, after = "kept", _kept_reason(boundary, g.first, cres), g.tokens
        decisions.append(
            GroupDecision(
                group_id=g.id,
                kind=g.kind.value,
                action=action,
                strategy=name if action != "kept" else "",
                reason=reason,
                tokens_before=g.tokens,
                tokens_after=after,
                position=g.first,
                message_indices=g.indices,
                turn=g.turn,
            )
        )
    return decisions


def _kept_reason(boundary: BoundaryAnalysis, first: int, cres: CompactResult) -> str:
    """Why a group outside the replaced range was kept, from its first message's row."""
    row = boundary.messages[first]
    if row.reasons:
        return "protected: " + row.reasons[0].detail
    if row.state == "summarized":
        return f"in the range; not replaced ({cres.reason})"
    return "kept"


def _cannot_fit_explanation(
    cres: CompactResult,
    protected: tuple[ProtectedItem, ...],
    counter: Callable[[Sequence[Any]], int],
) -> tuple[Explanation, str]:
    """The explanation of a ``compact()`` run that could not fit, and its reason."""
    wrapper = counter([summary_message("")])
    protected = (
        *protected,
        ProtectedItem(
            "summary_wrapper",
            (),
            wrapper,
            "the summary message's prefix and framing, before any summary text",
        ),
    )
    smallest = cres.smallest_target
    suggestions = (target_suggestion(smallest),) if smallest is not None else ()
    result_reason = f"{cres.reason}: {cres.detail}" if cres.detail else str(cres.reason)
    explanation = Explanation(
        result_reason,
        protected,
        target_tokens=cres.target_tokens,
        smallest_target=smallest,
        suggestions=suggestions,
    )
    return explanation, result_reason


@dataclass(frozen=True, slots=True)
class CompactRun:
    """``compact()`` over a prebuilt index, shown as an engine result.

    ``result`` is None only when the parameters were refused (``error`` says why);
    ``compact`` is the one-shot result when ``compact()`` ran, ``boundary`` its analysis.
    """

    result: CompactionResult | None
    compact: CompactResult | None = None
    boundary: BoundaryAnalysis | None = None
    error: str | None = None


def compact_over_index(
    index: MessageIndex,
    *,
    target_tokens: int,
    keep_last_messages: int,
    summarizer: Summarizer,
    trigger_tokens: int | None = None,
    find_fixes: bool = True,
    redact: Callable[[str], str] = str,
) -> CompactRun:
    """``compact()`` over the index's messages (counted with the index's tokenizer), as a
    :class:`CompactionResult`: unchanged when ``trigger_tokens`` is not exceeded, a failed
    stage when the summarizer raises, and on ``cannot-fit`` the verified fixes when
    ``find_fixes``. ``redact`` cleans error text before it is shown. The result's
    ``triggers`` are ``tokens > trigger_tokens`` (none without it)."""
    run = _compact_run(
        index,
        target_tokens=target_tokens,
        keep_last_messages=keep_last_messages,
        summarizer=summarizer,
        trigger_tokens=trigger_tokens,
        find_fixes=find_fixes,
        redact=redact,
    )
    return _with_trigger(run, trigger_tokens)


def _compact_run(
    index: MessageIndex,
    *,
    target_tokens: int,
    keep_last_messages: int,
    summarizer: Summarizer,
    trigger_tokens: int | None,
    find_fixes: bool,
    redact: Callable[[str], str],
) -> CompactRun:
    """:func:`compact_over_index` before its result names its trigger."""
    name = "compact()"
    trigger = f"tokens > {trigger_tokens}" if trigger_tokens else "(none)"
    target = f"tokens <= {target_tokens}"
    if trigger_tokens is not None and index.total_tokens <= trigger_tokens:
        detail = f"{index.total_tokens:,} tokens is not over {trigger_tokens:,}"
        return CompactRun(unchanged_result(index, name, trigger, target, detail))
    counter = index_counter(index)
    boundary = analyze_boundary(index.messages, keep_last_messages)
    start = time.perf_counter()
    try:
        cres = compact(
            list(index.messages),
            summarizer=summarizer,
            target_tokens=target_tokens,
            keep_last_messages=keep_last_messages,
            count_tokens=counter,
        )
    except ValueError as exc:
        return CompactRun(None, boundary=boundary, error=redact(str(exc)))
    except Exception as exc:  # a summarizer error: shown as a failed stage
        detail = redact(f"summarizer failed: {type(exc).__name__}: {exc}")
        failed = compact_failed(index, name, trigger, target, detail, boundary)
        return CompactRun(failed, boundary=boundary)
    elapsed = (time.perf_counter() - start) * 1000.0
    result = compact_as_result(index, cres, boundary, counter, name, trigger, target, elapsed)
    if result.status == "cannot-fit" and find_fixes:
        fixes = _keep_suggestions(index, target_tokens, keep_last_messages, summarizer, counter)
        result = replace(
            result,
            explanation=replace(
                result.explanation,
                suggestions=(*fixes, *result.explanation.suggestions),
            ),
        )
    return CompactRun(result, compact=cres, boundary=boundary)


def _with_trigger(run: CompactRun, trigger_tokens: int | None) -> CompactRun:
    """``run`` whose result names the trigger of ``compact()`` (none without one)."""
    if run.result is None:
        return run
    triggers = (tokens_exceed(trigger_tokens),) if trigger_tokens is not None else ()
    return replace(run, result=replace(run.result, triggers=triggers))


def _keep_suggestions(
    index: MessageIndex,
    target_tokens: int,
    keep_last_messages: int,
    summarizer: Summarizer,
    counter: Callable[[Sequence[Any]], int],
) -> tuple[Suggestion, ...]:
    """The largest smaller ``keep_last_messages`` that fits, as an engine suggestion."""

    def rerun(keep: int) -> CompactResult:
        return compact(
            list(index.messages),
            summarizer=summarizer,
            target_tokens=target_tokens,
            keep_last_messages=keep,
            count_tokens=counter,
        )

    try:
        found = smaller_keep_that_fits(index.messages, keep_last_messages, rerun)
    except Exception:  # a failing variant is simply not a fix
        return ()
    if found is None:
        return ()
    keep, cres = found
    spare = target_tokens - cres.tokens.after
    return (
        Suggestion(
            change=f"{change_words('keep_last_messages', keep)} "
            f"fits with {plural(spare, 'token')} to spare "
            f"({cres.tokens.after:,} tokens)",
            parameter="keep_last_messages",
            value=keep,
            tokens_after=cres.tokens.after,
            spare_tokens=spare,
        ),
    )


def smaller_keep_that_fits(
    messages: Sequence[Message],
    keep_last_messages: int,
    rerun: Callable[[int], CompactResult],
    *,
    may_run: Callable[[], bool] = lambda: True,
) -> tuple[int, CompactResult] | None:
    """The largest ``keep_last_messages`` below the given one whose re-run compacts, with
    that run. Values with no safe boundary are skipped without a run; the search stops as
    soon as ``may_run()`` is false (a re-run budget)."""
    for k in range(keep_last_messages - 1, 0, -1):
        if not may_run():
            break
        if analyze_boundary(messages, k).end is None:
            continue
        run = rerun(k)
        if run.status == "compacted":
            return k, run
    return None


__all__ = [
    "CannotFitExplanation",
    "CompactRun",
    "FitSuggestion",
    "compact_as_result",
    "compact_over_index",
    "explain_cannot_fit",
    "smaller_keep_that_fits",
    "unchanged_result",
]
