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
"""

from __future__ import annotations

import asyncio
from typing import Any

from compactlens.integrations.compactor import Compactor
from compactlens.integrations.loop import Loop, Loops

FORMAT = "agent-framework"
EXCLUDED = "_excluded"
EXCLUDE_REASON = "_exclude_reason"
REASON = "compactlens"


class CompactlensStrategy:
    """A MAF ``CompactionStrategy``; see the module docstring."""

    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor.recording("agent-framework", FORMAT)
        # Each message is converted once; a call on a history that only grew reads only
        # what was appended (see compactlens.integrations.loop).
        self._loops = Loops(_to_items, _from_items)

    async def __call__(self, messages: list[Any]) -> bool:
        included = [m for m in messages if not m.additional_properties.get(EXCLUDED, False)]
        loop = self._loops.of(included)
        # In a worker thread: a summarizer's model call must not block the event loop.
        return await asyncio.to_thread(self._compact, messages, included, loop)

    def _compact(self, messages: list[Any], included: list[Any], loop: Loop) -> bool:
        with loop.memory.lock:
            items = loop.conversions.items(included)
            result = self.compactor.run(items, FORMAT, memory=loop.memory)
            if not result.changed:
                return False
            made = loop.conversions.objects(result.messages)
        source = {id(item): m for item, m in zip(items, included, strict=True)}
        kept = {id(item) for item in result.messages}
        for item, message in zip(items, included, strict=True):
            if id(item) not in kept:
                message.additional_properties[EXCLUDED] = True
                message.additional_properties[EXCLUDE_REASON] = REASON
        if any(id(item) not in source for item in result.messages):
            _insert(messages, included, result.messages, made, source)
        self._loops.follow(loop, made)
        return True


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
