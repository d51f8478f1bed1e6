"""One-shot compaction: replace one contiguous older range with a summary, or say why not.

:func:`compact` (and :func:`acompact`) follow an exact contract:

1. Validation comes first, before any model call (``ValueError`` naming the field
   for ``target_tokens`` / ``keep_last_messages``; ``TypeError`` for ``instructions``;
   :class:`~compactlens.model.errors.TranscriptError` for an invalid message; ``ValueError``
   for a bad ``count_tokens`` result). An already-cancelled token raises
   :class:`~compactlens.compact.cancel.CompactionCancelled` without calling the model.
2. ``tokens.before`` is counted first, with ``count_tokens`` or :func:`estimate_tokens`.
3. The replaced range is the one of :func:`compactlens.compact.boundary.analyze_boundary`;
   none gives ``cannot-fit`` / ``no-safe-boundary``.
4. A latest user message inside the range is summarized and re-inserted verbatim
   right after the summary.
5. Candidate = leading system messages + summary (a plain *user* message starting
   with ``SUMMARY_PREFIX``) + re-inserted user message + ``messages[end:]``. With an
   empty summary it must leave at least 1 token under the target, else
   ``protected-history``.
6. Exactly one summarizer call, allowance ``min(2048, remaining)``, no retries.
7. Output checks: abnormal finish or a tool call -> ``incomplete-summary``; blank ->
   ``empty-summary``; final count over target -> ``summary-too-large`` (equal passes).
8. Summarizer errors propagate as the same object; cancellation during the call raises.
9. There is no hidden state and no early return when the input already fits.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compactlens.compact.boundary import BoundaryAnalysis, analyze_boundary
from compactlens.compact.cancel import (
    CompactionCancelled,
    check_cancel_signal,
    is_cancelled,
    raise_if_cancelled,
)
from compactlens.compact.result import CannotFitReason, CompactResult
from compactlens.engine.result import TokenCounts
from compactlens.engine.telemetry import emit_compact_result
from compactlens.formats.caller import CallerMessages, from_caller
from compactlens.model.errors import ConfigError, InputTypeError, TranscriptError
from compactlens.model.jsjson import number_length_delta
from compactlens.model.messages import (
    ROLES,
    SUMMARY_PREFIX,
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    Message,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compactlens.model.tokens import estimate_message_tokens, utf16_length
from compactlens.model.validation import check_int
from compactlens.model.whitespace import summary_text
from compactlens.summarizers.base import (
    FINISH_STOP,
    Summarizer,
    SummaryRequest,
    SummaryResponse,
    build_summary_request,
    summarize_async,
)

#: Largest output allowance given to the summarizer.
MAX_SUMMARY_TOKENS = 2048

#: A custom token counter: receives a message list in the caller's kind, returns an int >= 0.
CountTokens = Callable[[list[Any]], int]

_POLL_SECONDS = 0.02

_PART_TYPES = (
    TextPart,
    ReasoningPart,
    ToolCallPart,
    ToolResultPart,
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    OpaquePart,
)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def wire_json_length(messages: Sequence[Any]) -> int:
    """UTF-16 length of ``JSON.stringify(messages)``: compact separators, non-ASCII kept,
    a lone surrogate escaped as ``\\uXXXX`` (6 units), numbers as JavaScript writes them
    (``1.0`` is ``1``, ``1e-07`` is ``1e-7``, NaN is ``null``:
    :func:`compactlens.model.jsjson.js_number`). ``TypeError`` naming the first message
    that is not JSON."""
    try:
        text = json.dumps(list(messages), ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        for i, m in enumerate(messages):
            try:
                json.dumps(m, allow_nan=False)
            except (TypeError, ValueError):
                raise InputTypeError(
                    f"messages[{i}] is not JSON ({exc}); pass count_tokens= to count it"
                ) from None
        raise InputTypeError(f"messages are not JSON ({exc})") from None
    surrogates = 5 * len(_LONE_SURROGATE.findall(text))
    return utf16_length(text) + surrogates + number_length_delta(list(messages))


def estimate_canonical_tokens(messages: Sequence[Any]) -> int:
    """ceil(UTF-16 length of the compact canonical JSON of the messages / 4); 0 when empty.

    Accepts :class:`Message` objects or wire dicts (read as OpenAI Chat Completions).
    The JSON is that of :func:`compactlens.summarizers.base.messages_to_json`, the same
    for every wire format. Raises ``TypeError`` asking for ``count_tokens`` when a
    message holds media or opaque provider content.
    """
    msgs = messages if all(isinstance(m, Message) for m in messages) else None
    if msgs is None:
        msgs = from_caller(messages).messages
    return estimate_message_tokens(msgs)


def estimate_tokens(messages: Sequence[Any], *, format: str | None = None) -> int:
    """ceil(UTF-16 length of the JSON of the messages as given / 4); 0 when empty.

    The deepagents contract: wire dicts are measured as ``JSON.stringify`` writes them
    (``[{"role": "user", "content": "hello"}]`` is 35 units, 9 tokens; numbers as
    JavaScript writes them: ``1.0`` is ``1``). ``format`` names the wire format of the
    dicts as in :func:`compact` (default OpenAI Chat; ``"ai-sdk"`` for the AI SDK
    ``ModelMessage`` lists ``@deepagents/compaction`` takes). :class:`Message`
    objects have no wire form of their own: they are measured by
    :func:`estimate_canonical_tokens`. Raises ``TypeError`` asking for ``count_tokens``
    when a message holds media or opaque provider content (an estimate from characters
    would count base64 data and encrypted blobs as text).
    """
    if not messages:
        return 0
    if all(isinstance(m, Message) for m in messages):
        return estimate_message_tokens(messages)
    return _wire_estimate(from_caller(messages, format=format).messages, messages)


def _wire_estimate(canonical: Sequence[Message], wire: Sequence[Any]) -> int:
    for i, m in enumerate(canonical):
        if m.has_media or m.has_opaque:
            what = "media" if m.has_media else "opaque provider content"
            raise InputTypeError(
                f"messages[{i}] holds {what}, which the default estimate cannot count; "
                "pass count_tokens= (a function that counts a message list)"
            )
    return math.ceil(wire_json_length(wire) / 4)


def validate_message(message: Any, index: int, source: str = "<list>") -> None:
    """Check that a :class:`Message` is well formed (role, part types, field types)."""
    loc = f"messages[{index}]"
    if not isinstance(message, Message):
        raise TranscriptError(
            f"expected a Message, got {type(message).__name__}", source=source, location=loc
        )
    if message.role not in ROLES:
        raise TranscriptError(
            f"unknown role {message.role!r}", source=source, location=f"{loc}.role"
        )
    if not isinstance(message.parts, tuple):
        raise TranscriptError("parts must be a tuple", source=source, location=f"{loc}.parts")
    if message.name is not None and not isinstance(message.name, str):
        raise TranscriptError("name must be a string", source=source, location=f"{loc}.name")
    for j, part in enumerate(message.parts):
        ploc = f"{loc}.parts[{j}]"
        if not isinstance(part, _PART_TYPES):
            raise TranscriptError(
                f"unknown part type {type(part).__name__}", source=source, location=ploc
            )
        for attr in ("text", "id", "name", "arguments", "call_id", "output", "media_type"):
            if attr in type(part).__dataclass_fields__:
                value = getattr(part, attr)
                optional = attr == "name" and isinstance(part, ToolResultPart | ApprovalRequestPart)
                optional = optional or (attr == "call_id" and isinstance(part, ApprovalRequestPart))
                if value is None and optional:
                    continue
                if not isinstance(value, str):
                    raise TranscriptError(
                        f"{attr} must be a string, got {type(value).__name__}",
                        source=source,
                        location=f"{ploc}.{attr}",
                    )


def summary_message(summary: str) -> Message:
    """The summary message: a plain user message ``SUMMARY_PREFIX + summary``."""
    return Message(role="user", parts=(TextPart(SUMMARY_PREFIX + summary),))


def _check_count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"count_tokens must return a non-negative integer, got {value!r}")
    return value


def make_counter(
    caller: CallerMessages, count_tokens: CountTokens | None
) -> Callable[[Sequence[Message]], int]:
    """A counter over canonical messages: :func:`estimate_tokens` or ``count_tokens``, both
    on the caller's kind (wire dicts are measured as the caller would send them)."""
    if count_tokens is None:
        if caller.kind == "messages":
            return estimate_message_tokens

        def estimate(messages: Sequence[Message]) -> int:
            return _wire_estimate(messages, caller.emit(messages)) if messages else 0

        return estimate

    def count(messages: Sequence[Message]) -> int:
        return _check_count(count_tokens(caller.emit(messages)))

    return count


def build_candidate(
    messages: Sequence[Message], analysis: BoundaryAnalysis, summary: str
) -> list[Message]:
    """Leading system messages + summary + re-inserted latest user message + ``messages[end:]``."""
    if analysis.end is None:
        raise ConfigError("the analysis has no replaced range")
    out = list(messages[: analysis.start])
    out.append(summary_message(summary))
    latest = analysis.latest_user_index
    if analysis.reinsert_latest_user and latest is not None:
        out.append(messages[latest])
    out.extend(messages[analysis.end :])
    return out


@dataclass(frozen=True, slots=True)
class _Plan:
    """Everything decided before the summarizer call."""

    caller: CallerMessages
    messages: tuple[Message, ...]
    counter: Callable[[Sequence[Message]], int]
    before: int
    analysis: BoundaryAnalysis
    start: int
    end: int
    target: int
    keep: int
    request: SummaryRequest

    def candidate(self, summary: str) -> list[Message]:
        return build_candidate(self.messages, self.analysis, summary)


def _cannot_fit(
    caller: CallerMessages,
    before: int,
    target: int,
    keep: int,
    reason: CannotFitReason,
    detail: str,
    **extra: Any,
) -> CompactResult:
    return CompactResult(
        status="cannot-fit",
        messages=list(caller.originals),
        tokens=TokenCounts(before, before),
        target_tokens=target,
        keep_last_messages=keep,
        reason=reason,
        detail=detail,
        **extra,
    )


def _prepare(
    messages: Sequence[Any],
    summarizer: Any,
    target_tokens: Any,
    keep_last_messages: Any,
    instructions: Any,
    count_tokens: Any,
    cancel: Any,
    format: Any,
) -> CompactResult | _Plan:
    target = check_int("target_tokens", target_tokens)
    keep = check_int("keep_last_messages", keep_last_messages)
    if instructions is not None and not isinstance(instructions, str):
        raise InputTypeError(f"instructions must be a string, got {type(instructions).__name__}")
    if not callable(getattr(summarizer, "summarize", None)):
        raise InputTypeError(
            f"summarizer must have a summarize(request) method, got {type(summarizer).__name__}"
        )
    if count_tokens is not None and not callable(count_tokens):
        raise InputTypeError(f"count_tokens must be callable, got {type(count_tokens).__name__}")
    check_cancel_signal(cancel)
    caller = from_caller(messages, format=format)
    msgs = caller.messages
    for i, m in enumerate(msgs):
        validate_message(m, i)
    raise_if_cancelled(cancel)

    counter = make_counter(caller, count_tokens)
    before = counter(msgs)
    analysis = analyze_boundary(msgs, keep)
    if analysis.end is None:
        return _cannot_fit(
            caller,
            before,
            target,
            keep,
            "no-safe-boundary",
            "; ".join(analysis.explain()),
        )
    start, end = analysis.start, analysis.end
    plan_range = (start, end)
    reinserted = analysis.latest_user_index if analysis.reinsert_latest_user else None
    empty_tokens = counter(build_candidate(msgs, analysis, ""))
    remaining = target - empty_tokens
    if remaining < 1:
        return _cannot_fit(
            caller,
            before,
            target,
            keep,
            "protected-history",
            f"with an empty summary the compacted history already uses {empty_tokens} of "
            f"{target} tokens; no room is left for a summary (the smallest target that "
            f"fits is {empty_tokens + 1}: one token of summary text)",
            candidate_tokens=empty_tokens,
            range_considered=plan_range,
            reinserted_index=reinserted,
        )
    request = build_summary_request(
        msgs[start:end],
        max_output_tokens=min(MAX_SUMMARY_TOKENS, remaining),
        instructions=instructions,
    )
    return _Plan(caller, msgs, counter, before, analysis, start, end, target, keep, request)


def _finish(plan: _Plan, response: Any) -> CompactResult:
    if not isinstance(response, SummaryResponse):
        raise InputTypeError(
            f"summarizer returned {type(response).__name__}, expected SummaryResponse"
        )
    reinserted = plan.analysis.latest_user_index if plan.analysis.reinsert_latest_user else None
    common: dict[str, Any] = {
        "usage": response.usage,
        "range_considered": (plan.start, plan.end),
        "reinserted_index": reinserted,
        "finish_reason": response.finish_reason,
        "model": response.model,
        "summarizer_called": True,
    }
    if response.finish_reason != FINISH_STOP or response.has_tool_call:
        detail = (
            "the summarizer answered with a tool call instead of text"
            if response.has_tool_call
            else f"the summarizer stopped with finish reason {response.finish_reason!r}"
        )
        return _cannot_fit(
            plan.caller,
            plan.before,
            plan.target,
            plan.keep,
            "incomplete-summary",
            detail,
            rejected_summary=response.text,
            **common,
        )
    text = summary_text(response.text)
    if not text:
        return _cannot_fit(
            plan.caller,
            plan.before,
            plan.target,
            plan.keep,
            "empty-summary",
            "the summarizer returned an empty summary",
            rejected_summary=response.text if isinstance(response.text, str) else None,
            **common,
        )
    candidate = plan.candidate(text)
    after = plan.counter(candidate)
    if after > plan.target:
        return _cannot_fit(
            plan.caller,
            plan.before,
            plan.target,
            plan.keep,
            "summary-too-large",
            f"with the summary the compacted history uses {after} tokens, "
            f"over the target of {plan.target}",
            candidate_tokens=after,
            rejected_summary=text,
            **common,
        )
    return CompactResult(
        status="compacted",
        messages=plan.caller.emit(candidate),
        tokens=TokenCounts(plan.before, after),
        target_tokens=plan.target,
        keep_last_messages=plan.keep,
        summary=text,
        replaced_range=(plan.start, plan.end),
        candidate_tokens=after,
        summary_index=plan.start,
        **common,
    )


def _call_sync(summarizer: Summarizer, request: SummaryRequest, cancel: Any) -> Any:
    if cancel is None:
        return summarizer.summarize(request)
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["response"] = summarizer.summarize(request)
        except BaseException as exc:  # handed to the caller as the very same object
            outcome["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=run, name="compactlens-summarize", daemon=True)
    worker.start()
    while not done.wait(_POLL_SECONDS):
        if is_cancelled(cancel):
            raise CompactionCancelled("compaction was cancelled during the summarizer call")
    if "error" in outcome:
        raise outcome["error"]
    if is_cancelled(cancel):
        raise CompactionCancelled("compaction was cancelled during the summarizer call")
    return outcome["response"]


async def _call_async(summarizer: Summarizer, request: SummaryRequest, cancel: Any) -> Any:
    if cancel is None:
        return await summarize_async(summarizer, request)
    task = asyncio.ensure_future(summarize_async(summarizer, request))
    try:
        while True:
            finished, _ = await asyncio.wait({task}, timeout=_POLL_SECONDS)
            if finished:
                break
            if is_cancelled(cancel):
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                raise CompactionCancelled("compaction was cancelled during the summarizer call")
    except asyncio.CancelledError:
        task.cancel()
        raise
    response = task.result()
    if is_cancelled(cancel):
        raise CompactionCancelled("compaction was cancelled during the summarizer call")
    return response


def compact(
    messages: Sequence[Any],
    *,
    summarizer: Summarizer,
    target_tokens: int,
    keep_last_messages: int = 4,
    instructions: str | None = None,
    count_tokens: CountTokens | None = None,
    cancel: Any = None,
    format: str | None = None,
) -> CompactResult:
    """Replace the largest safe older range with one summary so the history fits ``target_tokens``.

    ``messages`` are OpenAI Chat dicts (or another wire format named by ``format``) or
    :class:`Message` objects; the result's ``messages`` are in the same kind, unchanged
    messages as the very same objects. See the module docstring for the exact rules.
    """
    started = time.perf_counter()
    plan = _prepare(
        messages,
        summarizer,
        target_tokens,
        keep_last_messages,
        instructions,
        count_tokens,
        cancel,
        format,
    )
    if isinstance(plan, CompactResult):
        return emit_compact_result(plan, messages, started)
    response = _call_sync(summarizer, plan.request, cancel)
    return emit_compact_result(_finish(plan, response), messages, started)


async def acompact(
    messages: Sequence[Any],
    *,
    summarizer: Summarizer,
    target_tokens: int,
    keep_last_messages: int = 4,
    instructions: str | None = None,
    count_tokens: CountTokens | None = None,
    cancel: Any = None,
    format: str | None = None,
) -> CompactResult:
    """Async :func:`compact`: uses ``summarizer.asummarize`` when present (else a thread).

    Setting ``cancel`` during the call cancels the in-flight summarizer task.
    """
    started = time.perf_counter()
    plan = _prepare(
        messages,
        summarizer,
        target_tokens,
        keep_last_messages,
        instructions,
        count_tokens,
        cancel,
        format,
    )
    if isinstance(plan, CompactResult):
        return emit_compact_result(plan, messages, started)
    response = await _call_async(summarizer, plan.request, cancel)
    return emit_compact_result(_finish(plan, response), messages, started)


__all__ = [
    "MAX_SUMMARY_TOKENS",
    "CountTokens",
    "acompact",
    "build_candidate",
    "compact",
    "estimate_canonical_tokens",
    "estimate_tokens",
    "make_counter",
    "summary_message",
    "validate_message",
    "wire_json_length",
]
