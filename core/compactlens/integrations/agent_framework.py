"""Microsoft Agent Framework: a compactlens strategy where MAF expects a compaction strategy.

MAF strategies are async callables over the shared ``list[Message]`` that *mark* dropped
messages (``additional_properties["_excluded"]``) instead of deleting them, and return
whether anything changed. :class:`CompactlensStrategy` reads the messages that are still
included through compactlens's ``agent-framework`` format (``Message.to_dict()``), runs
the compactor, marks every message it did not keep as excluded (reason
``"compactlens"``) and inserts the messages it created (summaries, collapsed tool
results) in place. Use it as ``Agent(..., compaction_strategy=...)`` or
``CompactionProvider(before_strategy=...)``. ``agent_framework`` is imported only when
the strategy runs.

**What it remembers.** Finding the included messages is a look at every message's
marks, which at 10,000 turns costs more than the rest of an over-budget call. The
strategy keeps, for the newest few lists it was handed (by their first message), the
messages it saw, their ``additional_properties`` dicts and the exclusion mark each held.
The first time it sees a message it replaces the message's ``additional_properties`` (a
plain dict) by a :class:`_Properties` with the same contents, which counts every change
of the exclusion mark's truth (set or cleared, through any ``dict`` method) on the
strategy's :class:`_Watch`. On the next call the list must start with the messages seen
(object identity, one C-speed list comparison) and the count must be the one the view
last read: then only the new messages' marks are read. A call that only marked messages
(a truncation) notes its own marks in the view and the count they added, so a loop that
stays over budget reads only what was appended. *Detected* (all marks read again): a
list that does not start with the messages seen (a rewind, an edit, another
conversation, a list our own insertion rebuilt), any mark set or cleared since the last
call (another strategy of a pipeline, MAF's summary reconciliation), a call that
inserted messages (a summary, a collapsed tool result), an ``additional_properties`` of
another ``dict`` subclass (not replaced, so read on every call). *Assumed*: a message's
``additional_properties`` is changed in place, not replaced by a new dict (MAF's own
code only changes it in place), and not through ``dict``'s methods called directly
(``dict.__setitem__(properties, ...)``), which the subclass cannot see.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from copy import deepcopy
from itertools import compress, repeat
from operator import attrgetter, not_
from typing import Any, SupportsIndex

from compactlens.integrations.compactor import Compactor
from compactlens.integrations.loop import Loop, Loops
from compactlens.model.gc_pause import gc_paused

FORMAT = "agent-framework"
EXCLUDED = "_excluded"
EXCLUDE_REASON = "_exclude_reason"
REASON = "compactlens"
_PROPERTIES = attrgetter("additional_properties")
_WATCHES = attrgetter("watches")


class _Watch:
    """Counts the exclusion marks that turned (set or cleared) on the messages one
    strategy watches; each view remembers the count it has read up to."""

    __slots__ = ("__weakref__", "changes", "refs")

    def __init__(self) -> None:
        self.changes = 0
        #: What a watched dict holds (one tuple shared by every dict this watch wraps).
        self.refs: tuple[weakref.ref[_Watch], ...] = (weakref.ref(self),)


class _Properties(dict[str, Any]):
    """A message's ``additional_properties`` that counts a change of its exclusion mark's
    truth on the watches that saw it (the watches are weak: a dropped strategy's are
    skipped). Its copies (``copy``, ``deepcopy``, pickle) are plain dicts."""

    __slots__ = ("watches",)

    watches: tuple[weakref.ref[_Watch], ...]

    def _turned(self, was_excluded: bool) -> None:
        if was_excluded != bool(dict.get(self, EXCLUDED)):
            # (None yet in one made by ``fromkeys``, which sets its items one by one.)
            for ref in getattr(self, "watches", ()):
                watch = ref()
                if watch is not None:
                    watch.changes += 1

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        copied: dict[str, Any] = {}
        memo[id(self)] = copied
        for key, value in self.items():
            copied[deepcopy(key, memo)] = deepcopy(value, memo)
        return copied

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return dict, (dict(self),)


def _watching(name: str) -> Callable[..., Any]:
    """``dict``'s method ``name`` that tells the watches when the mark turned."""
    method = getattr(dict, name)

    def changing(self: _Properties, *args: Any, **kwargs: Any) -> Any:
        was_excluded = bool(dict.get(self, EXCLUDED))
        try:
            return method(self, *args, **kwargs)
        finally:
            self._turned(was_excluded)

    changing.__name__ = changing.__qualname__ = name
    return changing


for _name in ("__setitem__", "__delitem__", "__ior__", "clear", "pop", "popitem", "setdefault"):
    setattr(_Properties, _name, _watching(_name))
_Properties.update = _watching("update")  # type: ignore[method-assign]


def _watched(messages: list[Any], watch: _Watch) -> tuple[list[dict[str, Any]], bool]:
    """The ``additional_properties`` of ``messages``, each made a :class:`_Properties` that
    ``watch`` sees (a plain dict is replaced by one), and whether every one is watched
    (a dict of another subclass is left as it is)."""
    properties = list(map(_PROPERTIES, messages))
    if set(map(type, properties)) <= {_Properties} and set(map(_WATCHES, properties)) <= {
        watch.refs
    }:
        return properties, True  # seen before (a full read again): no Python loop
    out: list[dict[str, Any]] = []
    every = True
    for message, properties_of in zip(messages, properties, strict=True):
        kind = type(properties_of)
        if kind is dict:
            made = _Properties(properties_of)
            made.watches = watch.refs
            message.additional_properties = properties_of = made
        elif kind is _Properties:
            refs = properties_of.watches
            if refs is not watch.refs and not any(r() is watch for r in refs):
                alive = tuple(r for r in refs if r() is not None)
                properties_of.watches = alive + watch.refs if alive else watch.refs
        else:
            every = False
        out.append(properties_of)
    return out, every


class _View:
    """One message list as the strategy last saw it (see the module docstring)."""

    __slots__ = (
        "included",
        "marks",
        "messages",
        "positions",
        "properties",
        "seen",
        "watch",
        "watched",
    )

    def __init__(self, watch: _Watch | None = None) -> None:
        self.watch = watch if watch is not None else _Watch()
        self.seen = -1  # the watch's count when the marks were last read
        self.watched = True  # every dict of ``properties`` is watched
        self.messages: list[Any] = []
        self.properties: list[dict[str, Any]] = []
        self.marks: list[Any] = []
        self.included: list[Any] = []
        self.positions: list[int] = []  # where each included message is in ``messages``

    def update(self, messages: list[Any]) -> list[Any]:
        """The included messages of ``messages``, reading only what changed. The list
        returned is the view's own: it changes on the next call."""
        changes = self.watch.changes  # read first: a mark turned after this shows next time
        n = len(self.messages)
        new = messages[n:]
        # The seen messages and the new ones must be ``messages``, object for object:
        # whole lists compare in C without touching the items (a slice would).
        self.messages += new
        if self.messages != messages:
            n, new = 0, list(messages)  # not the list seen: every message is new
            self.messages, self.properties, self.marks, self.included = new, [], [], []
            self.positions, self.watched = [], True
        with gc_paused():  # a first call wraps a dict per message: no cycles among them
            properties, every = _watched(new, self.watch)
        self.properties += properties
        if n and changes == self.seen and self.watched and every:
            # No mark turned since the last call: only the new messages' marks are read.
            marks = list(map(dict.get, properties, repeat(EXCLUDED)))
            keep = list(map(not_, marks))
            self.included += compress(new, keep)
            self.positions += compress(range(n, n + len(marks)), keep)
            self.marks += marks
        else:  # a first read, a mark turned, or a dict that cannot be watched
            self.marks = list(map(dict.get, self.properties, repeat(EXCLUDED)))
            keep = list(map(not_, self.marks))
            self.included = list(compress(self.messages, keep))
            self.positions = list(compress(range(len(keep)), keep))
        self.watched = self.watched and every
        self.seen = changes
        return self.included

    def excluded(self, included: list[Any], dropped: list[bool], turned: tuple[int, int]) -> bool:
        """Note the marks the strategy itself just set: the messages of ``included`` (the
        list :meth:`update` returned, unchanged since) where ``dropped`` is true are now
        excluded, and the list of messages is the same; ``turned`` is the watch's count
        before and after they were set (when only they moved it, the next call still
        reads only what was appended). False when ``included`` is no longer the view's
        (another call read the list since)."""
        if included is not self.included or len(dropped) != len(included):
            return False
        marks = self.marks
        for at in compress(self.positions, dropped):
            marks[at] = True  # what the mark reads as on the next call
        keep = list(map(not_, dropped))
        self.included = list(compress(included, keep))
        self.positions = list(compress(self.positions, keep))
        before, after = turned
        if self.seen == before and after - before == sum(dropped):
            self.seen = after
        return True


class _Views:
    """The views of the newest ``size`` message lists, by their first message."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._views: OrderedDict[int, tuple[Any, _View]] = OrderedDict()
        self._lock = threading.Lock()
        self.watch = _Watch()  # one for every view: a message may be in several lists

    def included(self, messages: list[Any]) -> list[Any]:
        if not messages:
            return []
        first = messages[0]
        with self._lock:
            held = self._views.get(id(first))
            if held is not None and held[0] is first:
                view = held[1]
                self._views.move_to_end(id(first))
            else:
                view = _View(self.watch)
                self._views[id(first)] = (first, view)
                while len(self._views) > self._size:
                    self._views.popitem(last=False)
            return view.update(messages)

    def excluded(
        self, first: Any, included: list[Any], dropped: list[bool], turned: tuple[int, int]
    ) -> bool:
        """:meth:`_View.excluded` on the view of the list that starts with ``first``."""
        with self._lock:
            held = self._views.get(id(first))
            return (
                held is not None
                and held[0] is first
                and held[1].excluded(included, dropped, turned)
            )

    def forget(self, first: Any) -> None:
        """Drop the view of the list that started with ``first`` (the strategy changed
        its marks or contents)."""
        with self._lock:
            held = self._views.get(id(first))
            if held is not None and held[0] is first:
                del self._views[id(first)]


class CompactlensStrategy:
    """A MAF ``CompactionStrategy``; see the module docstring."""

    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor.recording("agent-framework", FORMAT)
        # Each message is converted once; a call on a history that only grew reads only
        # what was appended (see compactlens.integrations.loop).
        self._loops = Loops(_to_items, _from_items)
        self._views = _Views()

    async def __call__(self, messages: list[Any]) -> bool:
        first = messages[0] if messages else None
        included = self._views.included(messages)
        loop = self._loops.of(included)
        # In a worker thread: a summarizer's model call must not block the event loop.
        try:
            changed, dropped, turned = await asyncio.to_thread(
                self._compact, messages, included, loop
            )
        except BaseException:
            self._views.forget(first)
            raise
        # Marks only (no message inserted): the view follows them, so the next call reads
        # only what was appended; otherwise it reads the whole list again.
        if changed and (
            dropped is None or not self._views.excluded(first, included, dropped, turned)
        ):
            self._views.forget(first)
        return changed

    def _compact(
        self, messages: list[Any], included: list[Any], loop: Loop
    ) -> tuple[bool, list[bool] | None, tuple[int, int]]:
        """Whether the compaction changed ``messages``, with which of ``included`` it
        marked excluded when it only marked (None when it inserted messages) and the
        watch's count before and after it marked them."""
        watch = self._views.watch
        with loop.memory.lock:
            items = loop.conversions.view(included)
            result = self.compactor.run(items, FORMAT, memory=loop.memory)
            if not result.changed:
                return False, None, (0, 0)
            made = loop.conversions.objects(result.messages)
        source = {id(item): m for item, m in zip(items, included, strict=True)}
        kept = {id(item) for item in result.messages}
        dropped = [id(item) not in kept for item in items]
        before = watch.changes
        for message in compress(included, dropped):
            message.additional_properties[EXCLUDED] = True
            message.additional_properties[EXCLUDE_REASON] = REASON
        turned = (before, watch.changes)
        inserted = any(id(item) not in source for item in result.messages)
        if inserted:
            _insert(messages, included, result.messages, made, source)
        self._loops.follow(loop, made)
        return True, None if inserted else dropped, turned


def _insert(
    messages: list[Any],
    included: list[Any],
    items: list[Any],
    made: list[Any],
    source: dict[int, Any],
) -> None:
    """Put the messages a compaction created (``made`` for the new ``items``) in place:
    each right after the kept message before it (before the first included one when none
    is), in one pass over the list, not one search per message."""
    at_of = {id(m): i for i, m in enumerate(messages)}
    inserted: dict[int, list[Any]] = {}
    at = at_of[id(included[0])] if included else len(messages)
    for item, message in zip(items, made, strict=True):
        original = source.get(id(item))
        if original is not None:
            at = at_of[id(original)] + 1
        else:
            inserted.setdefault(at, []).append(message)
    rebuilt: list[Any] = []
    for i, message in enumerate(messages):
        rebuilt.extend(inserted.pop(i, ()))
        rebuilt.append(message)
    rebuilt.extend(inserted.pop(len(messages), ()))
    messages[:] = rebuilt


def _to_items(messages: list[Any]) -> list[Any]:
    return [m.to_dict() for m in messages]


def _from_items(items: list[Any]) -> list[Any]:
    from agent_framework import Message

    return [Message.from_dict(dict(item)) for item in items]


__all__ = ["CompactlensStrategy"]
