"""A plan overlays a :class:`MessageIndex`: which groups are excluded, collapsed or inserted.

Strategies change a plan, never the index. Every change updates running totals,
so reading the included tokens, messages, groups or turns is O(1) and a
strategy can re-check its target after each step without recounting.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from compactlens.engine.guards import NO_LOCKS, Locks
from compactlens.engine.index import GroupKind, MessageIndex
from compactlens.model.errors import ConfigError
from compactlens.model.messages import Message


@dataclass(frozen=True, slots=True)
class Insertion:
    """New messages placed before original message ``position`` (``len`` = at the end)."""

    position: int
    messages: tuple[Message, ...]
    tokens: int
    kind: GroupKind
    strategy: str
    reason: str
    replaces: tuple[int, ...] = ()


@dataclass(slots=True)
class Plan:
    """The mutable working state of one compaction run over an index.

    ``action[g]`` is ``kept``, ``excluded``, ``collapsed`` or ``summarized``. ``locks``
    (from the run's :class:`~compactlens.engine.guards.Guards`) name the groups no
    strategy may exclude or change and those whose content stays verbatim: :meth:`exclude`
    and :meth:`collapse` refuse them (and return False).
    """

    index: MessageIndex
    locks: Locks = NO_LOCKS
    action: list[str] = field(init=False)
    by: list[str] = field(init=False)
    why: list[str] = field(init=False)
    replacement: dict[int, tuple[tuple[Message, ...], int]] = field(init=False)
    clamped: set[int] = field(init=False)
    insertions: list[Insertion] = field(init=False)
    log: list[int] = field(init=False)
    _tokens: int = field(init=False)
    _messages: int = field(init=False)
    _groups: int = field(init=False)
    _tool_groups: int = field(init=False)
    _turn_counts: dict[int, int] = field(init=False)

    def __post_init__(self) -> None:
        ix = self.index
        n = ix.total_groups
        self.action = ["kept"] * n
        self.by = [""] * n
        self.why = [""] * n
        self.replacement = {}
        self.clamped = set()
        self.insertions = []
        self.log = []
        self._tokens = ix.total_tokens
        self._messages = ix.total_messages
        self._groups = ix.non_system_groups
        self._tool_groups = sum(1 for g in ix.groups if g.kind is GroupKind.TOOL_CALL)
        counts: dict[int, int] = {}
        for g in ix.groups:
            if g.turn is not None:
                counts[g.turn] = counts.get(g.turn, 0) + 1
        self._turn_counts = counts

    # -- metrics (the triggers.Metrics protocol) ---------------------------------------
    @property
    def tokens(self) -> int:
        """Included tokens, O(1)."""
        return self._tokens

    @property
    def messages(self) -> int:
        """Included messages, O(1)."""
        return self._messages

    @property
    def groups(self) -> int:
        """Included non-system groups, O(1)."""
        return self._groups

    @property
    def turns(self) -> int:
        """Included user turns (turns with at least one included group), O(1)."""
        return len(self._turn_counts)

    @property
    def tool_call_groups(self) -> int:
        """Included, uncollapsed tool-call groups, O(1)."""
        return self._tool_groups

    def metrics(self) -> dict[str, int]:
        return {
            "tokens": self.tokens,
            "messages": self.messages,
            "groups": self.groups,
            "turns": self.turns,
            "tool_call_groups": self.tool_call_groups,
        }

    # -- queries -----------------------------------------------------------------------
    def included(self, gid: int) -> bool:
        return self.action[gid] in ("kept", "collapsed")

    def untouched(self, gid: int) -> bool:
        return self.action[gid] == "kept"

    def group_tokens(self, gid: int) -> int:
        """Tokens the group contributes now (its replacement's when collapsed)."""
        act = self.action[gid]
        if act == "kept":
            return self.index.groups[gid].tokens
        if act == "collapsed":
            return self.replacement[gid][1]
        return 0

    # -- changes -----------------------------------------------------------------------
    def _drop_turn(self, gid: int) -> None:
        turn = self.index.groups[gid].turn
        if turn is None:
            return
        left = self._turn_counts[turn] - 1
        if left:
            self._turn_counts[turn] = left
        else:
            del self._turn_counts[turn]

    def _remove_counts(self, gid: int) -> None:
        group = self.index.groups[gid]
        if self.action[gid] == "collapsed":
            self._tokens -= self.replacement[gid][1]
            self._messages -= len(self.replacement[gid][0])
        else:
            self._tokens -= group.tokens
            self._messages -= group.message_count
            if group.kind is GroupKind.TOOL_CALL:
                self._tool_groups -= 1
        if not group.is_system:
            self._groups -= 1
        self._drop_turn(gid)

    def locked(self, gid: int) -> bool:
        """True when the run's guards forbid dropping or changing the group."""
        return gid in self.locks.locked

    def exclude(self, gid: int, strategy: str, reason: str, *, action: str = "excluded") -> bool:
        """Exclude an included group (O(1)); False (nothing done) when it is locked."""
        if not self.included(gid):
            raise ConfigError(f"group {gid} is already {self.action[gid]}")
        if gid in self.locks.locked:
            return False
        self._remove_counts(gid)
        self.clamped.discard(gid)
        self.action[gid] = action
        self.by[gid] = strategy
        self.why[gid] = reason
        self.log.append(gid)
        return True

    def restore(self, gid: int, strategy: str, reason: str) -> None:
        """Put an excluded group back, verbatim (O(1)). Summarized groups cannot come back."""
        if self.action[gid] != "excluded":
            raise ConfigError(f"group {gid} is {self.action[gid]}, not excluded")
        group = self.index.groups[gid]
        self._tokens += group.tokens
        self._messages += group.message_count
        if group.kind is GroupKind.TOOL_CALL:
            self._tool_groups += 1
        if not group.is_system:
            self._groups += 1
        if group.turn is not None:
            self._turn_counts[group.turn] = self._turn_counts.get(group.turn, 0) + 1
        self.replacement.pop(gid, None)
        self.action[gid] = "kept"
        self.by[gid] = strategy
        self.why[gid] = reason
        self.log.append(gid)

    def collapse(self, gid: int, message: Message, tokens: int, strategy: str, reason: str) -> bool:
        """Replace an untouched (or clamped) group by one message of ``tokens`` tokens
        (O(1)); False (nothing done) when the group is locked or must stay verbatim."""
        return self._replace(gid, (message,), tokens, strategy, reason)

    def clamp(
        self, gid: int, messages: tuple[Message, ...], tokens: int, strategy: str, reason: str
    ) -> bool:
        """Replace an untouched group's messages one for one by shortened copies (the same
        calls and results, cut content): the group keeps its structure, so it can still be
        collapsed later. False when the group is locked or must stay verbatim."""
        if len(messages) != self.index.groups[gid].message_count:
            raise ConfigError(f"group {gid}: a clamp replaces its messages one for one")
        if not self.untouched(gid):
            raise ConfigError(f"group {gid} is {self.action[gid]}, not kept")
        if not self._replace(gid, messages, tokens, strategy, reason):
            return False
        self.clamped.add(gid)
        return True

    def _replace(
        self, gid: int, messages: tuple[Message, ...], tokens: int, strategy: str, reason: str
    ) -> bool:
        if not (self.untouched(gid) or gid in self.clamped):
            raise ConfigError(f"group {gid} is {self.action[gid]}, not kept")
        if gid in self.locks.locked or gid in self.locks.verbatim:
            return False
        group = self.index.groups[gid]
        if gid in self.clamped:
            old_messages, old_tokens = self.replacement[gid]
            self._tokens += tokens - old_tokens
            self._messages += len(messages) - len(old_messages)
            self.clamped.discard(gid)
        else:
            self._tokens += tokens - group.tokens
            self._messages += len(messages) - group.message_count
            if group.kind is GroupKind.TOOL_CALL:
                self._tool_groups -= 1
        self.action[gid] = "collapsed"
        self.replacement[gid] = (messages, tokens)
        self.by[gid] = strategy
        self.why[gid] = reason
        self.log.append(gid)
        return True

    def insert(self, insertion: Insertion) -> None:
        """Insert new messages (counted as one non-system group in the turn they land in)."""
        self.insertions.append(insertion)
        self._tokens += insertion.tokens
        self._messages += len(insertion.messages)
        if insertion.kind is not GroupKind.SYSTEM:
            self._groups += 1

    # -- output ------------------------------------------------------------------------
    def positioned(self) -> Iterator[tuple[int, Message]]:
        """The projection lazily, each message with the original position it stands at.

        For readers that stop early (the provider repair looks at the first turn only);
        :meth:`project` builds the whole list about five times faster.
        """
        ix = self.index
        at: dict[int, list[Message]] = {}
        for ins in self.insertions:
            at.setdefault(ins.position, []).extend(ins.messages)
        for i, m in enumerate(ix.messages):
            yield from ((i, extra) for extra in at.get(i, ()))
            g = ix.group_of[i]
            act = self.action[g]
            if act == "kept":
                yield i, m
            elif act == "collapsed" and ix.groups[g].first == i:
                yield from ((i, r) for r in self.replacement[g][0])
        yield from ((ix.total_messages, extra) for extra in at.get(ix.total_messages, ()))

    def project(self) -> list[Message]:
        """The included messages in order, with replacements and insertions in place."""
        ix = self.index
        at: dict[int, list[Message]] = {}
        for ins in self.insertions:
            at.setdefault(ins.position, []).extend(ins.messages)
        out: list[Message] = []
        action = self.action
        group_of = ix.group_of
        groups = ix.groups
        for i, m in enumerate(ix.messages):
            if at:
                extra = at.get(i)
                if extra:
                    out.extend(extra)
            g = group_of[i]
            act = action[g]
            if act == "kept":
                out.append(m)
            elif act == "collapsed" and groups[g].first == i:
                out.extend(self.replacement[g][0])
        tail = at.get(ix.total_messages)
        if tail:
            out.extend(tail)
        return out


def newest_non_system(plan: Plan, count: int) -> set[int]:
    """Ids of the newest ``count`` included non-system groups."""
    out: set[int] = set()
    if count <= 0:
        return out
    for g in reversed(plan.index.groups):
        if g.is_system or not plan.included(g.id):
            continue
        out.add(g.id)
        if len(out) >= count:
            break
    return out
