"""An agent loop's call reads only what was appended (issue 26): the memory's and the
conversions' own lists grow in place when the history only grew, and every other history
(a rewind, an edit inside the prefix, a copied or restored history) falls back to the
full comparison; the MAF strategy learns of exclusion marks set or cleared by others
from the messages' watched ``additional_properties``, not by reading every mark."""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import pickle
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens.formats import get_format
from compactlens.integrations import Compactor
from compactlens.integrations.loop import Conversions, LoopMemory, grow
from compactlens.model.tokens import CharEstimator, count_messages

TRUNCATION = {
    "type": "truncation",
    "trigger": {"op": "exceed", "metric": "tokens", "n": 250},
    "minimum_preserved": 2,
}


def _needs(name: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        importlib.util.find_spec(name) is None, reason=f"{name} is not installed"
    )


def test_grow_extends_in_place_only_a_history_that_only_grew() -> None:
    a, b, c, d = ({"n": n} for n in range(4))
    before = [a, b]
    assert grow(before, [a, b, c, d]) and before == [a, b, c, d]
    assert before[2] is c
    for now in (
        [a],  # a rewind
        [a, {"n": 9}, c],  # an edit at the end of the prefix
        [{"n": 0}, b, c],  # the first item copied
        (a, b, c, d, {"n": 5}),  # not a list
    ):
        kept = list(before)
        assert not grow(before, now)
        assert before == kept and all(x is y for x, y in zip(before, kept, strict=True))
    middle = [a, {"n": 1}, c, d]  # an equal item in the middle: the prefix by equality
    assert grow(before, [*middle, {"n": 4}]) and len(before) == 5
    assert not grow(before, [a, {"n": 7}, c, d, before[4], {"n": 6}])  # an edit inside
    assert len(before) == 5
    assert not grow([], [a])


@settings(max_examples=100, deadline=None)
@given(
    start=st.lists(st.integers(0, 5), min_size=1, max_size=8),
    now=st.lists(st.integers(0, 5), max_size=12),
    share=st.booleans(),
)
def test_grow_agrees_with_a_prefix_comparison(
    start: list[int], now: list[int], share: bool
) -> None:
    made = [{"n": n} for n in start]
    later = [*made, *({"n": n} for n in now)] if share else [{"n": n} for n in now]
    before = list(made)
    grew = grow(before, later)
    if grew:
        assert before == later
    else:
        assert before == made
    if share:  # the same first and last objects, more after them: always grown
        assert grew


def test_the_memorys_history_stays_what_it_was_when_the_memory_grows() -> None:
    memory = LoopMemory()
    items = [{"role": "user", "content": f"question {n}"} for n in range(3)]
    messages = get_format("openai-chat").to_messages(items, "<history>")
    memory.seed(items, "openai-chat", None, messages, count_messages(messages, CharEstimator()))
    assert memory.totals(items, "openai-chat", None) is not None
    first = memory.history()
    grown = [*items, {"role": "assistant", "content": "answer"}]
    assert memory.totals(grown, "openai-chat", None) is not None
    second = memory.history()
    rewound = items[:2]
    memory.totals(rewound, "openai-chat", None)
    assert first() == tuple(items)
    assert second() == tuple(grown)


def test_conversions_view_grows_in_place_and_items_are_copies() -> None:
    conversions = Conversions(lambda objs: [{"n": o} for o in objs], lambda items: items)
    objects = [1, 2, 3]
    view = conversions.view(objects)
    assert conversions.view([*objects, 4]) is view and view == [{"n": n} for n in (1, 2, 3, 4)]
    copied = conversions.items([1, 2, 3, 4, 5])
    assert copied is not view and copied == [{"n": n} for n in (1, 2, 3, 4, 5)]
    edited = conversions.view([1, 9])
    assert edited is not view and edited == [{"n": 1}, {"n": 9}]
    assert view == [{"n": n} for n in (1, 2, 3, 4, 5)]  # replaced, not changed


def _maf_turn(n: int, size: int) -> list[Any]:
    from agent_framework import Content, Message

    call = Content.from_function_call(call_id=f"c{n}", name="look", arguments={"q": n})
    result = Content.from_function_result(call_id=f"c{n}", result=f"result {n} " * size)
    return [
        Message(role="user", contents=[Content.from_text(f"question {n} " * 5)]),
        Message(role="assistant", contents=[call]),
        Message(role="tool", contents=[result]),
        Message(role="assistant", contents=[Content.from_text(f"answer {n}")]),
    ]


def _fresh(messages: list[Any]) -> tuple[bool, list[Any]]:
    """What a strategy that has seen nothing does with a copy of ``messages``."""
    from agent_framework import Message

    from compactlens.integrations.agent_framework import CompactlensStrategy

    theirs = [Message.from_dict(m.to_dict()) for m in messages]
    changed = asyncio.run(CompactlensStrategy(Compactor.from_config(TRUNCATION))(theirs))
    return changed, [m.to_dict() for m in theirs]


def _turn_mark(props: dict[str, Any], how: str) -> None:
    """Set or clear the exclusion mark through one of ``dict``'s methods."""
    on = not props.get("_excluded")
    if how == "setitem":
        props["_excluded"] = on
    elif how == "update":
        props.update({"_excluded": on})
    elif how == "ior":
        props |= {"_excluded": on}
    elif how == "setdefault":
        props.pop("_excluded", None)
        props.setdefault("_excluded", on)
    elif how == "pop":
        if on:
            props["_excluded"] = True
        else:
            props.pop("_excluded")
    elif how == "delitem":
        if on:
            props["_excluded"] = True
        else:
            del props["_excluded"]
    elif how == "clear":
        if on:
            props["_excluded"] = True
        else:
            props.clear()


@_needs("agent_framework")
@pytest.mark.parametrize(
    "how", ["setitem", "update", "ior", "setdefault", "pop", "delitem", "clear"]
)
def test_maf_strategy_sees_a_mark_turned_through_any_dict_method(how: str) -> None:
    from compactlens.integrations.agent_framework import CompactlensStrategy

    strategy = CompactlensStrategy(Compactor.from_config(TRUNCATION))
    messages: list[Any] = []
    for n in range(8):
        messages += _maf_turn(n, 20)
        expected = _fresh(messages)
        assert asyncio.run(strategy(messages)) == expected[0]
        assert [m.to_dict() for m in messages] == expected[1]
        _turn_mark(messages[(7 * n) % len(messages)].additional_properties, how)


@_needs("agent_framework")
def test_maf_strategy_reads_only_the_new_marks_while_it_truncates() -> None:
    """Over budget a truncation only marks: its own marks keep the view's count current,
    so the next call takes the path that reads only the new messages."""
    from compactlens.integrations.agent_framework import CompactlensStrategy

    strategy = CompactlensStrategy(Compactor.from_config(TRUNCATION))
    messages: list[Any] = []
    for n in range(10):
        messages += _maf_turn(n, 20)
        asyncio.run(strategy(messages))
        (view,) = (held[1] for held in strategy._views._views.values())
        assert view.seen == strategy._views.watch.changes
    assert any(m.additional_properties.get("_excluded") for m in messages)


@_needs("agent_framework")
def test_maf_strategies_sharing_messages_see_each_others_marks() -> None:
    """Two strategies on one list (a pipeline of two of ours): each one's marks count on
    the other's watch, and each answers as a fresh strategy."""
    from compactlens.integrations.agent_framework import CompactlensStrategy

    idle = {"type": "truncation", "trigger": {"op": "exceed", "metric": "tokens", "n": 10**9}}
    marking = CompactlensStrategy(Compactor.from_config(TRUNCATION))
    watching = CompactlensStrategy(Compactor.from_config(idle))
    messages: list[Any] = []
    for n in range(6):
        messages += _maf_turn(n, 20)
        asyncio.run(watching(messages))
        asyncio.run(marking(messages))
        for m in messages[: 4 * n : 3]:
            m.additional_properties["_excluded"] = False  # someone clears some marks
        included = [m for m in messages if not m.additional_properties.get("_excluded")]
        asyncio.run(watching(messages))
        (view,) = (held[1] for held in watching._views._views.values())
        assert view.included == included


@_needs("agent_framework")
def test_maf_strategy_reads_every_mark_of_a_dict_subclass_it_cannot_watch() -> None:
    from compactlens.integrations.agent_framework import CompactlensStrategy

    class Mine(dict[str, Any]):
        pass

    strategy = CompactlensStrategy(Compactor.from_config(TRUNCATION))
    messages: list[Any] = []
    for n in range(6):
        turn = _maf_turn(n, 20)
        for m in turn:
            m.additional_properties = Mine(m.additional_properties)
        messages += turn
        expected = _fresh(messages)
        assert asyncio.run(strategy(messages)) == expected[0]
        assert [m.to_dict() for m in messages] == expected[1]
        assert all(type(m.additional_properties) is Mine for m in messages)
        dict.__setitem__(messages[n].additional_properties, "_excluded", n % 2 == 0)


@_needs("agent_framework")
def test_watched_properties_copy_as_plain_dicts() -> None:
    from compactlens.integrations.agent_framework import CompactlensStrategy

    strategy = CompactlensStrategy(Compactor.from_config(TRUNCATION))
    messages = _maf_turn(0, 2)
    messages[0].additional_properties["note"] = {"deep": [1, 2]}
    asyncio.run(strategy(messages))
    props = messages[0].additional_properties
    assert type(props) is not dict and props == {"note": {"deep": [1, 2]}}
    for made in (copy.copy(props), copy.deepcopy(props), pickle.loads(pickle.dumps(props))):
        assert type(made) is dict and made == props
    deep = copy.deepcopy(props)
    assert deep["note"] is not props["note"]
    assert type(copy.deepcopy(messages[0]).additional_properties) is dict


@_needs("agents")
def test_a_read_under_way_keeps_its_items_while_another_read_adds_to_the_copy() -> None:
    """The session extends its copy of the store in place only when no other read is
    under way: a read compacting the copy in its worker thread still sees what it read."""
    from agents import SQLiteSession

    from compactlens.integrations import CompactingSession

    store = SQLiteSession("growth")
    session = CompactingSession(store, Compactor.from_config(TRUNCATION))
    inner = session.compactor
    entered, release = threading.Event(), threading.Event()
    sizes: list[tuple[int, int]] = []

    class Slow:
        def run(self, items: list[Any], format: str, *, memory: Any = None) -> Any:
            size = len(items)
            if not sizes:  # the first read waits until the second one has read
                sizes.append((size, -1))
                entered.set()
                release.wait(10)
            sizes.append((size, len(items)))
            return inner.run(items, format, memory=memory)

    def turn(n: int) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": f"question {n} " + "word " * 30},
            {"role": "assistant", "content": f"answer {n} " + "word " * 30},
        ]

    async def scenario() -> None:
        await session.add_items(turn(0))
        await session.get_items()
        session.compactor = Slow()  # type: ignore[assignment]
        await session.add_items(turn(1))
        first = asyncio.create_task(session.get_items())
        await asyncio.to_thread(entered.wait, 10)
        await session.add_items(turn(2))
        second = await session.get_items()
        release.set()
        await first
        assert second == await CompactingSession(store, inner).get_items()
        await session.add_items(turn(3))
        assert await session.get_items() == await CompactingSession(store, inner).get_items()

    try:
        asyncio.run(scenario())
    finally:
        store.close()
    waited = sizes[2]
    assert waited[0] == waited[1] == 4  # the first read's items did not grow under it
