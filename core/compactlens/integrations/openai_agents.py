"""OpenAI Agents SDK: a ``Session`` that compacts the items it hands to the runner.

:class:`CompactingSession` wraps any session (``SQLiteSession``, a Redis session...).
Writes go to the wrapped session unchanged, so its storage stays the source of truth
(the full history); ``get_items`` returns the compacted view, read through compactlens's
``openai-responses`` format. Unchanged items are the wrapped session's own items, so
assistant messages keep the ``id`` and ``status`` the SDK needs to read them back.
No SDK import is needed: the session protocol is structural.
"""

from __future__ import annotations

import asyncio
from typing import Any

from compactlens.integrations.compactor import Compactor
from compactlens.integrations.loop import LoopMemory

FORMAT = "openai-responses"


class CompactingSession:
    """A session whose ``get_items`` is compacted by ``compactor``; see the module docstring."""

    def __init__(self, session: Any, compactor: Compactor) -> None:
        self.session = session
        self.session_id: str = session.session_id
        self.session_settings: Any = getattr(session, "session_settings", None)
        self.compactor = compactor.recording("openai-agents", FORMAT)
        #: What the last ``get_items`` read (a call on items that only grew reads only
        #: the new ones; see :mod:`compactlens.integrations.loop`).
        self.memory = LoopMemory()

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The wrapped session's items, compacted (``limit`` applies to the stored items)."""
        items = list(await self.session.get_items(limit))
        # In a worker thread: a summarizer's model call must not block the event loop.
        result = await asyncio.to_thread(self.compactor.run, items, FORMAT, memory=self.memory)
        return list(result.messages) if result.changed else items

    async def add_items(self, items: list[Any]) -> None:
        await self.session.add_items(items)

    async def pop_item(self) -> Any:
        return await self.session.pop_item()

    async def clear_session(self) -> None:
        await self.session.clear_session()
        self.memory.forget()


__all__ = ["CompactingSession"]
