"""OpenAI Agents SDK: a ``Session`` that compacts the items it hands to the runner.

:class:`CompactingSession` wraps any session (``SQLiteSession``, a Redis session...).
Writes go to the wrapped session unchanged, so its storage stays the source of truth
(the full history); ``get_items`` returns the compacted view, read through compactlens's
``openai-responses`` format. Unchanged items are the wrapped session's own items, so
assistant messages keep the ``id`` and ``status`` the SDK needs to read them back.
No SDK import is needed: the session protocol is structural.

**What it remembers.** A wrapped session hands out new dicts on every read (SQLite
decodes every row), so reading and comparing the whole history on every call costs more
than the compaction. The session therefore keeps its own copy of the stored items (the
dicts the store handed out, with their keys and short strings interned, shared with the
loop memory, not a second copy) and, on a
``get_items()`` without a limit, reads only the newest ``tail + n`` items
(``get_items(limit=...)``, which the protocol defines as the latest items in order),
where ``n`` is the number of items added through this wrapper since the last read.
The oldest ``tail`` items of that read must equal (by value) the last ``tail`` items of
the copy; when the store holds fewer than ``tail + n`` items, its length must be the
copy's plus ``n`` as well. Then the history is the copy plus the ``n`` newest stored
items (as the store returns them, so a store that rewrites items on the way in is
followed), the copy extended in place (unless another read, which may be compacting
it, is under way). Anything else is a full read, which replaces the copy.

*Detected* (a full read): a write through another handle (another ``SQLiteSession`` on
the same database, another process) that appends, pops or clears, because it changes
the last ``tail`` items or the length of a short store; a failed write through this
wrapper; ``pop_item`` returning an item other than the one remembered; a write through
this wrapper while a read is in flight. *Assumed*: a write through another handle that
leaves the newest ``tail`` items equal to the remembered ones (rewriting only older
items, or appending items equal to the ones they push out of the tail) is not seen;
call :meth:`CompactingSession.refresh` after such a write. Callers must not change the
returned dicts in place (the SDK copies an item before changing it). A read with a
``limit`` (the runner reads short tails to check its own writes) or a wrapped session
with ``session_settings.limit`` reads the store every time and leaves the copy alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from compactlens.integrations.compactor import Compactor
from compactlens.integrations.loop import LoopMemory, shared
from compactlens.model.errors import ConfigError

FORMAT = "openai-responses"


class CompactingSession:
    """A session whose ``get_items`` is compacted by ``compactor``; see the module docstring.

    ``tail`` is how many remembered items a ``get_items()`` compares with the store.
    """

    def __init__(self, session: Any, compactor: Compactor, *, tail: int = 8) -> None:
        if tail < 1:
            raise ConfigError(f"tail must be at least 1, got {tail}")
        self.session = session
        self.session_id: str = session.session_id
        self.session_settings: Any = getattr(session, "session_settings", None)
        self.compactor = compactor.recording("openai-agents", FORMAT)
        #: What the last ``get_items`` read (a call on items that only grew reads only
        #: the new ones; see :mod:`compactlens.integrations.loop`).
        self.memory = LoopMemory()
        self.tail = tail
        self._known: list[Any] | None = None  # the stored items as last read, or unknown
        self._added = 0  # items added through this wrapper since then
        self._writes = 0  # writes finished through this wrapper (a read spanning one is stale)
        self._writing = 0  # writes in flight through this wrapper
        self._reading = 0  # get_items() calls in flight (one may be compacting the copy)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The wrapped session's items, compacted (``limit`` applies to the stored items)."""
        if limit is not None or self._settings_limit() is not None:
            items = list(await self.session.get_items(limit))
            # A window, not the history: compacted on its own, the memory left alone.
            run = await asyncio.to_thread(self.compactor.run, items, FORMAT)
            return list(run.messages) if run.changed else items
        self._reading += 1
        try:
            items = await self._history()
            # In a worker thread: a summarizer's model call must not block the event loop.
            result = await asyncio.to_thread(self.compactor.run, items, FORMAT, memory=self.memory)
        finally:
            self._reading -= 1
        return list(result.messages) if result.changed else list(items)

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[None]:
        """Around a write through this wrapper: a read spanning it is stale, and a write
        that failed leaves the store unknown."""
        self._writing += 1
        try:
            yield
        except BaseException:
            self._known = None
            raise
        finally:
            self._writing -= 1
            self._writes += 1

    async def add_items(self, items: list[Any]) -> None:
        async with self._write():
            await self.session.add_items(items)
        self._added += len(items)

    async def pop_item(self) -> Any:
        async with self._write():
            item = await self.session.pop_item()
        known = self._known
        if item is None:  # the store is empty
            self._known, self._added = [], 0
        elif self._added:
            self._added -= 1
        elif known and known[-1] == item:
            self._known = known[:-1]
        else:
            self._known = None
        return item

    async def clear_session(self) -> None:
        async with self._write():
            await self.session.clear_session()
        self._known, self._added = [], 0
        self.memory.forget()

    def refresh(self) -> None:
        """Read the whole store on the next ``get_items()`` (after a write through another
        handle that the tail check cannot see; see the module docstring)."""
        self._known = None

    def _settings_limit(self) -> int | None:
        settings = self.session_settings
        return None if settings is None else getattr(settings, "limit", None)

    async def _history(self) -> list[Any]:
        """The stored items: the remembered ones and the newest, or a full read."""
        writes = self._writes
        history = None
        known, added = self._known, self._added
        if known is not None and not self._writing:
            window = added + self.tail
            newest = list(await self.session.get_items(window))
            old = len(newest) - added  # how many of them should be remembered ones
            whole = len(newest) < window  # the read holds the whole store
            if (
                old >= 0
                and (len(known) == old if whole else len(known) >= old)
                and newest[:old] == known[len(known) - old :]
            ):
                new = [shared(item) for item in newest[old:]]
                if writes == self._writes and not self._writing and self._reading == 1:
                    known += new  # it becomes the copy below: no copy of the whole history
                    history = known
                else:  # the copy stays as it is (another read may be compacting it)
                    history = known + new
        if history is None:
            history = [shared(item) for item in await self.session.get_items()]
        if writes == self._writes and not self._writing:
            self._known, self._added = history, 0
        return history


__all__ = ["CompactingSession"]
