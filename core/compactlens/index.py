"""Message groups, tool-call links and turns: the index a transcript is planned over.

The index depends only on the messages and the tokenizer, is built in one pass,
and is never changed by a strategy: strategies produce plans that overlay it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from compactlens.messages import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    Message,
    message_text,
)
from compactlens.tokens import CharEstimator, Tokenizer, count_messages, tokenizer_name


class GroupKind(StrEnum):
    """What a group is. A group is the unit every strategy keeps or drops whole."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT_TEXT = "assistant_text"
    TOOL_CALL = "tool_call"
    SUMMARY = "summary"


@dataclass(frozen=True, slots=True)
class ToolLink:
    """One tool call and the messages that answer it (by call id)."""

    call_id: str
    name: str
    call_index: int
    result_indices: tuple[int, ...] = ()

    @property
    def first(self) -> int:
        return self.call_index

    @property
    def last(self) -> int:
        return self.result_indices[-1] if self.result_indices else self.call_index

    @property
    def open(self) -> bool:
        """True when the call never got a result (an unresolved call)."""
        return not self.result_indices


@dataclass(frozen=True, slots=True)
class PairingProblem:
    """A tool-call pairing problem at a message.

    ``kind`` is ``orphan_result`` (a result whose call id was never declared before it),
    ``unresolved_call`` (a call with no result), ``duplicate_id`` (a call id declared
    again while an earlier call of that id is still pending, or reused) or
    ``split_pair`` (a result separated from its call by unrelated messages, which
    providers reject).
    """

    kind: str
    message_index: int
    call_id: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message_index": self.message_index,
            "call_id": self.call_id,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class MessageGroup:
    """An atomic unit of messages.

    ``indices`` are positions in the transcript, ascending; they need not be
    contiguous (a tool result may arrive after unrelated messages). ``turn`` is
    None for system groups; groups before the first user message are turn 0 and
    each user message starts the next turn. ``flags`` may hold ``orphan``,
    ``unresolved``, ``reasoning``, ``media``, ``opaque``, ``approval_pending``.
    """

    id: int
    kind: GroupKind
    indices: tuple[int, ...]
    tokens: int
    bytes: int
    turn: int | None
    flags: frozenset[str] = frozenset()
    tool_names: tuple[str, ...] = ()
    call_ids: tuple[str, ...] = ()

    @property
    def message_count(self) -> int:
        return len(self.indices)

    @property
    def first(self) -> int:
        return self.indices[0]

    @property
    def last(self) -> int:
        return self.indices[-1]

    @property
    def is_system(self) -> bool:
        return self.kind is GroupKind.SYSTEM


@dataclass(frozen=True, slots=True)
class _Scan:
    """Raw output of the grouping pass (before tokens)."""

    group_of: tuple[int, ...]
    members: tuple[tuple[int, ...], ...]
    kinds: tuple[GroupKind, ...]
    flags: tuple[frozenset[str], ...]
    links: tuple[ToolLink, ...]
    link_group: tuple[int, ...]
    problems: tuple[PairingProblem, ...]


def _find(parent: list[int], x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _scan(messages: Sequence[Message]) -> _Scan:
    """Group messages in one pass: link results to calls by id, attach reasoning, merge."""
    members: list[list[int]] = []
    kinds: list[GroupKind] = []
    flags: list[set[str]] = []
    parent: list[int] = []
    group_of: list[int] = [0] * len(messages)
    pending: dict[str, list[int]] = {}  # call id -> stack of link indices still waiting
    declared: set[str] = set()
    links_call: list[int] = []
    links_id: list[str] = []
    links_name: list[str] = []
    links_results: list[list[int]] = []
    link_group: list[int] = []
    approvals: dict[str, int] = {}  # approval id -> group
    problems: list[PairingProblem] = []
    held_reasoning: list[int] = []

    def new_group(kind: GroupKind, first_indices: list[int]) -> int:
        gid = len(members)
        members.append(first_indices)
        kinds.append(kind)
        flags.append(set())
        parent.append(gid)
        for k in first_indices:
            group_of[k] = gid
        return gid

    def flush_reasoning() -> None:
        if held_reasoning:
            gid = new_group(GroupKind.ASSISTANT_TEXT, list(held_reasoning))
            flags[gid].add("reasoning")
            held_reasoning.clear()

    for i, m in enumerate(messages):
        if m.is_reasoning_only:
            held_reasoning.append(i)
            continue
        results = m.tool_results if m.role != "assistant" else ()
        responses = [p for p in m.parts if isinstance(p, ApprovalResponsePart)]
        if results or (responses and m.role != "assistant"):
            flush_reasoning()
            targets: list[int] = []
            orphan = False
            for res in results:
                stack = pending.get(res.call_id)
                if stack:
                    link_no = stack.pop()
                    links_results[link_no].append(i)
                    targets.append(link_group[link_no])
                else:
                    orphan = True
                    problems.append(
                        PairingProblem(
                            "orphan_result",
                            i,
                            res.call_id,
                            f"result for call id {res.call_id!r}, which no earlier call declares",
                        )
                    )
            for resp in responses:
                if resp.id in approvals:
                    targets.append(approvals.pop(resp.id))
            if targets:
                root = _find(parent, targets[0])
                members[root].append(i)
                group_of[i] = root
                for t in targets[1:]:
                    other = _find(parent, t)
                    if other != root:
                        parent[other] = root
                if orphan:
                    flags[root].add("orphan")
            else:
                gid = new_group(GroupKind.TOOL_CALL, [i])
                flags[gid].add("orphan")
            continue
        if m.is_system:
            kind = GroupKind.SYSTEM
        elif m.is_summary:
            kind = GroupKind.SUMMARY
        elif m.role == "user":
            kind = GroupKind.USER
        elif m.tool_calls:
            kind = GroupKind.TOOL_CALL
        else:
            kind = GroupKind.ASSISTANT_TEXT
        if m.role == "assistant" and kind is not GroupKind.SUMMARY:
            indices = [*held_reasoning, i]
            had_reasoning = bool(held_reasoning)
            held_reasoning.clear()
            gid = new_group(kind, indices)
            if had_reasoning:
                flags[gid].add("reasoning")
        else:
            flush_reasoning()
            gid = new_group(kind, [i])
        for call in m.tool_calls:
            if call.id in declared:
                problems.append(
                    PairingProblem(
                        "duplicate_id",
                        i,
                        call.id,
                        f"call id {call.id!r} was already used by an earlier call",
                    )
                )
            declared.add(call.id)
            pending.setdefault(call.id, []).append(len(links_call))
            links_call.append(i)
            links_id.append(call.id)
            links_name.append(call.name)
            links_results.append([])
            link_group.append(gid)
        for part in m.parts:
            if isinstance(part, ApprovalRequestPart):
                approvals[part.id] = gid
    flush_reasoning()

    # Resolve merges: every group points at its root, roots keep their members sorted.
    roots = [_find(parent, g) for g in range(len(members))]
    merged: dict[int, list[int]] = {}
    for g, root in enumerate(roots):
        merged.setdefault(root, []).extend(members[g])
        if g != root:
            flags[root] |= flags[g]
    order = sorted(merged, key=lambda r: min(merged[r]))
    renumber = {r: n for n, r in enumerate(order)}
    final_members = tuple(tuple(sorted(merged[r])) for r in order)
    final_group_of = [0] * len(messages)
    for n, idxs in enumerate(final_members):
        for k in idxs:
            final_group_of[k] = n
    final_flags = [set(flags[r]) for r in order]
    final_kinds = [kinds[r] for r in order]
    for gid in approvals.values():
        final_flags[renumber[roots[gid]]].add("approval_pending")

    links: list[ToolLink] = []
    final_link_group: list[int] = []
    for n in range(len(links_call)):
        link = ToolLink(links_id[n], links_name[n], links_call[n], tuple(links_results[n]))
        links.append(link)
        g = renumber[roots[link_group[n]]]
        final_link_group.append(g)
        if link.open:
            final_flags[g].add("unresolved")
            problems.append(
                PairingProblem(
                    "unresolved_call",
                    link.call_index,
                    link.call_id,
                    f"call {link.name!r} ({link.call_id!r}) has no result",
                )
            )
    # Split pairs: a result separated from its call by a message of another group.
    for n, link in enumerate(links):
        if link.open:
            continue
        g = final_link_group[n]
        idxs = final_members[g]
        if idxs[-1] - idxs[0] + 1 == len(idxs):
            continue  # contiguous group: nothing in between
        for k in range(link.call_index + 1, link.last):
            if final_group_of[k] != g:
                problems.append(
                    PairingProblem(
                        "split_pair",
                        link.last,
                        link.call_id,
                        f"result of {link.call_id!r} at message {link.last} is separated from its "
                        f"call at message {link.call_index} by message {k}",
                    )
                )
                break
    problems.sort(key=lambda p: (p.message_index, p.kind, p.call_id))
    return _Scan(
        group_of=tuple(final_group_of),
        members=final_members,
        kinds=tuple(final_kinds),
        flags=tuple(frozenset(f) for f in final_flags),
        links=tuple(links),
        link_group=tuple(final_link_group),
        problems=tuple(problems),
    )


@dataclass(frozen=True, slots=True)
class MessageIndex:
    """Groups, links, turns and per-message token counts of one transcript.

    Build it once with :meth:`build`; plan any number of strategies over it.
    All totals are plain attributes (O(1) to read).
    """

    messages: tuple[Message, ...]
    message_tokens: tuple[int, ...]
    groups: tuple[MessageGroup, ...]
    group_of: tuple[int, ...]
    links: tuple[ToolLink, ...]
    problems: tuple[PairingProblem, ...]
    tokenizer: Tokenizer = field(compare=False, repr=False)
    tokenizer_name: str = "estimate"
    total_tokens: int = 0
    total_messages: int = 0
    total_groups: int = 0
    total_turns: int = 0
    non_system_groups: int = 0
    system_tokens: int = 0

    @classmethod
    def build(cls, messages: Sequence[Message], tokenizer: Tokenizer | None = None) -> MessageIndex:
        """Group ``messages`` and count their tokens once (default: :class:`CharEstimator`)."""
        tok: Tokenizer = tokenizer if tokenizer is not None else CharEstimator()
        msgs = tuple(messages)
        for i, m in enumerate(msgs):
            if not isinstance(m, Message):
                raise TypeError(f"messages[{i}] is {type(m).__name__}, not a Message")
        scan = _scan(msgs)
        counts = count_messages(msgs, tok)
        sizes = [len(message_text(m).encode("utf-8")) for m in msgs]
        groups: list[MessageGroup] = []
        turn = 0
        turns_seen: set[int] = set()
        system_tokens = 0
        for gid, idxs in enumerate(scan.members):
            kind = scan.kinds[gid]
            g_flags = set(scan.flags[gid])
            if any(msgs[k].has_media for k in idxs):
                g_flags.add("media")
            if any(msgs[k].has_opaque for k in idxs):
                g_flags.add("opaque")
            if kind is GroupKind.USER:
                turn += 1
            g_turn: int | None = None if kind is GroupKind.SYSTEM else turn
            if g_turn is not None:
                turns_seen.add(g_turn)
            tokens = sum(counts[k] for k in idxs)
            if kind is GroupKind.SYSTEM:
                system_tokens += tokens
            names: list[str] = []
            call_ids: list[str] = []
            for k in idxs:
                for c in msgs[k].tool_calls:
                    names.append(c.name)
                    call_ids.append(c.id)
            groups.append(
                MessageGroup(
                    id=gid,
                    kind=kind,
                    indices=idxs,
                    tokens=tokens,
                    bytes=sum(sizes[k] for k in idxs),
                    turn=g_turn,
                    flags=frozenset(g_flags),
                    tool_names=tuple(names),
                    call_ids=tuple(call_ids),
                )
            )
        return cls(
            messages=msgs,
            message_tokens=tuple(counts),
            groups=tuple(groups),
            group_of=scan.group_of,
            links=scan.links,
            problems=scan.problems,
            tokenizer=tok,
            tokenizer_name=tokenizer_name(tok),
            total_tokens=sum(counts),
            total_messages=len(msgs),
            total_groups=len(groups),
            total_turns=len(turns_seen),
            non_system_groups=sum(1 for g in groups if not g.is_system),
            system_tokens=system_tokens,
        )

    def safe_cuts(self) -> list[bool]:
        """``safe[k]`` is True when cutting before message ``k`` splits no tool link.

        Computed for every k in one pass with a difference array: a cut at k is
        unsafe when some link has ``first < k <= last``.
        """
        n = self.total_messages
        diff = [0] * (n + 2)
        for link in self.links:
            if link.last > link.first:
                diff[link.first + 1] += 1
                diff[link.last + 1] -= 1
        safe: list[bool] = []
        running = 0
        for k in range(n + 1):
            running += diff[k]
            safe.append(running == 0)
        return safe


def validate_pairing(messages: Sequence[Any]) -> list[PairingProblem]:
    """Pairing problems: orphan results, unresolved calls, duplicate ids, split pairs.

    Accepts wire dicts (OpenAI Chat Completions) or :class:`Message` objects.
    """
    from compactlens.wire import from_caller

    return list(_scan(from_caller(messages).messages).problems)
