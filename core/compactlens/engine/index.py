"""Message groups, tool-call links and turns: the index a transcript is planned over.

The index depends only on the messages and the tokenizer, is built in one pass,
and is never changed by a strategy: strategies produce plans that overlay it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, Literal, TypeAlias

from compactlens.engine.line_memo import LineMemo
from compactlens.formats._common import parts_and_blocks
from compactlens.formats.caller import from_caller
from compactlens.model.display import card_html, card_text
from compactlens.model.errors import InputTypeError
from compactlens.model.gc_pause import gc_paused
from compactlens.model.messages import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    is_hosted_tool_call,
    is_hosted_tool_result,
    is_opaque_reasoning,
    message_text,
)
from compactlens.model.tokens import (
    CharEstimator,
    Tokenizer,
    count_messages,
    count_texts,
    estimate_from_lengths,
    message_sizes,
    tokenizer_name,
)

#: How reasoning-only messages are grouped: ``compactlens`` attaches them to the next
#: assistant message; ``maf`` follows Microsoft Agent Framework (see :func:`_scan`).
Grouping: TypeAlias = Literal["compactlens", "maf"]

#: Tool calls as one flat tuple, ``(id, name, arguments)`` for each call in order: what
#: the grouping pass keeps of a message's or a group's calls (one object per message, no
#: part per call; ``calls[::3]`` are the ids, ``calls[1::3]`` the names).
CallFields: TypeAlias = tuple[str, ...]


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
    ``unresolved``, ``reasoning`` (a member holds reasoning, alone or beside a
    call), ``media``, ``opaque``, ``hosted`` (a hosted or MCP tool call or result),
    ``approval_pending``.
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


# The index builds one group per message group and one link per call (tens of thousands
# at 10,000 turns). A frozen dataclass's ``__init__`` sets each field through
# ``object.__setattr__``; setting the slots directly costs about a third of that. Neither
# class has a ``__post_init__`` or a check to skip: these give the same values.
_new = object.__new__


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    """The slot setters of ``cls``'s fields ``names``, which must be all its fields in order
    (a field added later must be added to its builder below, or importing fails here)."""
    if tuple(f.name for f in fields(cls)) != names:
        raise TypeError(f"{cls.__name__}'s fields changed: update its builder in engine/index.py")
    return tuple(cls.__dict__[n].__set__ for n in names)


_LINK_SLOTS = _slot_setters(ToolLink, ("call_id", "name", "call_index", "result_indices"))
_GROUP_SLOTS = _slot_setters(
    MessageGroup,
    ("id", "kind", "indices", "tokens", "bytes", "turn", "flags", "tool_names", "call_ids"),
)


def _link(call_id: str, name: str, call_index: int, result_indices: tuple[int, ...]) -> ToolLink:
    """``ToolLink(call_id, name, call_index, result_indices)``, for the index's own loop."""
    link: ToolLink = _new(ToolLink)
    set_id, set_name, set_index, set_results = _LINK_SLOTS
    set_id(link, call_id)
    set_name(link, name)
    set_index(link, call_index)
    set_results(link, result_indices)
    return link


def _group(
    gid: int,
    kind: GroupKind,
    indices: tuple[int, ...],
    tokens: int,
    size: int,
    turn: int | None,
    flags: frozenset[str],
    calls: CallFields,
) -> MessageGroup:
    """The :class:`MessageGroup` of these fields (``bytes=size``; tool names and call ids
    from ``calls``), for the index's own loop."""
    group: MessageGroup = _new(MessageGroup)
    s_id, s_kind, s_indices, s_tokens, s_bytes, s_turn, s_flags, s_names, s_ids = _GROUP_SLOTS
    s_id(group, gid)
    s_kind(group, kind)
    s_indices(group, indices)
    s_tokens(group, tokens)
    s_bytes(group, size)
    s_turn(group, turn)
    s_flags(group, flags)
    s_names(group, calls[1::3])
    s_ids(group, calls[::3])
    return group


@dataclass(frozen=True, slots=True)
class LinkTable:
    """The index's tool links as columns, in the order the calls were declared: call id,
    tool name, call message, result message (-1: none). :attr:`MessageIndex.links` makes
    the :class:`ToolLink` objects on first read; a plan never reads them, and at 10,000
    turns of parallel calls making them (and the collector's pass over them) was about a
    tenth of a whole-call collapse."""

    ids: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    calls: tuple[int, ...] = ()
    results: tuple[int, ...] = ()

    def links(self) -> tuple[ToolLink, ...]:
        """One :class:`ToolLink` per row."""
        return tuple(
            [
                _link(call_id, name, call, (answer,) if answer >= 0 else ())
                for call_id, name, call, answer in zip(
                    self.ids, self.names, self.calls, self.results, strict=True
                )
            ]
        )


@dataclass(frozen=True, slots=True)
class _Scan:
    """Raw output of the grouping pass (before tokens).

    ``flags`` already holds the message-level ``media`` and ``opaque`` flags of each
    group; ``calls`` holds each group's tool calls in message order.
    """

    group_of: tuple[int, ...]
    members: tuple[tuple[int, ...], ...]
    kinds: tuple[GroupKind, ...]
    flags: tuple[frozenset[str], ...]
    links: LinkTable
    problems: tuple[PairingProblem, ...]
    calls: tuple[CallFields, ...] = ()


@dataclass(slots=True)
class ScanState:
    """The grouping pass's working state, before merges are resolved (see :func:`finish_scan`).

    Links are kept as parallel lists (call message, id, tool name, result message or -1,
    group); ``message_flags`` and ``message_calls`` hold message-level facts that
    :func:`finish_scan` hands to each message's final group.
    """

    group_of: list[int]
    members: list[list[int]] = field(default_factory=list)
    kinds: list[GroupKind] = field(default_factory=list)
    flags: dict[int, set[str]] = field(default_factory=dict)
    parent: list[int] = field(default_factory=list)
    merged_any: bool = False
    approvals: dict[str, int] = field(default_factory=dict)
    links_call: list[int] = field(default_factory=list)
    links_id: list[str] = field(default_factory=list)
    links_name: list[str] = field(default_factory=list)
    links_result: list[int] = field(default_factory=list)
    link_group: list[int] = field(default_factory=list)
    problems: list[PairingProblem] = field(default_factory=list)
    message_flags: dict[int, tuple[str, ...]] = field(default_factory=dict)
    message_calls: dict[int, CallFields] = field(default_factory=dict)
    #: Call id -> the newest link still waiting for a result; ``shadowed`` chains each
    #: waiting link to the older waiting link of the same id (a stack without lists).
    pending: dict[str, int] = field(default_factory=dict)
    shadowed: dict[int, int] = field(default_factory=dict)
    declared: set[str] = field(default_factory=set)

    def new_group(self, kind: GroupKind, indices: list[int]) -> int:
        """Start a group of ``kind`` holding messages ``indices``; its id."""
        gid = len(self.members)
        self.members.append(indices)
        self.kinds.append(kind)
        self.parent.append(gid)
        group_of = self.group_of
        for k in indices:
            group_of[k] = gid
        return gid


def call_fields(calls: Sequence[ToolCallPart]) -> CallFields:
    """The :data:`CallFields` of ``calls``."""
    return tuple([x for c in calls for x in (c.id, c.name, c.arguments)])


def open_links(raw: ScanState, i: int, gid: int, calls: CallFields) -> None:
    """Open one link per call of message ``i`` (group ``gid``), noting reused ids."""
    pending, declared, links_call = raw.pending, raw.declared, raw.links_call
    links_id, links_name, links_result = raw.links_id, raw.links_name, raw.links_result
    link_group = raw.link_group
    for k in range(0, len(calls), 3):
        call_id = calls[k]
        if call_id in declared:
            raw.problems.append(
                PairingProblem(
                    "duplicate_id",
                    i,
                    call_id,
                    f"call id {call_id!r} was already used by an earlier call",
                )
            )
        else:
            declared.add(call_id)
        link_no = len(links_call)
        older = pending.get(call_id, -1)
        if older >= 0:
            raw.shadowed[link_no] = older
        pending[call_id] = link_no
        links_call.append(i)
        links_id.append(call_id)
        links_name.append(calls[k + 1])
        links_result.append(-1)
        link_group.append(gid)


def close_link(raw: ScanState, i: int, call_id: str) -> int:
    """The newest link of ``call_id`` still waiting for a result, now answered by message
    ``i``; -1 (and an ``orphan_result`` problem) when none waits."""
    pending = raw.pending
    link_no = pending.get(call_id, -1)
    if link_no < 0:
        raw.problems.append(
            PairingProblem(
                "orphan_result",
                i,
                call_id,
                f"result for call id {call_id!r}, which no earlier call declares",
            )
        )
        return -1
    older = raw.shadowed.pop(link_no, -1)
    if older >= 0:
        pending[call_id] = older
    else:
        del pending[call_id]
    raw.links_result[link_no] = i
    return link_no


_NO_FLAGS: frozenset[str] = frozenset()
_REASONING = ("reasoning",)


_HOSTED_RESULT_ID_KEYS = ("call_id", "tool_use_id", "toolCallId")
_HOSTED_CALL_ID_KEYS = ("call_id", "id", "toolCallId")


def hosted_part_id(part: Part, block: Mapping[str, Any] | None) -> str | None:
    """The call id of a hosted tool call or result, read from its wire block (or None)."""
    if block is None:
        return None
    if is_hosted_tool_result(part):
        keys = _HOSTED_RESULT_ID_KEYS
    elif is_hosted_tool_call(part):
        keys = _HOSTED_CALL_ID_KEYS
    else:
        return None
    for key in keys:
        value = block.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _hosted_ids(message: Message) -> tuple[list[str], list[str]]:
    """The call ids of a message's hosted tool calls and of its hosted results.

    Opaque parts carry no id of their own: the ids come from the wire blocks the parts
    were read from (a part without one has no id and links to nothing).
    """
    calls: list[str] = []
    results: list[str] = []
    for part, block in parts_and_blocks(message):
        if block is None:
            continue
        if is_hosted_tool_result(part):
            keys, out = _HOSTED_RESULT_ID_KEYS, results
        elif is_hosted_tool_call(part):
            keys, out = _HOSTED_CALL_ID_KEYS, calls
        else:
            continue
        for key in keys:
            value = block.get(key)
            if isinstance(value, str) and value:
                out.append(value)
                break
    return calls, results


def _link_own_results(raw: ScanState, m: Message, i: int) -> None:
    """Close the calls of assistant message ``i`` whose results sit in the same message.

    A provider-executed tool (AI SDK ``providerExecuted``: web search...) has its
    result beside its call in one assistant message: a closed exchange, not an
    unresolved call. Results of calls from earlier messages are not linked here.
    """
    for res in m.tool_results:
        link_no = raw.pending.get(res.call_id, -1)
        if link_no >= 0 and raw.links_call[link_no] == i:
            close_link(raw, i, res.call_id)


def _find(parent: list[int], x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _scan(messages: Sequence[Message], grouping: Grouping = "compactlens") -> _Scan:
    """Group messages in one pass: link results to calls by id, attach reasoning, merge.

    Each message's parts are read once; groups and their flags are only materialized
    for what needs them (most groups have no flags and are never merged). With
    ``grouping="maf"`` reasoning-only messages follow Microsoft Agent Framework: they
    join a tool call that follows (or that they follow), else each is a group of its own.
    """
    maf = grouping == "maf"
    last_call_group = -1  # maf: the call group the previous message belongs to
    raw = ScanState(group_of=[0] * len(messages))
    members, parent, group_of = raw.members, raw.parent, raw.group_of
    flags = raw.flags  # group -> flags, only for groups that have some
    link_group = raw.link_group
    approvals = raw.approvals  # approval id -> group
    held_reasoning: list[int] = []
    message_flags = raw.message_flags  # message -> ("media",), ("opaque",)...
    message_calls = raw.message_calls
    hosted_groups: dict[str, int] = {}  # hosted call id -> group
    merged_any = False
    tool_call_kind = GroupKind.TOOL_CALL

    def add_flag(gid: int, flag: str) -> None:
        have = flags.get(gid)
        if have is None:
            flags[gid] = {flag}
        else:
            have.add(flag)

    new_group = raw.new_group

    def flush_reasoning() -> None:
        if held_reasoning:
            for indices in [[k] for k in held_reasoning] if maf else [list(held_reasoning)]:
                gid = new_group(GroupKind.ASSISTANT_TEXT, indices)
                add_flag(gid, "reasoning")
            held_reasoning.clear()

    no_calls: list[ToolCallPart] = []
    no_results: list[ToolResultPart] = []
    no_responses: list[ApprovalResponsePart] = []
    no_requests: list[ApprovalRequestPart] = []
    for i, m in enumerate(messages):
        role = m.role
        parts = m.parts
        # Sort the parts out in one pass; plain text/reasoning messages (most) need no lists.
        # ``only_reasoning``: every part is reasoning (Message.is_reasoning_only's rule).
        plain = True
        reasoning = text = False
        for p in parts:
            if isinstance(p, ReasoningPart):
                reasoning = True
            elif isinstance(p, TextPart):
                text = True
            else:
                plain = False
                break
        hosted_calls = hosted_results = False
        if plain:
            calls, results, responses, requests = no_calls, no_results, no_responses, no_requests
            only_reasoning = reasoning and not text
            if reasoning:
                message_flags[i] = _REASONING
        else:
            calls, results, responses, requests = [], [], [], []
            media = opaque = False
            only_reasoning = True
            for p in parts:
                if isinstance(p, ReasoningPart):
                    reasoning = True
                    continue
                if isinstance(p, OpaquePart):
                    opaque = True
                    if is_opaque_reasoning(p):
                        reasoning = True
                        continue
                    if is_hosted_tool_call(p):
                        hosted_calls = True
                    elif is_hosted_tool_result(p):
                        hosted_results = True
                elif isinstance(p, ToolCallPart):
                    calls.append(p)
                elif isinstance(p, ToolResultPart):
                    results.append(p)
                elif isinstance(p, ApprovalResponsePart):
                    responses.append(p)
                elif isinstance(p, ApprovalRequestPart):
                    requests.append(p)
                elif isinstance(p, MediaPart):
                    media = True
                only_reasoning = False  # text, a call, a result, media...: not reasoning
            if opaque or media:
                message_flags[i] = (
                    (("media",) if media else ())
                    + (("opaque",) if opaque else ())
                    + (("reasoning",) if reasoning else ())
                    + (("hosted",) if hosted_calls or hosted_results else ())
                )
            elif reasoning:
                message_flags[i] = _REASONING
            if calls:
                message_calls[i] = call_fields(calls)
        if role == "assistant" and only_reasoning:
            if maf and last_call_group >= 0 and not held_reasoning:
                members[last_call_group].append(i)  # reasoning right after its call
                group_of[i] = last_call_group
                add_flag(last_call_group, "reasoning")
            else:
                held_reasoning.append(i)
            continue
        last_call_group = -1
        if role == "assistant":
            results = no_results
        hosted_targets: Sequence[int] = ()
        hosted_call_ids: Sequence[str] = ()
        if hosted_calls or hosted_results:
            hosted_call_ids, hosted_result_ids = _hosted_ids(m)
            if not (calls or hosted_calls or role == "user" or m.is_system):
                hosted_targets = [hosted_groups[r] for r in hosted_result_ids if r in hosted_groups]
        if results or hosted_targets or (responses and role != "assistant"):
            flush_reasoning()
            targets: list[int] = list(hosted_targets)
            orphan = False
            for res in results:
                link_no = close_link(raw, i, res.call_id)
                if link_no >= 0:
                    targets.append(link_group[link_no])
                else:
                    orphan = True
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
                        merged_any = True
                if orphan:
                    add_flag(root, "orphan")
            else:
                gid = new_group(tool_call_kind, [i])
                add_flag(gid, "orphan")
            continue
        if role in ("system", "developer"):
            kind = GroupKind.SYSTEM
        elif m.is_summary:
            kind = GroupKind.SUMMARY
        elif role == "user":
            kind = GroupKind.USER
        elif calls or hosted_calls or hosted_results:
            kind = tool_call_kind
        else:
            kind = GroupKind.ASSISTANT_TEXT
        if maf and held_reasoning and not (role == "assistant" and kind is tool_call_kind):
            flush_reasoning()  # MAF: reasoning before anything but a call stands alone
        if role == "assistant" and kind is not GroupKind.SUMMARY:
            if held_reasoning:
                indices = [*held_reasoning, i]
                held_reasoning.clear()
                gid = new_group(kind, indices)
                add_flag(gid, "reasoning")
            else:
                gid = new_group(kind, [i])
        else:
            flush_reasoning()
            gid = new_group(kind, [i])
        if calls:
            open_links(raw, i, gid, message_calls[i])
        for req in requests:
            approvals[req.id] = gid
        if role == "assistant" and calls:
            _link_own_results(raw, m, i)
        if hosted_call_ids:
            for call_id in hosted_call_ids:
                hosted_groups[call_id] = gid
        if role == "assistant" and kind is tool_call_kind and (calls or hosted_calls):
            last_call_group = gid
    flush_reasoning()
    raw.merged_any = merged_any
    return finish_scan(raw)


def _split_at(
    call_id: str, call_index: int, answer: int, g: int, group_of: Sequence[int]
) -> PairingProblem | None:
    """The split pair of the link of ``call_id`` (call ``call_index``, result ``answer``) of
    group ``g``: its result separated from its call by a message of another group (None
    when nothing is in between)."""
    for k in range(call_index + 1, answer):
        if group_of[k] != g:
            return PairingProblem(
                "split_pair",
                answer,
                call_id,
                f"result of {call_id!r} at message {answer} is separated from its "
                f"call at message {call_index} by message {k}",
            )
    return None


def finish_scan(raw: ScanState) -> _Scan:
    """Resolve merges, close the links (unresolved calls, split pairs) and hand each
    message's flags and calls to its final group."""
    members, kinds, flags, parent = raw.members, raw.kinds, raw.flags, raw.parent
    links_call, links_id, links_name = raw.links_call, raw.links_id, raw.links_name
    links_result, link_group, problems = raw.links_result, raw.link_group, raw.problems
    message_flags, message_calls = raw.message_flags, raw.message_calls
    n_messages = len(raw.group_of)

    # Resolve merges: every group points at its root, roots keep their members sorted.
    # Without merges, groups are already in order of their first message and each
    # group's members are ascending (messages are appended in order), so the
    # renumbering is the identity.
    count = len(members)
    final_members: tuple[tuple[int, ...], ...]
    if raw.merged_any:
        roots = [_find(parent, g) for g in range(count)]
        merged: dict[int, list[int]] = {}
        for g, root in enumerate(roots):
            merged.setdefault(root, []).extend(members[g])
            if g != root and g in flags:
                if root in flags:
                    flags[root] |= flags[g]
                else:
                    flags[root] = set(flags[g])
        order = sorted(merged, key=lambda r: min(merged[r]))
        renumber = {r: n for n, r in enumerate(order)}
        final_id = [renumber[r] for r in roots]  # group -> final group
        final_members = tuple(tuple(sorted(merged[r])) for r in order)
        final_group_of = [0] * n_messages
        for n, idxs in enumerate(final_members):
            for k in idxs:
                final_group_of[k] = n
        final_flags = [set(flags[r]) if r in flags else None for r in order]
        final_kinds = [kinds[r] for r in order]
    else:
        final_id = list(range(count))
        final_members = tuple([tuple(idxs) for idxs in members])
        final_group_of = raw.group_of
        final_flags = [flags.get(g) for g in range(count)]
        final_kinds = kinds

    def final_flag(g: int, flag: str) -> None:
        have = final_flags[g]
        if have is None:
            final_flags[g] = {flag}
        else:
            have.add(flag)

    for gid in raw.approvals.values():
        final_flag(final_id[gid], "approval_pending")

    # Unresolved calls and split pairs (the ToolLink objects are made on first read:
    # LinkTable).
    for n, call_index in enumerate(links_call):
        answer = links_result[n]
        g = final_id[link_group[n]]
        if answer < 0:
            final_flag(g, "unresolved")
            problems.append(
                PairingProblem(
                    "unresolved_call",
                    call_index,
                    links_id[n],
                    f"call {links_name[n]!r} ({links_id[n]!r}) has no result",
                )
            )
        else:
            idxs = final_members[g]
            if idxs[-1] - idxs[0] + 1 != len(idxs):  # not contiguous: look in between
                split = _split_at(links_id[n], call_index, answer, g, final_group_of)
                if split is not None:
                    problems.append(split)
    problems.sort(key=lambda p: (p.message_index, p.kind, p.call_id))

    # Message-level flags and tool calls, handed to each message's final group (calls in
    # message order: messages are visited in ascending order).
    for k in sorted(message_flags):
        g = final_group_of[k]
        for flag in message_flags[k]:
            final_flag(g, flag)
    group_calls: list[CallFields] = [()] * count
    for k in sorted(message_calls):
        g = final_group_of[k]
        group_calls[g] = group_calls[g] + message_calls[k]
    return _Scan(
        group_of=tuple(final_group_of),
        members=final_members,
        kinds=tuple(final_kinds),
        flags=tuple([_NO_FLAGS if f is None else frozenset(f) for f in final_flags]),
        links=LinkTable(
            ids=tuple(links_id),
            names=tuple(links_name),
            calls=tuple(links_call),
            results=tuple(links_result),
        ),
        problems=tuple(problems),
        calls=tuple(group_calls),
    )


def _sizes(messages: Sequence[Message]) -> tuple[list[int], list[int]]:
    """Each message's text length and UTF-8 size (see :func:`message_sizes`)."""
    lengths: list[int] = []
    sizes: list[int] = []
    for m in messages:
        n, size = message_sizes(m)
        lengths.append(n)
        sizes.append(size)
    return lengths, sizes


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
    link_table: LinkTable
    problems: tuple[PairingProblem, ...]
    tokenizer: Tokenizer = field(compare=False, repr=False)
    tokenizer_name: str = "estimate"
    total_tokens: int = 0
    total_messages: int = 0
    total_groups: int = 0
    total_turns: int = 0
    non_system_groups: int = 0
    system_tokens: int = 0
    _lines: LineMemo | None = field(default=None, init=False, compare=False, repr=False)
    _links: tuple[ToolLink, ...] | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def links(self) -> tuple[ToolLink, ...]:
        """One :class:`ToolLink` per tool call, in the order the calls were declared (made
        from :attr:`link_table` on first read and kept)."""
        links = self._links
        if links is None:
            links = self.link_table.links()
            object.__setattr__(self, "_links", links)
        return links

    @property
    def lines(self) -> LineMemo:
        """Collapsed lines that plans over this index built, kept for the next plan: a
        cache, not part of the index's value (see :mod:`compactlens.engine.line_memo`); at
        most as many characters as the transcript has UTF-8 bytes. Made on first use."""
        memo = self._lines
        if memo is None:
            memo = LineMemo(sum(g.bytes for g in self.groups))
            object.__setattr__(self, "_lines", memo)
        return memo

    @classmethod
    @gc_paused()
    def build(
        cls,
        messages: Sequence[Message],
        tokenizer: Tokenizer | None = None,
        *,
        grouping: Grouping = "compactlens",
    ) -> MessageIndex:
        """Group ``messages`` and count their tokens once (default: :class:`CharEstimator`).

        ``grouping`` is the profile's rule for reasoning-only messages (see
        :data:`Grouping`; :attr:`compactlens.engine.profiles.Profile.grouping`).
        """
        tok: Tokenizer = tokenizer if tokenizer is not None else CharEstimator()
        msgs = tuple(messages)
        for i, m in enumerate(msgs):
            if not isinstance(m, Message):
                raise InputTypeError(f"messages[{i}] is {type(m).__name__}, not a Message")
        scan = _scan(msgs, grouping)
        if type(tok) is CharEstimator:  # lengths and sizes in one pass
            lengths, sizes = _sizes(msgs)
            counts = estimate_from_lengths(tok, lengths)
        else:
            counts = count_messages(msgs, tok)
            sizes = [message_sizes(m)[1] for m in msgs]
        return cls.assemble(msgs, scan, counts, sizes, tok)

    @classmethod
    def assemble(
        cls,
        msgs: tuple[Message, ...],
        scan: _Scan,
        counts: list[int],
        sizes: list[int],
        tok: Tokenizer,
    ) -> MessageIndex:
        """The index of ``msgs`` from a grouping pass and per-message counts and sizes
        (what :meth:`build` computes; ``engine.wire_index`` computes them from wire dicts)."""
        groups: list[MessageGroup] = []
        turn = 0
        # Turns only grow, so the distinct turns are the changes of the running turn.
        turns, last_turn = 0, -1
        system_tokens = non_system = 0
        kinds, all_flags, all_calls = scan.kinds, scan.flags, scan.calls
        system, user = GroupKind.SYSTEM, GroupKind.USER
        for gid, idxs in enumerate(scan.members):
            kind = kinds[gid]
            if len(idxs) == 1:
                tokens = counts[idxs[0]]
                size = sizes[idxs[0]]
            else:
                tokens = sum([counts[k] for k in idxs])
                size = sum([sizes[k] for k in idxs])
            g_turn: int | None = None
            if kind is system:
                system_tokens += tokens
            else:
                if kind is user:
                    turn += 1
                g_turn = turn
                non_system += 1
                if turn != last_turn:
                    turns, last_turn = turns + 1, turn
            groups.append(
                _group(gid, kind, idxs, tokens, size, g_turn, all_flags[gid], all_calls[gid])
            )
        return cls(
            messages=msgs,
            message_tokens=tuple(counts),
            groups=tuple(groups),
            group_of=scan.group_of,
            link_table=scan.links,
            problems=scan.problems,
            tokenizer=tok,
            tokenizer_name=tokenizer_name(tok),
            total_tokens=sum(counts),
            total_messages=len(msgs),
            total_groups=len(groups),
            total_turns=turns,
            non_system_groups=non_system,
            system_tokens=system_tokens,
        )

    @classmethod
    @gc_paused()
    def from_counts(
        cls,
        messages: Sequence[Message],
        counts: Sequence[int],
        sizes: Sequence[int],
        tokenizer: Tokenizer,
        *,
        grouping: Grouping = "compactlens",
    ) -> MessageIndex:
        """The index :meth:`build` makes, from per-message token ``counts`` and UTF-8
        ``sizes`` counted before (an agent loop counts each message once)."""
        msgs = tuple(messages)
        return cls.assemble(msgs, _scan(msgs, grouping), list(counts), list(sizes), tokenizer)

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

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` with one row per group: kind, turn, message span, roles,
        tokens, tools and flags (pandas: the notebook extra)."""
        from compactlens.engine.display import index_frame

        return index_frame(self)

    def __repr__(self) -> str:
        from compactlens.engine.display import index_card

        return card_text(index_card(self))

    def _repr_html_(self) -> str:
        from compactlens.engine.display import index_card

        return card_html(index_card(self))


def pairing_problems(messages: Sequence[Message]) -> tuple[PairingProblem, ...]:
    """The pairing problems of canonical messages (what :class:`MessageIndex` records)."""
    return _scan(messages).problems


def validate_pairing(messages: Sequence[Any]) -> list[PairingProblem]:
    """Pairing problems: orphan results, unresolved calls, duplicate ids, split pairs.

    Accepts wire dicts (OpenAI Chat Completions) or :class:`Message` objects.
    """
    return list(pairing_problems(from_caller(messages).messages))


# ----------------------------------------------------------------- counting with the index


def index_counter(index: MessageIndex) -> Callable[[Sequence[Any]], int]:
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
            self.cache.update(zip(missing, count_texts(self.inner, missing), strict=True))
        return [self.cache[t] for t in texts]


def memo_tokenizer(index: MessageIndex) -> Tokenizer:
    """The index's tokenizer, counting each distinct text once and primed with the index's
    own counts (for analyses that re-count the same messages)."""
    return _MemoTokenizer(index)
