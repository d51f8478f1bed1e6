"""pydantic-ai: a history processor over ``list[ModelMessage]``, and the capability that
runs it before every model request.

pydantic-ai 2.x takes history processors as a capability:
``Agent(model, capabilities=[compaction_capability(compactor)])`` (the old
``history_processors=`` argument is gone). The processor converts the history to
pydantic-ai's JSON form, compacts it through compactlens's ``pydantic-ai`` format and
validates it back; an unchanged history is returned as the very same list.
``pydantic_ai`` is imported only when the processor runs or the capability is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compactlens.formats.pydantic_ai import NAME as FORMAT
from compactlens.formats.pydantic_ai import merge_requests
from compactlens.integrations.compactor import Compactor
from compactlens.integrations.loop import Loops, shared


def history_processor(compactor: Compactor) -> Callable[[list[Any]], list[Any]]:
    """A pydantic-ai history processor: ``list[ModelMessage]`` in, the compacted list out."""
    chosen = compactor.recording("pydantic-ai", FORMAT)

    def to_items(objects: list[Any]) -> list[Any]:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        # Kept between calls: with keys and short strings interned (pydantic's dump makes
        # its own copy of every key and kind name) and without the null fields it writes
        # for every unset option (the format reads a null field as a missing one, and
        # validating an item fills them in again).
        dumped = ModelMessagesTypeAdapter.dump_python(objects, mode="json")
        return [shared(item, nulls=False) for item in dumped]

    def from_items(items: list[Any]) -> list[Any]:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        return list(ModelMessagesTypeAdapter.validate_python(items))

    loops = Loops(to_items, from_items)

    def process(messages: list[Any]) -> list[Any]:
        # Each message is converted once; a call on a history that only grew reads only
        # what was appended (see compactlens.integrations.loop).
        loop = loops.of(messages)
        with loop.memory.lock:
            items = loop.conversions.view(messages)
            result = chosen.run(items, FORMAT, memory=loop.memory)
            if not result.changed:
                return messages
            return loop.conversions.objects(merge_requests(result.messages))

    return process


def compaction_capability(compactor: Compactor) -> Any:
    """``ProcessHistory(history_processor(compactor))`` for ``Agent(capabilities=[...])``."""
    from pydantic_ai.capabilities import ProcessHistory

    return ProcessHistory(history_processor(compactor))


__all__ = ["compaction_capability", "history_processor"]
