"""LangChain v1 agents: a middleware that compacts the agent state's messages before each
model call.

The agent state's ``messages`` channel merges updates by message id, so returning a
shorter list would change nothing; the middleware replaces the history with
``[RemoveMessage(id=REMOVE_ALL_MESSAGES), *compacted]`` (as LangChain's own summarization
middleware does). The saved state is therefore the compacted history too. Messages go
through compactlens's ``langchain`` format (``messages_to_dict`` shape), so tool calls and
their results stay paired. ``langchain`` is imported only when the middleware is built.
"""

from __future__ import annotations

import asyncio
from typing import Any

from compactlens.integrations.compactor import Compactor
from compactlens.integrations.loop import Loops

FORMAT = "langchain"


def compact_langchain_messages(
    compactor: Compactor, messages: list[Any], *, loops: Loops | None = None
) -> list[Any] | None:
    """The compacted LangChain messages, or ``None`` when the history is unchanged.

    With ``loops`` (what the middleware keeps; :func:`langchain_loops` makes one for your
    own loop), each message is converted once and a call on a history that only grew
    reads only what was appended (see :mod:`compactlens.integrations.loop`). Unchanged
    messages come back as the very same objects.
    """
    if loops is None:
        loops = langchain_loops()
    loop = loops.of(messages)
    with loop.memory.lock:
        items = loop.conversions.view(messages)
        result = compactor.run(items, FORMAT, memory=loop.memory)
        if not result.changed:
            return None
        kept = loop.conversions.objects(result.messages)
    loops.follow(loop, kept)
    return kept


def langchain_loops() -> Loops:
    """The memory of the conversations one middleware serves (``messages_to_dict`` once
    per message, ``messages_from_dict`` only for messages a compaction made)."""
    from langchain_core.messages import messages_from_dict, messages_to_dict

    return Loops(messages_to_dict, lambda items: list(messages_from_dict(items)))


def compaction_middleware(compactor: Compactor) -> Any:
    """An ``AgentMiddleware`` for ``create_agent(..., middleware=[...])``."""
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    chosen = compactor.recording("langchain", FORMAT)
    loops = langchain_loops()

    class CompactlensMiddleware(AgentMiddleware):
        """Compacts the history with compactlens before every model call."""

        def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            kept = compact_langchain_messages(chosen, list(state["messages"]), loops=loops)
            if kept is None:
                return None
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}

        async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            # In a worker thread: a summarizer's model call must not block the event loop.
            return await asyncio.to_thread(self.before_model, state, runtime)

    return CompactlensMiddleware()


__all__ = ["compact_langchain_messages", "compaction_middleware", "langchain_loops"]
