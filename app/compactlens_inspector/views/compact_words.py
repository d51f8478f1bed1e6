"""A ``compact()`` run's boundary and reason in plain words, for the Cannot-fit debugger.

The library's :meth:`~compactlens.compact.BoundaryAnalysis.explain` lines carry code names
and ids (``protected-history:``, ``unresolved call id toolu_33 at 66``, ``replaced range:
[1, 62)``): right for a log, not for a page people read. Here every line names messages
by their position and tools by their name, with the vocabulary's labels. No Streamlit
here.
"""

from __future__ import annotations

from collections.abc import Sequence

from compactlens.analysis import protection_label
from compactlens.compact import BoundaryAnalysis, CompactResult, Protection
from compactlens.engine import cannot_fit_words, plural
from compactlens.model import Message, ToolCallPart
from compactlens_inspector.style.wording import param_words

_AND_AFTER = "it and every later message stay as they are"


def _span(first: int, last: int) -> str:
    return f"message {first}" if first == last else f"messages {first}–{last}"


def _tool(messages: Sequence[Message], index: int, ref_id: str | None) -> str:
    """The tool message ``index`` calls with ``ref_id``, by name (“finish”; "a tool" when
    the message holds no such call or it has no name)."""
    if 0 <= index < len(messages):
        for part in messages[index].parts:
            if isinstance(part, ToolCallPart) and (ref_id is None or part.id == ref_id):
                return f"“{part.name}”" if part.name else "a tool"
    return "a tool"


def protection_sentence(p: Protection, messages: Sequence[Message], keep: int) -> str:
    """One protection in words, its messages by position and its tool by name."""
    if p.kind == "keep-last":
        last = len(messages) - 1
        return (
            f"The newest {plural(keep, 'message')} ({_span(p.index, last)}) stay verbatim "
            f"(“{param_words('keep_last_messages')}” is {keep})."
        )
    if p.kind == "unresolved-call":
        return (
            f"Message {p.index} calls {_tool(messages, p.index, p.ref_id)} and has no result "
            f"yet: {_AND_AFTER}."
        )
    if p.kind == "pending-approval":
        return f"Message {p.index} asks for an approval with no answer yet: {_AND_AFTER}."
    if p.kind == "later-system":
        return f"Message {p.index} is a later system message: {_AND_AFTER}."
    if p.kind == "media":
        return f"Message {p.index} holds an image or a file: {_AND_AFTER}."
    if p.kind == "opaque":
        return f"Message {p.index} holds opaque provider content: {_AND_AFTER}."
    if p.kind in ("tool-pair", "approval-pair") and p.span is not None:
        first, last = p.span
        if p.kind == "tool-pair":
            call = f"The call to {_tool(messages, first, p.ref_id)} (message {first})"
            answer = "its result" if last == first + 1 else "its results"
        else:
            call = f"The approval request (message {first})"
            answer = "its answer"
        return (
            f"{call} and {answer} ({_span(first + 1, last)}) stay together, so the summary "
            f"ends before message {first}."
        )
    if p.kind == "leading-system":
        return f"Message {p.index} is a system message at the start: it stays in place."
    return f"Message {p.index} stays as it is."


#: Pins that keep their message and every later one: the earliest says it for the rest.
_FENCES = ("unresolved-call", "pending-approval", "later-system", "media", "opaque")


def _pin_sentences(pins: Sequence[Protection], messages: Sequence[Message], keep: int) -> list[str]:
    """The pins in words; of those that keep every later message too, only the earliest,
    with how many later ones it covers (a Codex log with encrypted reasoning in 22
    messages said "it and every later message stay as they are" 22 times)."""
    fences = sorted((p for p in pins if p.kind in _FENCES), key=lambda p: p.index)
    shown = [p for p in pins if p.kind not in _FENCES or p is (fences[0] if fences else None)]
    out = []
    for p in shown:
        words = protection_sentence(p, messages, keep)
        if fences and p is fences[0] and len(fences) > 1:
            more = len(fences) - 1
            words = f"{words[:-1]}; {plural(more, 'later message')} would stop the summary too."
        out.append(words)
    return out


def boundary_lines(
    boundary: BoundaryAnalysis, messages: Sequence[Message], *, compacted: bool
) -> list[str]:
    """What stays, what is summarized and why, one sentence a line: the system messages
    at the start, every pin and split pair that limits the range, the range (``compacted``:
    replaced, else the one that would be) and the latest user request re-inserted."""
    lines: list[str] = []
    if boundary.start:
        lines.append(
            "The system message at the start (message 0) stays in place."
            if boundary.start == 1
            else f"The {boundary.start} system messages at the start "
            f"({_span(0, boundary.start - 1)}) stay in place."
        )
    keep = boundary.keep_last_messages
    lines.extend(_pin_sentences(boundary.pins, messages, keep))
    pairs = sorted(
        {
            r
            for m in boundary.messages
            for r in m.reasons
            if r.kind in ("tool-pair", "approval-pair")
        },
        key=lambda r: (r.span or (0, 0), r.ref_id or ""),
    )
    lines.extend(protection_sentence(r, messages, keep) for r in pairs)
    if boundary.end is None:
        lines.append(
            "There is no safe place to end the summary: nothing lies between the system "
            "messages at the start and the messages that must stay."
        )
        return lines
    one = boundary.end - 1 == boundary.start
    verb = ("is" if one else "are") + " replaced" if compacted else "would be replaced"
    lines.append(
        f"{_span(boundary.start, boundary.end - 1)[:1].upper()}"
        f"{_span(boundary.start, boundary.end - 1)[1:]} {verb} by one summary."
    )
    if boundary.reinsert_latest_user and boundary.latest_user_index is not None:
        lines.append(
            f"The latest user request (message {boundary.latest_user_index}) is summarized and "
            "also re-inserted word for word after the summary."
        )
    return lines


def reason_sentence(
    reason: str | None,
    detail: str | None,
    *,
    candidate: int | None = None,
    target: int | None = None,
    smallest: int | None = None,
) -> str:
    """Why ``compact()`` could not fit, in words: the reason's plain label, then what it
    means (``candidate``: what stays with an empty summary, against ``target``; with
    ``smallest``, the smallest target that fits, said in the same sentence so that the
    candidate never reads as a second target), else its detail when that is prose (the
    boundary's own detail is its code lines: the lines of :func:`boundary_lines` say it
    instead)."""
    if not reason:
        return "The target was missed."
    label = cannot_fit_words(reason)
    if reason == "protected-history" and candidate is not None and target is not None:
        if smallest is not None:
            return (
                f"{label}: what must stay already uses {candidate:,} tokens before any "
                f"summary text, so the smallest target that fits is {smallest:,} (the "
                f"target is {target:,})."
            )
        return (
            f"{label}: what must stay already uses {candidate:,} of the {target:,} tokens, "
            "before any summary text."
        )
    if reason == "no-safe-boundary" or not detail:
        return f"{label}."
    return f"{label}: {detail}"


def stop_sentence(result: CompactResult) -> str:
    """:func:`reason_sentence` of a ``compact()`` call that could not fit: its reason, its
    candidate against its target, and the smallest target that fits."""
    return reason_sentence(
        result.reason,
        result.detail,
        candidate=result.candidate_tokens,
        target=result.target_tokens,
        smallest=result.smallest_target,
    )


def part_reason(label: str, boundary: BoundaryAnalysis, messages: Sequence[Message]) -> str | None:
    """The first protection behind a waterfall part, in words (None: no protection has
    that part's label)."""
    keep = boundary.keep_last_messages
    for row in boundary.messages:
        for r in row.reasons[:1]:
            if protection_label(r.kind) == label:
                return protection_sentence(r, messages, keep)
    return None


__all__ = [
    "boundary_lines",
    "part_reason",
    "protection_sentence",
    "reason_sentence",
    "stop_sentence",
]
