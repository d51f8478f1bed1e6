"""``CompactingSession`` remembers the stored items and reads only the newest ones, yet
every ``get_items()`` hands the runner what a fresh wrapper reading the whole store hands
it: random loops of writes through the wrapper, through another ``SQLiteSession`` handle
on the same database file, pops, rewinds and clears."""

from __future__ import annotations

import asyncio
import importlib.util
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens.integrations import CompactingSession, Compactor

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("agents") is None, reason="openai-agents is not installed"
)

TOKENS = {"op": "exceed", "metric": "tokens", "n": 250}
CONFIGS = (
    {"type": "truncation", "trigger": TOKENS, "minimum_preserved": 2},
    {
        "type": "truncation",
        "trigger": {"op": "exceed", "metric": "tokens", "n": 10**9},
        "minimum_preserved": 2,
    },
)


def _user(n: int, size: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"question {n} " + "word " * size}]


def _tools(n: int, size: int) -> list[dict[str, Any]]:
    return [
        {"type": "function_call", "call_id": f"c{n}", "name": "look", "arguments": "{}"},
        {"type": "function_call_output", "call_id": f"c{n}", "output": f"result {n} " * size},
        {
            "type": "message",
            "id": f"msg_{n}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": f"answer {n}", "annotations": []}],
        },
    ]


class CountingSession:
    """A session that passes everything to ``inner`` and counts the full reads."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.session_id = inner.session_id
        self.session_settings = inner.session_settings
        self.full_reads = 0

    async def get_items(self, limit: int | None = None) -> list[Any]:
        self.full_reads += limit is None
        return list(await self.inner.get_items(limit))

    async def add_items(self, items: list[Any]) -> None:
        await self.inner.add_items(items)

    async def pop_item(self) -> Any:
        return await self.inner.pop_item()

    async def clear_session(self) -> None:
        await self.inner.clear_session()


async def _fresh(db: Path, compactor: Compactor) -> list[Any]:
    """What a wrapper that has seen nothing hands the runner."""
    from agents import SQLiteSession

    store = SQLiteSession("loop", db_path=db)
    try:
        return await CompactingSession(store, compactor).get_items()
    finally:
        store.close()


OP = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 30)),
    st.tuples(st.just("tools"), st.integers(1, 40)),
    st.tuples(st.just("other user"), st.integers(1, 30)),
    st.tuples(st.just("other tools"), st.integers(1, 40)),
    st.tuples(st.just("pop"), st.integers(1, 4)),
    st.tuples(st.just("other pop"), st.integers(1, 4)),
    st.tuples(st.just("rewind"), st.integers(1, 6)),
    st.tuples(st.just("clear"), st.booleans()),
    st.tuples(st.just("read"), st.integers(0, 0)),
)


@settings(max_examples=60, deadline=None)
@given(config=st.sampled_from(CONFIGS), tail=st.integers(1, 4), ops=st.lists(OP, max_size=25))
def test_every_read_equals_a_fresh_wrappers(
    config: dict[str, Any], tail: int, ops: list[tuple[str, Any]]
) -> None:
    from agents import SQLiteSession

    compactor = Compactor.from_config(config)

    async def scenario(db: Path) -> None:
        store, other = SQLiteSession("loop", db_path=db), SQLiteSession("loop", db_path=db)
        session = CompactingSession(store, compactor, tail=tail)
        try:
            for n, (op, value) in enumerate(ops):
                writer: Any = other if op.startswith("other") else session
                kind = op.removeprefix("other ")
                if kind in ("user", "tools"):
                    await writer.add_items((_user if kind == "user" else _tools)(n, value))
                elif kind == "pop":
                    for _ in range(value):
                        await writer.pop_item()
                elif kind == "rewind":  # the runner's rewind: pops, then new items
                    for _ in range(value):
                        await session.pop_item()
                    await other.add_items(_user(n, 3))
                    await session.add_items(_tools(n, 5))
                elif kind == "clear":
                    await (session if value else other).clear_session()
                got = await session.get_items()
                assert got == await _fresh(db, compactor), (n, op)
        finally:
            store.close()
            other.close()

    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(scenario(Path(folder) / "sessions.db"))


def test_writes_through_the_wrapper_read_only_the_newest_items() -> None:
    from agents import SQLiteSession

    async def scenario() -> None:
        store = SQLiteSession("loop")
        counting = CountingSession(store)
        session = CompactingSession(counting, Compactor.from_config(CONFIGS[1]))
        try:
            await session.add_items(_user(0, 5))
            await session.get_items()
            assert counting.full_reads == 1
            for n in range(1, 20):
                await session.add_items(_tools(n, 10) + _user(n, 5))
                items = await session.get_items()
                assert items == await store.get_items()
            await session.pop_item()
            assert await session.get_items() == await store.get_items()
            assert counting.full_reads == 1
            await store.add_items(_user(99, 2))  # behind the wrapper's back: a full read
            assert await session.get_items() == await store.get_items()
            assert counting.full_reads == 2
        finally:
            store.close()

    asyncio.run(scenario())


def test_refresh_reads_a_rewrite_the_tail_cannot_show() -> None:
    """A rewrite through another handle that keeps the newest items is the documented
    blind spot; ``refresh()`` makes the next read a full one."""
    from agents import SQLiteSession

    async def scenario() -> None:
        store = SQLiteSession("loop")
        session = CompactingSession(store, Compactor.from_config(CONFIGS[1]), tail=2)
        try:
            await session.add_items(_user(0, 1) + _tools(1, 2))
            await session.get_items()
            kept = await store.get_items()
            await store.clear_session()
            await store.add_items(_user(7, 9) + kept[1:])  # the oldest item changed
            session.refresh()
            assert await session.get_items() == await store.get_items()
        finally:
            store.close()

    asyncio.run(scenario())


def test_a_limited_read_compacts_the_window_and_keeps_the_memory() -> None:
    from agents import SQLiteSession

    async def scenario() -> None:
        store = SQLiteSession("loop")
        counting = CountingSession(store)
        session = CompactingSession(counting, Compactor.from_config(CONFIGS[1]))
        try:
            await session.add_items(_user(0, 5) + _tools(1, 3))
            await session.get_items()
            assert await session.get_items(limit=2) == (await store.get_items())[-2:]
            await session.add_items(_user(2, 5))
            assert await session.get_items() == await store.get_items()
            assert counting.full_reads == 1
        finally:
            store.close()

    asyncio.run(scenario())
