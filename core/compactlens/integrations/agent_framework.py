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
marks, which at 10,000 turns costs more than the rest of an idle call. The strategy
keeps, for the newest few lists it was handed (by their first message), the messages it
saw, their ``additional_properties`` dicts and the exclusion mark each held. On the next
call the list must start with the messages seen (object identity, one C-speed list
comparison); the marks are read from the remembered dicts in one C-speed pass and
compared with the remembered ones, and when none changed the included messages are the
remembered ones plus the new included ones. A call that only marked messages (a
truncation) notes its own marks in the view, so a loop that stays over budget reads only
what was appended too (the marks are still all compared, in C). *Detected* (a full
pass): a list that does not start with the messages seen (a rewind, an edit, another
conversation, a list our own insertion rebuilt), any mark set or cleared since the last
call (another strategy of a pipeline, MAF's summary reconciliation), a call that
inserted messages (a summary, a collapsed tool result).
*Assumed*: a message's ``additional_properties`` is changed in place, not replaced by a
new dict (MAF's own code only changes it in place).
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from itertools import compress, repeat
from operator import attrgetter, not_
from typing import Any

from compactlens.integrations.compactor import Compactor
from compactlens.integrations.loop import Loop, Loops

FORMAT = "agent-framework"
EXCLUDED = "_excluded"
EXCLUDE_REASON = "_exclude_reason"
REASON = "compactlens"
_PROPERTIES = attrgetter("additional_properties")


class _View:
    """One message list as the strategy last saw it (see the module docstring)."""

    __slots__ = ("included", "marks", "messages", "positions", "properties")

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.properties: list[dict[str, Any]] = []
        self.marks: list[Any] = []
        self.included: list[Any] = []
        self.positions: list[int] = []  # where each included message is in ``messages``

    def update(self, messages: list[Any]) -> list[Any]:
        """The included messages of ``messages``, reading only what changed. The list
        returned is the view's own: it changes on the next call."""
        n = len(self.messages)
        new = messages[n:]
        # The seen messages and the new ones must be ``messages``, object for object:
        # whole lists compare in C without touching the items (a slice would).
        self.messages += new
        if self.messages != messages:
            n, new = 0, list(messages)  # not the list seen: every message is new
            self.messages, self.properties, self.marks, self.included = new, [], [], []
            self.positions = []
        self.properties += map(_PROPERTIES, new)
        marks = list(map(dict.get, self.properties, repeat(EXCLUDED)))
        if marks[:n] == self.marks:
            keep = list(map(not_, marks[n:]))
            self.included += compress(new, keep)
            self.positions += compress(range(n, len(marks)), keep)
        else:  # a mark changed since the last call
            keep = list(map(not_, marks))
            self.included = list(compress(self.messages, keep))
            self.positions = list(compress(range(len(marks)), keep))
        self.marks = marks
        return self.included

    def excluded(self, included: list[Any], dropped: list[bool]) -> bool:
        """Note the marks the strategy itself just set: the messages of ``included`` (the
        list :meth:`update` returned, unchanged since) where ``dropped`` is true are now
        excluded, and the list of messages is the same. False when ``included`` is no
        longer the view's (another call read the list since)."""
        if included is not self.included or len(dropped) != len(included):
            return False
        marks = self.marks
        for at in compress(self.positions, dropped):
            marks[at] = True  # what the mark reads as on the next call
        keep = list(map(not_, dropped))
        self.included = list(compress(included, keep))
        self.positions = list(compress(self.positions, keep))
        return True


class _Views:
    """The views of the newest ``size`` message lists, by their first message."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._views: OrderedDict[int, tuple[Any, _View]] = OrderedDict()
        self._lock = threading.Lock()

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
                view = _View()
                self._views[id(first)] = (first, view)
                while len(self._views) > self._size:
                    self._views.popitem(last=False)
            return view.update(messages)

    def excluded(self, first: Any, included: list[Any], dropped: list[bool]) -> bool:
        """:meth:`_View.excluded` on the view of the list that starts with ``first``."""
        with self._lock:
            held = self._views.get(id(first))
            return held is not None and held[0] is first and held[1].excluded(included, dropped)

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
            changed, dropped = await asyncio.to_thread(self._compact, messages, included, loop)
        except BaseException:
            self._views.forget(first)
            raise
        # Marks only (no message inserted): the view follows them, so the next call reads
        # only what was appended; otherwise it reads the whole list again.
        if changed and (dropped is None or not self._views.excluded(first, included, dropped)):
            self._views.forget(first)
        return changed

    def _compact(
        self, messages: list[Any], included: list[Any], loop: Loop
    ) -> tuple[bool, list[bool] | None]:
        """Whether the compaction changed ``messages``, with which of ``included`` it
        marked excluded when it only marked (None when it inserted messages)."""
        with loop.memory.lock:
            items = loop.conversions.items(included)
            result = self.compactor.run(items, FORMAT, memory=loop.memory)
            if not result.changed:
                return False, None
            made = loop.conversions.objects(result.messages)
        source = {id(item): m for item, m in zip(items, included, strict=True)}
        kept = {id(item) for item in result.messages}
        dropped = [id(item) not in kept for item in items]
        for message in compress(included, dropped):
            message.additional_properties[EXCLUDED] = True
            message.additional_properties[EXCLUDE_REASON] = REASON
        inserted = any(id(item) not in source for item in result.messages)
        if inserted:
            _insert(messages, included, result.messages, made, source)
        self._loops.follow(loop, made)
        return True, None if inserted else dropped


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
