"""The replaced range of ``compact()`` (rule 3) and why every other message is protected.

Leading system messages stay in place and are never summarized. The replaced range
``[start, end)`` starts right after them and is the largest one such that:

* ``end <= len(messages) - keep_last_messages`` (so ``keep_last_messages`` is a minimum);
* no later system message, media/file part or opaque provider content lies inside it
  or before its end: each *pins* itself and everything after it;
* no unresolved tool call and no unanswered approval request lies inside it: an open
  call id or approval id pins the first message that carries it and everything after;
* no tool call/result link and no approval request/response link straddles ``end``.

A link is every message that carries one id, first to last (``@deepagents/compaction``'s
rule): when a call id is used again later, the first call and the last result are one
link, so no cut falls between them (see :func:`find_pairs`).

When no non-empty range satisfies all of this there is no safe boundary.

:func:`analyze_boundary` returns a :class:`BoundaryAnalysis` with the range, the pins
that limit it and, for every message, why it is summarized or kept; the inspector's
``cannot-fit`` debugger shows exactly these reasons.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from compactlens.engine.guards import latest_request_index
from compactlens.engine.vocabulary import plural
from compactlens.formats.caller import from_caller
from compactlens.model.messages import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    Message,
    ToolCallPart,
    ToolResultPart,
)
from compactlens.model.validation import check_int

ProtectionKind: TypeAlias = Literal[
    "leading-system",
    "keep-last",
    "later-system",
    "media",
    "opaque",
    "unresolved-call",
    "pending-approval",
    "tool-pair",
    "approval-pair",
]

#: Kinds that pin a message and everything after it.
PIN_KINDS: frozenset[str] = frozenset(
    {"keep-last", "later-system", "media", "opaque", "unresolved-call", "pending-approval"}
)

MessageState: TypeAlias = Literal["leading-system", "summarized", "kept"]


@dataclass(frozen=True, slots=True)
class Protection:
    """One reason a message is not summarized.

    ``index`` is the message that causes it (for ``keep-last``: the first message of
    the protected suffix). ``ref_id`` is the tool call id or approval id involved;
    ``span`` the ``(first, last)`` message indices of a pair.
    """

    kind: ProtectionKind
    index: int
    detail: str
    ref_id: str | None = None
    span: tuple[int, int] | None = None

    @property
    def pins(self) -> bool:
        """True when this protects its own message and everything after it."""
        return self.kind in PIN_KINDS

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "index": self.index,
            "detail": self.detail,
            "ref_id": self.ref_id,
            "span": list(self.span) if self.span else None,
        }


@dataclass(frozen=True, slots=True)
class PairSpan:
    """A tool call with its results, or an approval request with its response."""

    kind: Literal["tool", "approval"]
    ref_id: str
    indices: tuple[int, ...]

    @property
    def first(self) -> int:
        return self.indices[0]

    @property
    def last(self) -> int:
        return self.indices[-1]

    def straddles(self, cut: int) -> bool:
        """True when a cut before message ``cut`` separates members of this pair."""
        return self.first < cut <= self.last


@dataclass(frozen=True, slots=True)
class MessageBoundary:
    """Where one message ends up and why."""

    index: int
    role: str
    state: MessageState
    reasons: tuple[Protection, ...] = ()
    reinserted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "role": self.role,
            "state": self.state,
            "reasons": [r.to_dict() for r in self.reasons],
            "reinserted": self.reinserted,
        }


@dataclass(frozen=True, slots=True)
class BoundaryAnalysis:
    """The replaced range and the protection of every message.

    ``start`` is the number of leading system messages; ``limit`` the largest end the
    pins allow (``>= start``); ``end`` the largest safe end ``<= limit`` (None when
    there is no non-empty safe range). ``pins`` lists every pin in index order and
    ``binding`` those at ``limit`` (the ones that set it).
    """

    message_count: int
    keep_last_messages: int
    start: int
    end: int | None
    limit: int
    pins: tuple[Protection, ...]
    binding: tuple[Protection, ...]
    pairs: tuple[PairSpan, ...]
    messages: tuple[MessageBoundary, ...]
    latest_user_index: int | None
    reinsert_latest_user: bool

    @property
    def ok(self) -> bool:
        return self.end is not None

    @property
    def replaced_range(self) -> tuple[int, int] | None:
        return (self.start, self.end) if self.end is not None else None

    def explain(self) -> list[str]:
        """Plain-language lines: the range, then every pin and split pair that limits it."""
        lines: list[str] = []
        if self.start:
            lines.append(
                f"leading system messages 0–{self.start - 1} stay in place"
                if self.start > 1
                else "leading system message 0 stays in place"
            )
        for pin in self.pins:
            lines.append(pin.detail)
        blocked = sorted(
            {
                r
                for m in self.messages
                for r in m.reasons
                if r.kind in ("tool-pair", "approval-pair")
            },
            key=lambda r: (r.span or (0, 0), r.ref_id or ""),
        )
        for r in blocked:
            lines.append(r.detail)
        if self.end is None:
            lines.append("no safe boundary: nothing between the system messages and the pins")
        else:
            lines.append(f"replaced range: [{self.start}, {self.end})")
            if self.reinsert_latest_user and self.latest_user_index is not None:
                lines.append(
                    f"latest user message {self.latest_user_index} is summarized and re-inserted"
                )
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "message_count": self.message_count,
            "keep_last_messages": self.keep_last_messages,
            "start": self.start,
            "end": self.end,
            "limit": self.limit,
            "pins": [p.to_dict() for p in self.pins],
            "binding": [p.to_dict() for p in self.binding],
            "messages": [m.to_dict() for m in self.messages],
            "latest_user_index": self.latest_user_index,
            "reinsert_latest_user": self.reinsert_latest_user,
            "explain": self.explain(),
        }


def leading_system_count(messages: Sequence[Message]) -> int:
    """How many system/developer messages open the conversation."""
    n = 0
    for m in messages:
        if not m.is_system:
            break
        n += 1
    return n


@dataclass(slots=True)
class _Link:
    """Every message that carries one call id (or approval id), and whether its last
    part leaves it open (a call or request, not yet answered)."""

    indices: list[int]
    open: bool
    answered: bool = False  # a result (or response) belongs to it


def _link(
    links: dict[tuple[str, str], _Link], key: tuple[str, str], i: int, state: bool | None
) -> None:
    link = links.get(key)
    if link is None:
        links[key] = _Link([i], bool(state))
        return
    if link.indices[-1] != i:
        link.indices.append(i)
    if state is not None:
        link.open = state


def find_pairs(messages: Sequence[Message]) -> tuple[list[PairSpan], list[Protection]]:
    """Tool and approval links, and the open ones (as pins), as ``@deepagents/compaction``
    draws them.

    All the messages that carry one call id (its calls, its results, an approval request
    for it) are one link, from the first to the last of them, whatever lies between: a
    call id used again later links the first call to the last result. A link is open when
    its last part is a call (an approval request, for an approval id); an open link pins
    its *first* message and everything after it. A result whose id no call declares is
    part of no pair.
    """
    links: dict[tuple[str, str], _Link] = {}
    for i, m in enumerate(messages):
        for part in m.parts:
            if isinstance(part, ToolCallPart):
                _link(links, ("tool", part.id), i, True)
            elif isinstance(part, ToolResultPart):
                _link(links, ("tool", part.call_id), i, False)
                links[("tool", part.call_id)].answered = True
            elif isinstance(part, ApprovalRequestPart):
                if part.call_id is not None:
                    _link(links, ("tool", part.call_id), i, None)
                _link(links, ("approval", part.id), i, True)
            elif isinstance(part, ApprovalResponsePart):
                _link(links, ("approval", part.id), i, False)
                links[("approval", part.id)].answered = True
    pairs: list[PairSpan] = []
    pins: list[Protection] = []
    for (kind, ref_id), link in links.items():
        first = link.indices[0]
        if link.open:
            seen = "" if len(link.indices) == 1 else f" (first seen at {first})"
            if kind == "tool":
                pins.append(
                    Protection(
                        "unresolved-call",
                        first,
                        f"unresolved call id {ref_id}{seen} at {link.indices[-1]}",
                        ref_id=ref_id,
                    )
                )
            else:
                pins.append(
                    Protection(
                        "pending-approval",
                        first,
                        f"unanswered approval request id {ref_id}{seen} at {link.indices[-1]}",
                        ref_id=ref_id,
                    )
                )
        if len(link.indices) > 1 or (link.answered and not link.open):
            pair_kind: Literal["tool", "approval"] = "tool" if kind == "tool" else "approval"
            pairs.append(PairSpan(pair_kind, ref_id, tuple(link.indices)))
    pairs.sort(key=lambda p: (p.first, p.kind, p.ref_id))
    pins.sort(key=lambda p: (p.index, p.kind, p.ref_id or ""))
    return pairs, pins


def latest_user_index(messages: Sequence[Message]) -> int | None:
    """The latest real user request: role ``user``, some text, not a summary, no tool
    results (the engine's one rule, :func:`compactlens.engine.latest_request_index`)."""
    return latest_request_index(messages)


def _as_messages(items: Sequence[Any]) -> tuple[Message, ...]:
    if all(isinstance(m, Message) for m in items):
        return tuple(items)
    return from_caller(items).messages


def analyze_boundary(messages: Sequence[Any], keep_last_messages: int = 4) -> BoundaryAnalysis:
    """The exact replaced range of rule 3 and the protection reason of every message.

    Accepts :class:`Message` objects or wire dicts (see :func:`compactlens.formats.from_caller`).
    """
    keep = check_int("keep_last_messages", keep_last_messages)
    msgs = _as_messages(messages)
    n = len(msgs)
    start = leading_system_count(msgs)
    pairs, open_pins = find_pairs(msgs)

    pins: list[Protection] = []
    suffix_start = max(n - keep, 0)
    if suffix_start < n:
        last = n - 1
        span_text = f"messages {suffix_start}–{last}" if suffix_start < last else f"message {last}"
        pins.append(
            Protection(
                "keep-last",
                suffix_start,
                f"protected suffix: the newest {plural(keep, 'message')} kept verbatim "
                f"({span_text})",
            )
        )
    for i in range(start, n):
        m = msgs[i]
        if m.is_system:
            pins.append(Protection("later-system", i, f"later system message at {i}"))
        if m.has_media:
            pins.append(Protection("media", i, f"media at {i}"))
        if m.has_opaque:
            pins.append(Protection("opaque", i, f"opaque provider content at {i}"))
    pins.extend(p for p in open_pins if p.index >= start)
    order = {"keep-last": 0}
    pins.sort(key=lambda p: (p.index, order.get(p.kind, 1), p.kind, p.ref_id or ""))

    limit = min([n, *(p.index for p in pins)])
    limit = max(limit, start)
    binding = tuple(p for p in pins if max(p.index, start) == limit)

    # Unsafe cut positions: a cut before message e is unsafe when a pair has first < e <= last.
    diff = [0] * (n + 2)
    for pair in pairs:
        if pair.last > pair.first:
            diff[pair.first + 1] += 1
            diff[pair.last + 1] -= 1
    unsafe = [False] * (n + 1)
    running = 0
    for e in range(n + 1):
        running += diff[e]
        unsafe[e] = running > 0
    end: int | None = None
    for e in range(limit, start, -1):
        if not unsafe[e]:
            end = e
            break

    latest = latest_user_index(msgs)
    reinsert = end is not None and latest is not None and start <= latest < end

    keep_pin = next((p for p in pins if p.kind == "keep-last"), None)
    other_pins = [p for p in pins if p.kind != "keep-last"]
    pins_at: dict[int, list[Protection]] = {}
    for p in other_pins:
        pins_at.setdefault(p.index, []).append(p)
    first_pin_before: list[Protection | None] = []
    earliest: Protection | None = None
    for i in range(n):
        first_pin_before.append(earliest)
        if earliest is None and i in pins_at:
            earliest = pins_at[i][0]
    boundary_end = end if end is not None else start
    rows: list[MessageBoundary] = []
    for i, m in enumerate(msgs):
        if i < start:
            reason = Protection("leading-system", i, f"leading system message at {i} stays")
            rows.append(MessageBoundary(i, m.role, "leading-system", (reason,)))
            continue
        if i < boundary_end:
            rows.append(MessageBoundary(i, m.role, "summarized", (), reinserted=i == latest))
            continue
        reasons: list[Protection] = []
        if keep_pin is not None and i >= keep_pin.index:
            reasons.append(keep_pin)
        reasons.extend(pins_at.get(i, ()))
        before = first_pin_before[i]
        if before is not None:
            reasons.append(before)
        if i < limit:
            for pair in pairs:
                if pair.first <= i < pair.last:
                    what = "tool pair" if pair.kind == "tool" else "approval pair"
                    reasons.append(
                        Protection(
                            "tool-pair" if pair.kind == "tool" else "approval-pair",
                            pair.first,
                            f"{what} {pair.ref_id} (messages {pair.first}–{pair.last}) "
                            f"would be split by ending the range after message {i}",
                            ref_id=pair.ref_id,
                            span=(pair.first, pair.last),
                        )
                    )
        rows.append(MessageBoundary(i, m.role, "kept", tuple(reasons)))
    return BoundaryAnalysis(
        message_count=n,
        keep_last_messages=keep,
        start=start,
        end=end,
        limit=limit,
        pins=tuple(pins),
        binding=binding,
        pairs=tuple(pairs),
        messages=tuple(rows),
        latest_user_index=latest,
        reinsert_latest_user=reinsert,
    )


__all__ = [
    "BoundaryAnalysis",
    "MessageBoundary",
    "PairSpan",
    "Protection",
    "ProtectionKind",
    "analyze_boundary",
    "find_pairs",
    "latest_user_index",
    "leading_system_count",
]
