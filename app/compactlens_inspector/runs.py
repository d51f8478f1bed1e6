"""Runs of a lab configuration over a prebuilt index, and the views the pages read from them.

Everything is a plain function over compactlens values: an index is built once per
(transcript, tokenizer), a configuration is planned over it, and the result is read by
the figures, the diff, the timeline, the cannot-fit debugger, the sweep and the export.
No Streamlit here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from compactlens.engine import run_strategy
from compactlens.index import GroupKind, MessageIndex
from compactlens.messages import SUMMARY_PREFIX, Message, message_text
from compactlens.result import (
    CompactionResult,
    Explanation,
    GroupDecision,
    ProtectedItem,
    StageEvent,
    Suggestion,
)
from compactlens.strategies.config import strategy_from_config
from compactlens.summarizers.base import Summarizer, SummaryRequest, SummaryResponse, Usage
from compactlens.tokens import CharEstimator, TiktokenTokenizer, Tokenizer, count_messages
from compactlens_inspector.config import LabConfig, SummarizerSettings

_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-*]{4,}|Bearer\s+[A-Za-z0-9._\-*]+)")


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` with API keys (given ones, and anything shaped like ``sk-...``) removed."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _SECRET.sub("[redacted]", text)


def make_tokenizer(name: str) -> Tokenizer:
    """``estimate`` (characters / 4) or a tiktoken encoding (offline)."""
    if name == "estimate":
        return CharEstimator()
    return TiktokenTokenizer(name)


def build_index(messages: Sequence[Message], tokenizer: str) -> MessageIndex:
    return MessageIndex.build(messages, make_tokenizer(tokenizer))


# -- summarizers -------------------------------------------------------------------------------


def make_summarizer(
    settings: SummarizerSettings,
    *,
    api_key: str | None = None,
    cache: MutableMapping[str, SummaryResponse] | None = None,
) -> Summarizer:
    """The summarizer for ``settings``, answering repeated requests from ``cache``.

    The extractive summarizer is offline and deterministic. The OpenAI-compatible one
    is built with the key given here (never stored in settings, never shown).
    """
    from compactlens.summarizers.caching import CachingSummarizer

    inner: Summarizer
    if settings.kind == "openai":
        from compactlens.summarizers.openai import OpenAISummarizer

        inner = OpenAISummarizer(
            settings.model or "gpt-4o-mini",
            base_url=settings.base_url or None,
            api_key=api_key or None,
            timeout=60.0,
        )
    else:
        from compactlens.summarizers.extractive import ExtractiveSummarizer

        inner = ExtractiveSummarizer()
    return CachingSummarizer(inner, cache)


@dataclass(frozen=True, slots=True)
class SummaryCall:
    """One summarizer answer used by a run (for the usage display)."""

    model: str | None
    usage: Usage | None
    cached: bool
    finish_reason: str
    chars: int


class _Recorder:
    """Records the answers of a summarizer during one run (a private, per-run object)."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.calls: list[SummaryCall] = []

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        response = self.inner.summarize(request)
        self.calls.append(
            SummaryCall(
                response.model,
                response.usage,
                response.cached,
                response.finish_reason,
                len(response.text),
            )
        )
        return response


# -- one run -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """A configuration planned over an index: the result, or the configuration error."""

    config: LabConfig
    result: CompactionResult | None
    error: str | None = None
    summaries: tuple[SummaryCall, ...] = ()
    compact: Any = None
    boundary: Any = None
    duration_ms: float = 0.0

    @property
    def status(self) -> str:
        return self.result.status if self.result is not None else "error"

    @property
    def usage(self) -> Usage | None:
        """Total usage of the summarizer calls that were not answered from the cache."""
        fresh = [c.usage for c in self.summaries if c.usage is not None and not c.cached]
        if not fresh:
            return None
        return Usage(
            sum(u.input_tokens for u in fresh),
            sum(u.output_tokens for u in fresh),
            sum(u.total_tokens for u in fresh),
        )


def compact_available() -> bool:
    """True when the installed compactlens has ``compact()`` and its boundary analysis."""
    try:
        import compactlens.boundary
        import compactlens.compact  # noqa: F401
    except ImportError:
        return False
    return True


def run_config(
    index: MessageIndex,
    config: LabConfig,
    summarizer: Summarizer,
    *,
    secrets: Sequence[str] = (),
    explain: bool = True,
) -> RunOutcome:
    """Plan ``config`` over ``index`` (engine strategies, or ``compact()`` in compact mode).

    With ``explain`` a ``cannot-fit`` result carries its full explanation: protected
    content and the single changes that fit, found by re-running variants (which
    costs a few more plans, or summarizer calls in compact mode).
    """
    start = time.perf_counter()
    recorder = _Recorder(summarizer)
    if config.mode == "compact":
        outcome = run_compact(index, config, recorder, secrets=secrets, find_fixes=explain)
    else:
        try:
            strategy = strategy_from_config(config.strategy_config(), summarizer=recorder)
        except ValueError as exc:
            return RunOutcome(config, None, error=redact(str(exc), secrets))
        result = run_strategy(index, strategy, explain=explain)
        outcome = RunOutcome(config, result)
    return replace(
        outcome,
        summaries=tuple(recorder.calls),
        duration_ms=(time.perf_counter() - start) * 1000.0,
    )


# -- compact() one-shot mode -------------------------------------------------------------------


def message_counter(index: MessageIndex) -> Callable[[Sequence[Any]], int]:
    """Count a message list with the index's tokenizer, reusing the index's per-message counts.

    Unchanged messages are the index's own objects, so only new ones (the summary) are
    tokenized.
    """
    known = {id(m): t for m, t in zip(index.messages, index.message_tokens, strict=True)}
    tokenizer = index.tokenizer

    def count(messages: Sequence[Any]) -> int:
        total = 0
        fresh: list[Message] = []
        for m in messages:
            cached = known.get(id(m))
            if cached is None:
                fresh.append(m)
            else:
                total += cached
        if fresh:
            total += sum(count_messages(fresh, tokenizer))
        return total

    return count


_PROTECTION_WORDS = {
    "system": "system messages",
    "not_a_tool_call": "not a tool call (this stage cannot touch it)",
    "leading-system": "leading system messages",
    "keep-last": "keep_last_messages",
    "later-system": "a later system message",
    "media": "media",
    "opaque": "opaque provider content",
    "unresolved-call": "an unresolved tool call",
    "pending-approval": "a pending approval",
    "tool-pair": "a tool call/result pair",
    "approval-pair": "an approval pair",
}


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
    return _PROTECTION_WORDS.get(kind, kind)


def _unchanged_result(
    index: MessageIndex, name: str, trigger: str, target: str, detail: str
) -> CompactionResult:
    decisions = tuple(
        GroupDecision(
            g.id,
            g.kind.value,
            "kept",
            "",
            "no trigger fired",
            g.tokens,
            g.tokens,
            g.first,
            g.indices,
            g.turn,
        )
        for g in index.groups
    )
    event = StageEvent(
        0,
        name,
        "skipped",
        trigger,
        {"tokens": index.total_tokens},
        target,
        index.total_tokens,
        index.total_tokens,
        index.total_messages,
        index.total_messages,
        0,
        True,
        0.0,
        detail,
    )
    return CompactionResult(
        status="unchanged",
        messages=list(index.messages),
        projection=index.messages,
        tokens_before=index.total_tokens,
        tokens_after=index.total_tokens,
        messages_before=index.total_messages,
        messages_after=index.total_messages,
        decisions=decisions,
        events=(event,),
        explanation=Explanation("No trigger fired: the transcript was left as it is."),
        strategy=name,
        tokenizer=index.tokenizer_name,
        problems=index.problems,
    )


def run_compact(
    index: MessageIndex,
    config: LabConfig,
    summarizer: Summarizer,
    *,
    secrets: Sequence[str] = (),
    find_fixes: bool = True,
) -> RunOutcome:
    """``compact()`` over the index's messages, shown as an engine-style result."""
    from compactlens.boundary import analyze_boundary
    from compactlens.compact import compact

    settings = config.compact
    name = "compact()"
    trigger = f"tokens > {settings.trigger_tokens}" if settings.trigger_tokens else "(none)"
    target = f"tokens <= {settings.target_tokens}"
    if settings.trigger_tokens is not None and index.total_tokens <= settings.trigger_tokens:
        detail = f"{index.total_tokens:,} tokens is not over {settings.trigger_tokens:,}"
        return RunOutcome(config, _unchanged_result(index, name, trigger, target, detail))
    counter = message_counter(index)
    boundary = analyze_boundary(index.messages, settings.keep_last_messages)
    start = time.perf_counter()
    try:
        cres = compact(
            list(index.messages),
            summarizer=summarizer,
            target_tokens=settings.target_tokens,
            keep_last_messages=settings.keep_last_messages,
            count_tokens=counter,
        )
    except ValueError as exc:
        return RunOutcome(config, None, error=redact(str(exc), secrets), boundary=boundary)
    except Exception as exc:  # a summarizer error: shown as a failed stage
        detail = redact(f"summarizer failed: {type(exc).__name__}: {exc}", secrets)
        result = _compact_failed(index, name, trigger, target, detail, boundary)
        return RunOutcome(config, result, boundary=boundary)
    elapsed = (time.perf_counter() - start) * 1000.0
    result = compact_as_result(index, cres, boundary, counter, name, trigger, target, elapsed)
    if result.status == "cannot-fit" and find_fixes:
        fixes = compact_suggestions(index, settings, summarizer, counter)
        result = replace(
            result,
            explanation=replace(
                result.explanation,
                suggestions=(*fixes, *result.explanation.suggestions),
            ),
        )
    return RunOutcome(config, result, compact=cres, boundary=boundary)


def _compact_failed(
    index: MessageIndex,
    name: str,
    trigger: str,
    target: str,
    detail: str,
    boundary: Any,
) -> CompactionResult:
    base = _unchanged_result(index, name, trigger, target, detail)
    event = replace(base.events[0], event="failed", target_met=False, detail=detail)
    return replace(
        base,
        status="cannot-fit",
        reason=detail,
        events=(event,),
        decisions=tuple(replace(d, reason="kept: the compaction failed") for d in base.decisions),
        explanation=Explanation(detail, _boundary_protections(index, boundary, None)),
    )


def _boundary_protections(
    index: MessageIndex, boundary: Any, replaced: tuple[int, int] | None
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
    cres: Any,
    boundary: Any,
    counter: Callable[[Sequence[Any]], int],
    name: str,
    trigger: str,
    target: str,
    duration_ms: float,
) -> CompactionResult:
    """A ``CompactResult`` as an engine :class:`CompactionResult` (decisions per group, one
    stage event, an explanation with protected content), so every page reads one shape."""
    from compactlens.compact import summary_message

    projection = tuple(cres.messages)
    replaced = cres.replaced_range if cres.status == "compacted" else None
    reinserted = cres.reinserted_index
    decisions: list[GroupDecision] = []
    summary_tokens = 0
    if replaced is not None and cres.summary_index is not None:
        summary_tokens = counter([projection[cres.summary_index]])
    inserted_done = False
    for g in index.groups:
        in_range = replaced is not None and all(replaced[0] <= k < replaced[1] for k in g.indices)
        if replaced is not None and not inserted_done and g.first >= replaced[0]:
            decisions.append(
                GroupDecision(
                    None,
                    GroupKind.SUMMARY.value,
                    "inserted",
                    name,
                    f"summary of messages {replaced[0]}–{replaced[1] - 1}",
                    0,
                    summary_tokens,
                    replaced[0],
                )
            )
            inserted_done = True
        if in_range and reinserted is not None and reinserted in g.indices:
            action, reason, after = (
                "kept",
                "latest user message: summarized and re-inserted verbatim after the summary",
                g.tokens,
            )
        elif in_range:
            action, reason, after = "summarized", "summarized", 0
        else:
            row = boundary.messages[g.first]
            if row.reasons:
                reason = "protected: " + row.reasons[0].detail
            elif row.state == "summarized":
                reason = f"in the range; not replaced ({cres.reason})"
            else:
                reason = "kept"
            action, after = "kept", g.tokens
        decisions.append(
            GroupDecision(
                g.id,
                g.kind.value,
                action,  # type: ignore[arg-type]
                name if action != "kept" else "",
                reason,
                g.tokens,
                after,
                g.first,
                g.indices,
                g.turn,
            )
        )
    status = "compacted" if cres.status == "compacted" else "cannot-fit"
    before = index.total_tokens
    after = cres.tokens.after if status == "compacted" else before
    changed = sum(1 for d in decisions if d.action not in ("kept",))
    detail = cres.detail or (cres.reason or "")
    event = StageEvent(
        0,
        name,
        "applied" if status == "compacted" else "target-missed",
        trigger,
        {"tokens": before},
        target,
        before,
        after,
        index.total_messages,
        len(projection),
        changed,
        status == "compacted",
        duration_ms,
        detail,
        group_ids=tuple(
            d.group_id for d in decisions if d.action == "summarized" and d.group_id is not None
        ),
        inserted=sum(1 for d in decisions if d.action == "inserted"),
    )
    protected = _boundary_protections(index, boundary, replaced)
    if status == "compacted":
        explanation = Explanation(
            f"Target met: {before:,} -> {after:,} tokens.",
            protected,
            target_tokens=cres.target_tokens,
        )
        result_reason: str | None = None
    else:
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
        smallest = cres.candidate_tokens
        if smallest is not None and cres.reason == "protected-history":
            smallest += 1
        suggestions: tuple[Suggestion, ...] = ()
        if smallest is not None:
            suggestions = (
                Suggestion(
                    f"a target of at least {smallest:,} tokens fits with these parameters",
                    "target_tokens",
                    smallest,
                    smallest,
                    0,
                ),
            )
        result_reason = f"{cres.reason}: {cres.detail}" if cres.detail else str(cres.reason)
        explanation = Explanation(
            result_reason,
            protected,
            target_tokens=cres.target_tokens,
            smallest_target=smallest,
            suggestions=suggestions,
        )
    from compactlens.index import _scan

    return CompactionResult(
        status=status,  # type: ignore[arg-type]
        messages=list(projection),
        projection=projection,
        tokens_before=before,
        tokens_after=after,
        messages_before=index.total_messages,
        messages_after=len(projection),
        decisions=tuple(decisions),
        events=(event,),
        explanation=explanation,
        strategy=name,
        tokenizer=index.tokenizer_name,
        reason=result_reason,
        problems=_scan(projection).problems,
        duration_ms=duration_ms,
    )


def compact_suggestions(
    index: MessageIndex,
    settings: Any,
    summarizer: Summarizer,
    counter: Callable[[Sequence[Any]], int],
) -> tuple[Suggestion, ...]:
    """Re-run ``compact()`` with smaller ``keep_last_messages`` and keep the first that fits."""
    from compactlens.compact import compact

    for keep in range(settings.keep_last_messages - 1, 0, -1):
        try:
            cres = compact(
                list(index.messages),
                summarizer=summarizer,
                target_tokens=settings.target_tokens,
                keep_last_messages=keep,
                count_tokens=counter,
            )
        except Exception:  # a failing variant is simply not a fix
            return ()
        if cres.status == "compacted":
            spare = settings.target_tokens - cres.tokens.after
            return (
                Suggestion(
                    f"keep_last_messages={keep} fits with {spare:,} tokens to spare "
                    f"({cres.tokens.after:,} tokens)",
                    "keep_last_messages",
                    keep,
                    cres.tokens.after,
                    spare,
                ),
            )
    return ()


# -- reading a result --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DecisionView:
    """A decision and the projection messages it became (empty for dropped groups)."""

    decision: GroupDecision
    projection: tuple[int, ...]


def decision_views(result: CompactionResult) -> list[DecisionView]:
    """Decisions in order with the projection indices each one produced.

    Kept groups map to their messages, a collapsed group to its one replacement line,
    an inserted group to its new message; excluded and summarized groups to nothing.
    """
    out: list[DecisionView] = []
    cursor = 0
    total = len(result.projection)
    for d in result.decisions:
        if d.action == "kept":
            n = len(d.message_indices)
        elif d.action in ("collapsed", "inserted"):
            n = 1
        else:
            n = 0
        n = max(0, min(n, total - cursor))
        out.append(DecisionView(d, tuple(range(cursor, cursor + n))))
        cursor += n
    return out


@dataclass(frozen=True, slots=True)
class SummaryRange:
    """An inserted summary and the groups it replaced."""

    inserted: GroupDecision
    replaced: tuple[GroupDecision, ...]
    summary_text: str
    original_text: str

    @property
    def message_range(self) -> tuple[int, int] | None:
        idx = [k for d in self.replaced for k in d.message_indices]
        return (min(idx), max(idx)) if idx else None


def summary_ranges(result: CompactionResult, index: MessageIndex) -> list[SummaryRange]:
    """Every inserted summary with the summarized groups that follow it in decision order."""
    views = decision_views(result)
    out: list[SummaryRange] = []
    for i, view in enumerate(views):
        d = view.decision
        if d.action != "inserted":
            continue
        replaced: list[GroupDecision] = []
        for later in views[i + 1 :]:
            if later.decision.action == "inserted":
                break
            if later.decision.action == "summarized":
                replaced.append(later.decision)
        text = ""
        if view.projection:
            msg = result.projection[view.projection[0]]
            text = msg.text
            if text.startswith(SUMMARY_PREFIX):
                text = text[len(SUMMARY_PREFIX) :]
        original = "\n\n".join(
            render_message(index.messages[k], k) for rd in replaced for k in rd.message_indices
        )
        out.append(SummaryRange(d, tuple(replaced), text, original))
    return out


def render_message(message: Message, index: int | None = None) -> str:
    """A message as plain text for diffs and reports: a header line, then its content."""
    head = f"[{index}] {message.role}" if index is not None else message.role
    if message.name:
        head += f" ({message.name})"
    lines = [head]
    for part in message.parts:
        kind = part.kind
        if kind == "text":
            lines.append(part.text)  # type: ignore[union-attr]
        elif kind == "reasoning":
            lines.append("(reasoning) " + part.text)  # type: ignore[union-attr]
        elif kind == "tool_call":
            lines.append(f"-> {part.name}({part.arguments})")  # type: ignore[union-attr]
        elif kind == "tool_result":
            lines.append(f"<- {part.call_id}: {part.output}")  # type: ignore[union-attr]
        else:
            lines.append(f"({kind})")
    return "\n".join(lines)


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
                "one-line replacements of collapsed tool-call groups",
                tuple(collapsed_ids),
            )
        )
    if inserted_tokens:
        parts.append(BudgetPart("summaries", inserted_tokens, "inserted summary messages"))
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


# -- timeline ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """A lifecycle or stage event of a run, with the messages it affected."""

    seq: int
    kind: str
    strategy: str
    label: str
    tokens_before: int
    tokens_after: int
    trigger: str = ""
    trigger_values: Mapping[str, int] = field(default_factory=dict)
    target: str = ""
    detail: str = ""
    depth: int = 0
    group_ids: tuple[int, ...] = ()
    message_range: tuple[int, int] | None = None
    duration_ms: float = 0.0
    groups_changed: int = 0
    inserted: int = 0
    redecided: tuple[int, ...] = ()


def timeline_events(result: CompactionResult) -> list[TimelineEvent]:
    """``started``, one event per stage (skipped / applied / target-missed / failed), then
    ``completed`` or ``failed``.

    Each stage carries the groups it changed, in the order it changed them, as the
    engine logged them (a pipeline's event includes its stages'), the message range they
    span, how many groups it inserted, and which of its groups a later stage changed
    again (their final decision belongs to that later stage).
    """
    decided = decisions_by_group(result)
    out = [
        TimelineEvent(
            0,
            "started",
            result.strategy,
            "started",
            result.tokens_before,
            result.tokens_before,
            detail=f"{result.messages_before:,} messages, {result.tokens_before:,} tokens",
        )
    ]
    events = list(result.events)
    for i, e in enumerate(events):
        end = i + 1
        while end < len(events) and events[end].depth > e.depth:
            end += 1  # a pipeline's stages follow it, one level deeper
        later = {g for ev in events[end:] for g in ev.group_ids}
        gids = tuple(dict.fromkeys(e.group_ids))
        idx = [k for g in gids if g in decided for k in decided[g].message_indices]
        out.append(
            TimelineEvent(
                len(out),
                e.event,
                e.strategy,
                f"{e.strategy}: {e.event}",
                e.tokens_before,
                e.tokens_after,
                e.trigger,
                dict(e.trigger_values),
                e.target,
                e.detail,
                e.depth,
                gids,
                (min(idx), max(idx)) if idx else None,
                e.duration_ms,
                e.groups_changed,
                e.inserted,
                tuple(g for g in gids if g in later),
            )
        )
    final = {"unchanged": "completed", "compacted": "completed"}.get(result.status, "failed")
    detail = result.reason or result.explanation.summary
    out.append(
        TimelineEvent(
            len(out),
            final,
            result.strategy,
            f"{final} ({result.status})",
            result.tokens_before,
            result.tokens_after,
            detail=detail,
        )
    )
    return out


# -- sweep and compare -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One value of a swept parameter and what the run gave."""

    value: int
    status: str
    tokens_after: int | None
    groups_kept: int | None
    messages_after: int | None
    error: str | None = None


def groups_kept(result: CompactionResult) -> int:
    return sum(1 for d in result.decisions if d.action in ("kept", "collapsed", "inserted"))


def sweep_values(start: int, stop: int, steps: int) -> list[int]:
    """Up to ``steps`` distinct integers from ``start`` to ``stop`` (inclusive), evenly spread."""
    steps = max(2, min(int(steps), 60))
    if stop < start:
        start, stop = stop, start
    if stop == start:
        return [start]
    values = sorted({round(start + (stop - start) * i / (steps - 1)) for i in range(steps)})
    return [int(v) for v in values]


def sweep_point(value: int, outcome: RunOutcome) -> SweepPoint:
    r = outcome.result
    if r is None:
        return SweepPoint(value, "error", None, None, None, outcome.error)
    return SweepPoint(value, r.status, r.tokens_after, groups_kept(r), r.messages_after)


# -- filters for the transcript page -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroupFilter:
    """Filters of the transcript view (empty means no filter)."""

    roles: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    text: str = ""
    flags: tuple[str, ...] = ()


def filter_groups(index: MessageIndex, flt: GroupFilter) -> list[int]:
    """Ids of the groups that pass every filter (text is case-insensitive)."""
    needle = flt.text.strip().lower()
    roles = set(flt.roles)
    kinds = set(flt.kinds)
    tools = set(flt.tools)
    flags = set(flt.flags)
    out: list[int] = []
    for g in index.groups:
        if kinds and g.kind.value not in kinds:
            continue
        if tools and not tools.intersection(g.tool_names):
            continue
        if flags and not flags.intersection(g.flags):
            continue
        if roles and not any(index.messages[k].role in roles for k in g.indices):
            continue
        if needle and not any(needle in message_text(index.messages[k]).lower() for k in g.indices):
            continue
        out.append(g.id)
    return out


def tool_names(index: MessageIndex) -> list[str]:
    return sorted({name for g in index.groups for name in g.tool_names})


def decisions_by_group(result: CompactionResult | None) -> dict[int, GroupDecision]:
    if result is None:
        return {}
    return {d.group_id: d for d in result.decisions if d.group_id is not None}


# -- session replay ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One evaluation of a replay (the end of a turn): what the agent would send.

    ``lifecycle`` holds the session's events of this evaluation (``restored``,
    ``started``, ``completed``, ``failed``) as dicts; ``events`` the engine stage
    events when the replay ran the engine directly.
    """

    turn: int
    messages_in: int
    tokens_in: int
    fired: bool
    status: str
    tokens_out: int
    messages_out: int
    events: tuple[StageEvent, ...] = ()
    detail: str = ""
    lifecycle: tuple[Mapping[str, Any], ...] = ()
    trigger_index: int | None = None


def turn_ends(index: MessageIndex, max_steps: int | None = None) -> list[int]:
    """Message counts at the end of each turn (the history before each next user message),
    evenly thinned to at most ``max_steps``."""
    starts = [g.first for g in index.groups if g.kind is GroupKind.USER]
    ends = sorted({*(s for s in starts if s > 0), index.total_messages})
    if max_steps is not None and len(ends) > max_steps >= 2:
        picked = {ends[round(i * (len(ends) - 1) / (max_steps - 1))] for i in range(max_steps)}
        ends = sorted(picked)
    return ends


class _MemoTokenizer:
    """Counts each distinct text once, primed with the index's own counts.

    A replay tokenizes the same messages turn after turn; with this only new texts
    (summaries, collapsed lines) reach the real tokenizer. Private to one replay.
    """

    def __init__(self, index: MessageIndex) -> None:
        self.inner = index.tokenizer
        self.message_overhead = int(getattr(self.inner, "message_overhead", 0))
        self.name = index.tokenizer_name
        self.cache: dict[str, int] = {
            message_text(m): t - self.message_overhead
            for m, t in zip(index.messages, index.message_tokens, strict=True)
        }

    def count_tokens(self, text: str) -> int:
        return self.count_many([text])[0]

    def count_many(self, texts: Sequence[str]) -> list[int]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            many = getattr(self.inner, "count_many", None)
            counts = (
                many(missing) if callable(many) else [self.inner.count_tokens(t) for t in missing]
            )
            self.cache.update(zip(missing, counts, strict=True))
        return [self.cache[t] for t in texts]


def memo_tokenizer(index: MessageIndex) -> Tokenizer:
    """The index's tokenizer, counting each distinct text once and primed with the index's
    own counts (for analyses that re-count the same messages)."""
    return _MemoTokenizer(index)


def replay_engine(
    index: MessageIndex,
    config: LabConfig,
    summarizer: Summarizer,
    *,
    max_steps: int = 60,
) -> list[ReplayStep]:
    """Replay turn by turn with the engine alone (no session): before each model request,
    the history so far (with the earlier compacted prefix in place) is run through the
    configuration, and a compacted history becomes the new prefix."""
    tokenizer = _MemoTokenizer(index)
    prefix: list[Message] = []
    consumed = 0
    steps: list[ReplayStep] = []
    for turn, end in enumerate(turn_ends(index, max_steps), start=1):
        history = prefix + list(index.messages[consumed:end])
        sub = MessageIndex.build(history, tokenizer)
        outcome = run_config(sub, config, summarizer, explain=False)
        r = outcome.result
        if r is None:
            steps.append(
                ReplayStep(
                    turn,
                    len(history),
                    sub.total_tokens,
                    False,
                    "error",
                    0,
                    0,
                    detail=outcome.error or "",
                )
            )
            break
        steps.append(
            ReplayStep(
                turn,
                len(history),
                sub.total_tokens,
                r.status != "unchanged",
                r.status,
                r.tokens_after,
                r.messages_after,
                r.events,
                r.reason or "",
            )
        )
        prefix = list(r.projection) if r.status == "compacted" else history
        consumed = end
    return steps


def session_available() -> bool:
    try:
        import compactlens.session
        import compactlens.session_strategy  # noqa: F401
    except ImportError:
        return False
    return True


def replay_session(
    index: MessageIndex,
    config: LabConfig,
    summarizer: Summarizer,
    *,
    max_steps: int = 60,
) -> list[ReplayStep]:
    """Replay the transcript turn by turn through a :class:`CompactionSession`.

    At the end of each turn the full original history so far goes to
    ``session.prepare()``, which restores its checkpoint, checks the triggers and
    compacts (``compact()`` in compact mode; the lab's strategy through
    ``engine_strategy`` otherwise). The session's lifecycle events are recorded per
    evaluation. Configurations the session cannot express (no token target) are
    replayed with the engine alone (:func:`replay_engine`).
    """
    if not session_available():
        return replay_engine(index, config, summarizer, max_steps=max_steps)
    from compactlens.session import CompactionSession
    from compactlens.session_strategy import engine_strategy
    from compactlens.triggers import always

    counter = message_counter(index)
    events: list[Any] = []
    if config.mode == "compact":
        c = config.compact
        trigger: Any = always if c.trigger_tokens is None else _tokens_exceed(c.trigger_tokens)
        session = CompactionSession(
            triggers=[trigger],
            target_tokens=c.target_tokens,
            summarizer=summarizer,
            keep_last_messages=c.keep_last_messages,
            count_tokens=counter,
            on_event=events.append,
            on_error="return",
        )
    else:
        target = config.target_tokens
        try:
            strategy = strategy_from_config(config.strategy_config(), summarizer=summarizer)
            triggers = _stage_triggers(config)
        except ValueError:
            return replay_engine(index, config, summarizer, max_steps=max_steps)
        if target is None or not triggers:
            return replay_engine(index, config, summarizer, max_steps=max_steps)
        session = CompactionSession(
            triggers=triggers,
            target_tokens=target,
            strategy=engine_strategy(strategy, tokenizer=_MemoTokenizer(index)),
            count_tokens=counter,
            on_event=events.append,
            on_error="return",
        )
    steps: list[ReplayStep] = []
    for turn, end in enumerate(turn_ends(index, max_steps), start=1):
        history = list(index.messages[:end])
        events.clear()
        sent = session.prepare(history)
        lifecycle = tuple(e.to_dict() for e in events)
        started = next((e for e in events if e.type == "started"), None)
        completed = next((e for e in events if e.type == "completed"), None)
        failed = next((e for e in events if e.type == "failed"), None)
        tokens_out = counter(sent)
        if completed is not None:
            status = "compacted"
        elif failed is not None:
            status = "cannot-fit" if failed.reason != "error" else "error"
        else:
            status = "unchanged"
        detail = ""
        if failed is not None:
            detail = f"{failed.phase}: {failed.reason}"
            if failed.error_type:
                detail += f" ({failed.error_type})"
        steps.append(
            ReplayStep(
                turn,
                len(history),
                started.tokens_before if started is not None else tokens_out,
                started is not None,
                status,
                tokens_out,
                len(sent),
                detail=detail,
                lifecycle=lifecycle,
                trigger_index=started.trigger_index if started is not None else None,
            )
        )
    return steps


def _tokens_exceed(n: int) -> Any:
    from compactlens.triggers import tokens_exceed

    return tokens_exceed(n)


def _stage_triggers(config: LabConfig) -> list[Any]:
    """The engine triggers of the stages, in order (the session's trigger list)."""
    from compactlens.triggers import Trigger

    out: list[Any] = []
    for stage in config.stages:
        t = stage.get("trigger")
        if isinstance(t, Mapping):
            out.append(Trigger.from_dict(dict(t)))
        elif stage.get("type") == "token_budget" and isinstance(stage.get("token_budget"), int):
            out.append(_tokens_exceed(int(stage["token_budget"])))
    return out


def replay_timeline(steps: Sequence[ReplayStep]) -> list[TimelineEvent]:
    """The session's lifecycle events of a replay as timeline events, in order."""
    out: list[TimelineEvent] = []
    for step in steps:
        for ev in step.lifecycle:
            kind = str(ev.get("type"))
            before = int(ev.get("tokens_before") or step.tokens_in)
            after = int(ev.get("tokens_after") or (before if kind != "completed" else 0))
            if kind in ("restored", "failed"):
                before = after = step.tokens_in
            rng = ev.get("replaced_range")
            detail = ""
            if kind == "restored":
                detail = (
                    f"checkpoint replaced the first {ev.get('source_message_count')} messages "
                    f"by {ev.get('replacement_message_count')}"
                )
            elif kind == "started":
                detail = f"trigger {ev.get('trigger_index')} fired at {before:,} tokens"
            elif kind == "failed":
                detail = f"{ev.get('phase')}: {ev.get('reason')}"
            elif kind == "completed":
                detail = f"{before:,} → {after:,} tokens"
            out.append(
                TimelineEvent(
                    len(out),
                    kind,
                    f"evaluation {step.turn}",
                    f"eval {step.turn}: {kind}",
                    before,
                    after,
                    trigger=f"trigger {ev.get('trigger_index')}" if kind == "started" else "",
                    detail=detail,
                    message_range=(int(rng[0]), int(rng[1]) - 1) if rng else None,
                )
            )
    return out


def compact_budget(outcome: RunOutcome, index: MessageIndex) -> list[BudgetPart]:
    """The ``compact()`` candidate's budget: what stays besides the summary, by reason.

    Leading system messages, every kept message by its first protection reason, the
    re-inserted latest user message and the summary wrapper (its prefix and framing).
    What is left under the target is the room for the summary text.
    """
    from compactlens.compact import summary_message

    boundary = outcome.boundary
    if boundary is None:
        return []
    counter = message_counter(index)
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


def budget_parts(outcome: RunOutcome, index: MessageIndex) -> list[BudgetPart]:
    """The waterfall parts of a run: the compact() candidate, or the engine projection."""
    if outcome.config.mode == "compact" and outcome.boundary is not None:
        return compact_budget(outcome, index)
    if outcome.result is None:
        return []
    return budget_breakdown(outcome.result, index)
