"""What an integration remembers between the model calls of one agent loop.

An agent calls its integration before every model call on a history that grew by a few
messages. :class:`LoopMemory` keeps, from the last call, the wire items, the messages read
from them with their token counts and sizes, running totals split at the user turns, and
the summaries the last run made. The next call recognises the unchanged prefix (object
identity, else equality, in one C-speed list comparison, never a re-serialisation) and
reads and counts only from the last user turn of that prefix on. Its own copy of the
items is then extended in place by what was appended (:func:`grow`), not copied again:
a copy of a list touches every item, which at 10,000 turns costs more than the rest of
a compacting call. When the strategy's
first trigger cannot fire on the running totals the call answers "unchanged" without
indexing or planning; when it can, the engine runs on the remembered messages (only the
grouping pass and the plan see the whole history) and a range already summarised is not
summarised again. The messages are kept only while calls need them: after a call answered
from the running totals (an idle loop) the memory keeps the items, totals and turns, not
the messages, and the next call that runs the engine reads the whole history again once.
A rewind past every known turn, an edit, a restore, another format or tokenizer is a
from-scratch run, which re-seeds the memory; every answer is the one a
from-scratch run gives. :class:`Conversions` converts framework objects to wire items once
and converts back only the items a compaction made; :class:`Loops` keeps both for each
conversation an integration serves.
"""

from __future__ import annotations

import sys
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactlens.engine.index import Grouping, MessageIndex
from compactlens.engine.strategies.base import Strategy
from compactlens.engine.strategies.clamp import ClampStrategy
from compactlens.engine.strategies.pipeline import PipelineStrategy
from compactlens.engine.strategies.selective import SelectiveToolCallCompactionStrategy
from compactlens.engine.strategies.summarization import SummarizationStrategy
from compactlens.engine.strategies.tool_results import ToolResultCompactionStrategy
from compactlens.engine.strategies.truncation import TruncationStrategy
from compactlens.engine.triggers import Trigger
from compactlens.formats import get_format
from compactlens.formats.caller import CallerMessages
from compactlens.model.errors import CompactlensError
from compactlens.model.gc_pause import gc_paused
from compactlens.model.messages import Message
from compactlens.model.tokens import CharEstimator, Tokenizer, count_messages, message_sizes
from compactlens.summarizers.base import SummaryResponse


def common_prefix(before: list[Any], now: Sequence[Any]) -> int:
    """How many leading items of ``now`` are the items of ``before`` (the same objects, or
    equal ones). One list comparison (identity first, in C) when nothing before changed."""
    n = min(len(before), len(now))
    if n == 0:
        return 0
    # Compare without copying ``before`` (a slice touches every item's reference count,
    # which costs more than comparing identical items on a long history).
    head = now if len(now) == n and isinstance(now, list) else now[:n]
    if (head if isinstance(head, list) else list(head)) == (
        before if len(before) == n else before[:n]
    ):
        return n
    i = 0
    while i < n and (before[i] is now[i] or before[i] == now[i]):
        i += 1
    return i


def grow(before: list[Any], now: Sequence[Any]) -> bool:
    """Whether ``now`` is ``before`` followed by more items, with the same first and last
    ``before`` items (the items between the same objects or equal ones); then ``before``
    is extended in place with the new items. This costs the new items only: whole lists
    compare in C, identity first, without touching the items, where a slice of ``now``
    would touch every item's reference count. ``before`` is left as it was otherwise (a
    list only ever grown by this or replaced stays a valid snapshot up to any length it
    had)."""
    n = len(before)
    if not n or type(now) is not list or len(now) < n:
        return False
    if before[0] is not now[0] or before[n - 1] is not now[n - 1]:
        return False  # a rewind, an edit or a copied history: not worth the comparison
    before += now[n:]
    if before == now:
        return True
    del before[n:]
    return False


class _Unknown(CompactlensError):
    """A trigger asked for a metric the running totals do not keep."""


class Totals:
    """The metrics of an untouched plan that the running totals know."""

    __slots__ = ("messages", "tokens")

    def __init__(self, tokens: int, messages: int) -> None:
        self.tokens = tokens
        self.messages = messages

    @property
    def groups(self) -> int:
        raise _Unknown

    @property
    def turns(self) -> int:
        raise _Unknown

    @property
    def tool_call_groups(self) -> int:
        raise _Unknown


_PLAIN_TRIGGER = (ClampStrategy, ToolResultCompactionStrategy, SelectiveToolCallCompactionStrategy)


def _leaf_trigger(strategy: Strategy, tokenizer_given: bool) -> Trigger | None:
    """The trigger a strategy checks first on an untouched plan, when that alone decides
    whether it acts (None: it may act whatever the totals)."""
    if isinstance(strategy, TruncationStrategy):
        if strategy.max_n is not None and strategy.compact_to is not None:
            return Trigger("exceed", "tokens" if tokenizer_given else "messages", strategy.max_n)
        return strategy.trigger
    if isinstance(strategy, SummarizationStrategy):
        return strategy.trigger if strategy.target_count is None else None
    if isinstance(strategy, _PLAIN_TRIGGER):
        return strategy.trigger
    return None


def quiet(strategy: Strategy, totals: Totals, tokenizer_given: bool) -> tuple[bool, str | None]:
    """Whether ``strategy`` certainly leaves a history with these totals unchanged, and the
    first trigger its run would log (what :class:`CompactorRun` reports as ``trigger``)."""
    first: str | None = None
    stack: list[Strategy] = [strategy]
    while stack:
        s = stack.pop()
        if isinstance(s, PipelineStrategy):
            stack.extend(reversed(s.strategies))
            continue
        trigger = _leaf_trigger(s, tokenizer_given)
        if trigger is None:
            return False, None
        try:
            if trigger(totals):
                return False, None
        except _Unknown:
            return False, None
        if first is None:
            first = trigger.describe()
    return True, first


class LoopMemory:
    """One agent loop's memory (one history); see the module docstring. Thread-safe.

    ``summaries`` are the last run's summarizer answers, offered to the next run so a
    range already summarised costs no new model call. Drop the object to release it.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.summaries: Mapping[str, SummaryResponse] = {}
        self._clear()

    def _clear(self) -> None:
        self._items: list[Any] = []
        self._messages: list[Message] = []
        self._counts: list[int] = []
        self._sizes: list[int] = []
        # Whether the messages above are kept: a call answered from the totals drops
        # them (an idle loop would otherwise hold a second copy of its history).
        self._kept = True
        self._wanted = True  # the last call read them (or seeded them)
        self._key: tuple[str, Tokenizer | None] | None = None
        self._starts: list[int] = []
        self._tokens_before: list[int] = []
        self._messages_before: list[int] = []
        #: The first message the last :meth:`totals` read again (those before it are the
        #: very objects of the call before).
        self.reread_from = 0
        #: Where the next compacting call may start reading (see
        #: :mod:`compactlens.integrations.window`), set by the compactor.
        self.window: Any = None

    def forget(self) -> None:
        """Drop everything (the next call is a from-scratch run)."""
        self._clear()
        self.summaries = {}

    def totals(
        self, items: Sequence[Any], format: str, counter: Tokenizer | None
    ) -> tuple[int, int] | None:
        """The token and message totals of ``items`` read from the last known user turn of
        the unchanged prefix on, or None when the memory cannot tell (first call, a rewind
        past every known turn, another format or tokenizer, an unreadable item)."""
        # Estimators compare by value (a profile makes a new one for every run).
        if self._key != (format, counter) or not self._starts:
            return None
        known = len(self._items)
        grown = grow(self._items, items)  # the usual call: only what was appended is new
        k = known if grown else common_prefix(self._items, items)
        i = bisect_right(self._starts, k) - 1
        start = self._starts[i] if i >= 0 else 0
        try:
            messages = None if i < 0 else get_format(format).to_messages(items[start:], "<history>")
        except CompactlensError:
            messages = None
        if messages is None:
            del self._items[known:]  # as it was: the caller seeds the memory again
            return None
        counts = count_messages(messages, counter or CharEstimator())
        tokens, count = self._tokens_before[i], self._messages_before[i]
        if not self._split(items, start, messages, counts, i, tokens, count):
            self._clear()
            return None
        if not grown:
            self._items = list(items)
        if not self._wanted:  # the last call did not read them: drop them until needed
            self._kept = False
            self._messages, self._counts, self._sizes = [], [], []
            self.window = None  # the window rests on the messages
        self._wanted = False
        if self._kept:
            self._messages[count:] = messages
            self._counts[count:] = counts
            del self._sizes[count:]
        self.reread_from = count
        return tokens + sum(counts), count + len(messages)

    def history(self) -> Callable[[], tuple[Any, ...]]:
        """The items the last :meth:`totals` read, built when called: the memory's own
        list of them only grows in place or is replaced, so its length now is enough."""
        items, n = self._items, len(self._items)
        return lambda: tuple(items[:n])

    @property
    def messages(self) -> list[Message]:
        """The messages read from the last call's items (do not change them); asking for
        them keeps them for the next call."""
        self._wanted = True
        return self._messages

    @property
    def counts(self) -> list[int]:
        """Their token counts."""
        return self._counts

    def read(
        self, items: Sequence[Any], format: str, counter: Tokenizer | None, grouping: Grouping
    ) -> tuple[CallerMessages, MessageIndex]:
        """``items`` read and indexed from what :meth:`totals` just kept for them (each
        message read and counted once in the loop; only the grouping pass sees them all;
        after an idle stretch, the whole history is read again once)."""
        self._wanted = True
        if not self._kept:
            read = get_format(format).to_messages(items, "<history>")
            self._messages = list(read)
            self._counts = count_messages(read, counter or CharEstimator())
            self._sizes = []
            self._kept = True
        messages = self._messages
        if len(self._sizes) < len(messages):
            self._sizes.extend(message_sizes(m)[1] for m in messages[len(self._sizes) :])
        index = MessageIndex.from_counts(
            messages, self._counts, self._sizes, counter or CharEstimator(), grouping=grouping
        )
        caller = CallerMessages(index.messages, tuple(items), "wire", get_format(format))
        return caller, index

    def seed(
        self,
        items: Sequence[Any],
        format: str,
        counter: Tokenizer | None,
        messages: Sequence[Message],
        counts: Sequence[int],
        *,
        keep: bool = True,
    ) -> None:
        """Remember ``items`` as read by a full run (``messages`` with their ``counts``).
        Without ``keep`` only the items, totals and turns are kept, as after an idle call
        (the run found nothing to do, so the next call probably does not read them; a
        call that does reads the whole history again once)."""
        self._clear()
        if self._split(items, 0, messages, counts, 0, 0, 0):
            self._items = list(items)
            self._key = (format, counter)
            if keep:
                self._messages = list(messages)
                self._counts = list(counts)
            self._kept = self._wanted = keep
        else:
            self._clear()

    def _split(
        self,
        items: Sequence[Any],
        start: int,
        messages: Sequence[Message],
        counts: Sequence[int],
        keep: int,
        tokens: int,
        count: int,
    ) -> bool:
        """Record the user turns of ``messages`` (read from ``items[start:]``, after
        ``tokens`` tokens in ``count`` messages) after the first ``keep`` known ones; False
        when a message cannot be traced to its item."""
        position = {id(item): start + j for j, item in enumerate(items[start:])}
        starts: list[int] = []
        before_t: list[int] = []
        before_m: list[int] = []
        last = -1
        traced = False  # a message traced to its own item has been seen
        for m, c in zip(messages, counts, strict=True):
            wire = m.wire[0] if isinstance(m.wire, tuple) and m.wire else m.wire
            at = position.get(id(wire)) if wire is not None else None
            if at is None and not traced:
                # Read from a part of the first item (a pydantic-ai request's system and
                # user parts): the messages before any traced one come from items[start:]
                # before the first traced item, so the re-read may open at ``start``.
                at = start
            if at is None or at < last:
                return False
            traced = traced or (wire is not None and id(wire) in position)
            if at != last and m.role == "user":
                starts.append(at)
                before_t.append(tokens)
                before_m.append(count)
            last = at
            tokens += c
            count += 1
        if messages and (not starts or starts[0] != start) and start != 0:
            return False  # the re-read no longer opens with the user turn it started at
        del self._starts[keep:], self._tokens_before[keep:], self._messages_before[keep:]
        self._starts.extend(starts)
        self._tokens_before.extend(before_t)
        self._messages_before.extend(before_m)
        return True


def shared(value: Any, *, nulls: bool = True) -> Any:
    """``value`` (decoded JSON) with its keys and short strings interned. A store or a
    converter builds each item on its own, so every item would otherwise hold its own
    copies of ``"type"``, ``"role"``, ``"part_kind"``... (most of a short item's memory).
    Without ``nulls``, keys whose value is ``null`` are left out (for a format whose
    reader treats a null field as a missing one)."""
    kind = type(value)
    if kind is dict:
        return _shared_dict(value, nulls)
    if kind is list:
        return _shared_list(value, nulls)
    if kind is str and len(value) <= _SHORT:
        return sys.intern(value)
    return value


_SHORT = 24  # the longest string :func:`shared` interns


def _shared_dict(d: dict[Any, Any], nulls: bool) -> dict[Any, Any]:
    # Scalars are handled in the loop (one function call per container, not per value:
    # the first call of a loop reads every item of a long history through here).
    intern, short = sys.intern, _SHORT
    out: dict[Any, Any] = {}
    for k, v in d.items():
        kind = type(v)
        if kind is str:
            if len(v) <= short:
                v = intern(v)
        elif kind is dict:
            v = _shared_dict(v, nulls)
        elif kind is list:
            v = _shared_list(v, nulls)
        elif v is None and not nulls:
            continue
        out[intern(k) if type(k) is str else k] = v
    return out


def _shared_list(items: list[Any], nulls: bool) -> list[Any]:
    out: list[Any] = []
    add = out.append
    intern, short = sys.intern, _SHORT
    for v in items:
        kind = type(v)
        if kind is str:
            if len(v) <= short:
                v = intern(v)
        elif kind is dict:
            v = _shared_dict(v, nulls)
        elif kind is list:
            v = _shared_list(v, nulls)
        add(v)
    return out


class Conversions:
    """Framework objects to wire items, each converted once; back only for new items.

    ``to_items`` converts a list of objects, ``from_items`` a list of items. The unchanged
    prefix of the objects is found as :func:`common_prefix` finds it: an object changed in
    place keeps its old conversion (frameworks hand over new objects for new content).
    """

    def __init__(
        self,
        to_items: Callable[[list[Any]], list[Any]],
        from_items: Callable[[list[Any]], list[Any]],
    ) -> None:
        self._to = to_items
        self._from = from_items
        self._objects: list[Any] = []  # the last history handed over
        self._items: list[Any] = []  # its items
        # Every object converted either way, by identity: the last history's and the
        # last compaction's (a framework may keep either as its next history). Each
        # dict holds what the other's keys are the ids of, so no id is reused while
        # its entry lives (an object is known when its item maps back to it).
        self._by_object: dict[int, Any] = {}  # id(object) -> its item
        self._by_item: dict[int, Any] = {}  # id(item) -> its object

    def items(self, objects: Sequence[Any]) -> list[Any]:
        """The wire items of ``objects``, converting only objects not seen before."""
        return list(self.view(objects))

    def view(self, objects: Sequence[Any]) -> list[Any]:
        """:meth:`items` as the conversions' own list, not a copy (which would cost the
        whole history): a later call on a history that only grew extends it in place, any
        other call replaces it. Do not change it; read it before the next call."""
        k = len(self._objects)
        grown = grow(self._objects, objects)
        if grown:  # the usual call: only what was appended is new
            tail = self._objects[k:]
        else:
            k = common_prefix(self._objects, objects)
            tail = list(objects[k:])
        by_object, by_item = self._by_object, self._by_item
        missing = [o for o in tail if by_item.get(id(by_object.get(id(o)))) is not o]
        if missing:
            # A first call converts the whole history: plain dicts, no cycles, so the
            # collector need not walk the heap while they are built.
            with gc_paused():
                made = self._to(missing)
            for obj, item in zip(missing, made, strict=True):
                self._remember(obj, item)
        added = [by_object[id(o)] for o in tail]
        if grown:
            self._items += added
        else:
            self._items = (self._items if k == len(self._items) else self._items[:k]) + added
            self._objects = list(objects)
        if len(by_object) > 2 * len(self._objects) + 64:  # forget what left the history
            self._by_object, self._by_item = {}, {}
            for obj, item in zip(self._objects, self._items, strict=True):
                self._remember(obj, item)
        return self._items

    def objects(self, items: Sequence[Any]) -> list[Any]:
        """Framework objects for ``items``: the caller's own object for an item it came
        from, a conversion (in one batch) for the rest."""
        by_item = self._by_item
        fresh = [item for item in items if id(item) not in by_item]
        made = self._from(fresh) if fresh else []
        for obj, item in zip(made, fresh, strict=True):
            self._remember(obj, item)
        return [by_item[id(item)] for item in items]

    def _remember(self, obj: Any, item: Any) -> None:
        self._by_object[id(obj)] = item
        self._by_item[id(item)] = obj


@dataclass(slots=True)
class Loop:
    """One agent loop's :class:`LoopMemory` and :class:`Conversions`."""

    memory: LoopMemory
    conversions: Conversions


class Loops:
    """The loops one integration serves (a LangChain agent or MAF strategy may serve many
    conversations), by the identity of the history's first message: the newest ``size``
    are kept, an older one is dropped (its next call is a from-scratch run)."""

    def __init__(
        self,
        to_items: Callable[[list[Any]], list[Any]],
        from_items: Callable[[list[Any]], list[Any]],
        size: int = 8,
    ) -> None:
        self._to = to_items
        self._from = from_items
        self._size = size
        self._loops: OrderedDict[int, tuple[Any, Loop]] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, objects: Sequence[Any]) -> Loop:
        """The loop whose history starts with ``objects[0]`` (a new one if none does)."""
        first = objects[0] if objects else None
        with self._lock:
            held = self._loops.get(id(first))
            if held is not None and held[0] is first:
                self._loops.move_to_end(id(first))
                return held[1]
            loop = Loop(LoopMemory(), Conversions(self._to, self._from))
            self._loops[id(first)] = (first, loop)
            while len(self._loops) > self._size:
                self._loops.popitem(last=False)
            return loop

    def follow(self, loop: Loop, objects: Sequence[Any]) -> None:
        """Find ``loop`` by ``objects[0]`` from now on (a compaction changed the first one)."""
        if not objects:
            return
        with self._lock:
            self._loops[id(objects[0])] = (objects[0], loop)
            self._loops.move_to_end(id(objects[0]))
            while len(self._loops) > self._size:
                self._loops.popitem(last=False)


__all__ = [
    "Conversions",
    "Loop",
    "LoopMemory",
    "Loops",
    "Totals",
    "common_prefix",
    "quiet",
    "shared",
]
