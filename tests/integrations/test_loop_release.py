"""What an integration remembers of its loop goes when the integration (or the session)
goes: after the last reference to the middleware, processor, session or strategy is
dropped, its :class:`LoopMemory` is collected, and ``clear_session`` empties a session's."""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import weakref
from typing import Any

import pytest

from compactlens.integrations import Compactor
from compactlens.integrations.loop import LoopMemory

IDLE = {"type": "truncation", "trigger": {"op": "exceed", "metric": "tokens", "n": 10**9}}


def _needs(name: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        importlib.util.find_spec(name) is None, reason=f"{name} is not installed"
    )


def _memories(holder: Any) -> list[weakref.ref[LoopMemory]]:
    """Weak references to every LoopMemory reachable from ``holder``."""
    found: list[weakref.ref[LoopMemory]] = []
    seen: set[int] = set()
    stack = [holder]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (str, bytes, int, float, type)):
            continue
        seen.add(id(obj))
        if isinstance(obj, LoopMemory):
            found.append(weakref.ref(obj))
            continue
        stack.extend(gc.get_referents(obj))
    return found


def _released(refs: list[weakref.ref[LoopMemory]]) -> bool:
    gc.collect()
    return all(r() is None for r in refs)


@_needs("langchain_core")
def test_langchain_middleware_releases_its_loops() -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    from compactlens.integrations import compaction_middleware

    middleware = compaction_middleware(Compactor.from_config(IDLE))
    messages: list[Any] = [HumanMessage("hi", id="u0")]
    for n in range(3):
        messages += [AIMessage(f"answer {n}", id=f"a{n}"), HumanMessage(f"q{n}", id=f"u{n + 1}")]
        middleware.before_model({"messages": messages}, None)
    # The loops live in the closure of the middleware's own class.
    refs = _memories([c.cell_contents for c in type(middleware).before_model.__closure__ or ()])
    assert refs and not _released(refs)
    del middleware
    assert _released(refs)


@_needs("pydantic_ai")
def test_pydantic_ai_processor_releases_its_loops() -> None:
    import pydantic_ai.messages as pm

    from compactlens.integrations import history_processor

    process = history_processor(Compactor.from_config(IDLE))
    history: list[Any] = []
    for n in range(3):
        history += [
            pm.ModelRequest(parts=[pm.UserPromptPart(content=f"q{n}")]),
            pm.ModelResponse(parts=[pm.TextPart(content=f"answer {n}")]),
        ]
        process(history)
    refs = _memories(process)
    assert refs and not _released(refs)
    del process
    assert _released(refs)


@_needs("agent_framework")
def test_maf_strategy_releases_its_loops_and_views() -> None:
    from agent_framework import Content, Message

    from compactlens.integrations import CompactlensStrategy

    strategy = CompactlensStrategy(Compactor.from_config(IDLE))
    messages: list[Any] = []
    for n in range(3):
        messages += [Message(role="user", contents=[Content.from_text(f"q{n}")])]
        asyncio.run(strategy(messages))
    refs = _memories(strategy)
    views = weakref.ref(strategy._views)
    assert refs and not _released(refs)
    del strategy
    assert _released(refs) and views() is None


@_needs("agents")
def test_agents_sdk_session_releases_its_memory() -> None:
    from agents import SQLiteSession

    from compactlens.integrations import CompactingSession

    store = SQLiteSession("release")

    async def loop(session: CompactingSession) -> None:
        for n in range(3):
            await session.add_items([{"role": "user", "content": f"q{n}"}])
            await session.get_items()

    try:
        session = CompactingSession(store, Compactor.from_config(IDLE))
        asyncio.run(loop(session))
        assert (
            session.memory.totals(asyncio.run(store.get_items()), "openai-responses", None)
            is not None
        )
        asyncio.run(session.clear_session())  # the session ends: nothing remembered
        assert session.memory.totals([], "openai-responses", None) is None
        asyncio.run(loop(session))
        refs = [weakref.ref(session.memory)]
        del session
        assert _released(refs)
    finally:
        store.close()
