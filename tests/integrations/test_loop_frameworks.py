"""The integrations that remember their loop (LangChain's middleware, pydantic-ai's processor,
MAF's strategy) hand the framework, call after call, what a fresh integration hands it on
the same history: random loops of appends, tool rounds, rewinds and edits, with the
framework's own objects and its own way of keeping the history (LangChain and MAF keep
the compacted history, pydantic-ai keeps the whole one)."""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens.integrations import Compactor

CONFIG = {
    "type": "pipeline",
    "strategies": [
        {
            "type": "tool_result_collapse",
            "trigger": {"op": "exceed", "metric": "tokens", "n": 250},
            "keep_last_tool_call_groups": 1,
        },
        {
            "type": "truncation",
            "trigger": {"op": "exceed", "metric": "tokens", "n": 250},
            "minimum_preserved": 2,
        },
    ],
}
#: A truncation only marks messages (MAF): the strategy's view then follows its own marks.
TRUNCATION = {
    "type": "truncation",
    "trigger": {"op": "exceed", "metric": "tokens", "n": 250},
    "minimum_preserved": 2,
}
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 25)),
        st.tuples(st.just("tools"), st.integers(1, 30)),
        st.tuples(st.just("rewind"), st.integers(1, 5)),
        st.tuples(st.just("edit"), st.integers(0, 40)),
    ),
    min_size=1,
    max_size=12,
)


def _needs(name: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        importlib.util.find_spec(name) is None, reason=f"{name} is not installed"
    )


def _apply(history: list[Any], op: str, value: int, n: int, make: Any) -> list[Any]:
    if op == "rewind":
        return history[: max(0, len(history) - value)]
    if op == "edit" and history:
        at = value % len(history)
        return [*history[:at], *make("user", n, 1), *history[at + 1 :]]
    return [*history, *make(op, n, value)]


def _langchain_make(op: str, n: int, size: int) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    if op == "user":
        return [HumanMessage(f"question {n} " + "word " * size, id=f"u{n}")]
    call = {"id": f"c{n}", "name": "look", "args": {"q": n}}
    return [
        AIMessage("", tool_calls=[call], id=f"a{n}"),
        ToolMessage(f"result {n} " * size, tool_call_id=f"c{n}", id=f"t{n}"),
        AIMessage(f"answer {n}", id=f"b{n}"),
    ]


@_needs("langchain_core")
@settings(max_examples=30, deadline=None)
@given(steps=STEPS)
def test_langchain_messages_as_a_fresh_middleware_gives(steps: list[tuple[str, int]]) -> None:
    from langchain_core.messages import messages_to_dict

    from compactlens.integrations.langchain import compact_langchain_messages, langchain_loops

    compactor = Compactor.from_config(CONFIG)
    loops = langchain_loops()
    state: list[Any] = []
    for n, (op, value) in enumerate(steps):
        state = _apply(state, op, value, n, _langchain_make)
        kept = compact_langchain_messages(compactor, state, loops=loops)
        fresh = compact_langchain_messages(compactor, state)
        assert (kept is None) == (fresh is None)
        if kept is not None and fresh is not None:
            assert messages_to_dict(kept) == messages_to_dict(fresh)
            state = kept  # the agent state holds the compacted history


def _untimed(value: Any) -> Any:
    """``value`` without ``timestamp`` fields (pydantic-ai stamps a message it builds)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _pydantic_make(op: str, n: int, size: int) -> list[Any]:
    import pydantic_ai.messages as pm

    if op == "user":
        return [pm.ModelRequest(parts=[pm.UserPromptPart(content=f"question {n} " * size)])]
    return [
        pm.ModelResponse(
            parts=[pm.ToolCallPart(tool_name="look", args={"q": n}, tool_call_id=f"c{n}")]
        ),
        pm.ModelRequest(
            parts=[
                pm.ToolReturnPart(
                    tool_name="look", content=f"result {n} " * size, tool_call_id=f"c{n}"
                )
            ]
        ),
        pm.ModelResponse(parts=[pm.TextPart(content=f"answer {n}")]),
    ]


@_needs("pydantic_ai")
@settings(max_examples=15, deadline=None)
@given(steps=STEPS)
def test_pydantic_ai_processor_as_a_fresh_one_gives(steps: list[tuple[str, int]]) -> None:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from compactlens.integrations.pydantic_ai import history_processor

    compactor = Compactor.from_config(CONFIG)
    process = history_processor(compactor)
    history: list[Any] = []
    for n, (op, value) in enumerate(steps):
        history = _apply(history, op, value, n, _pydantic_make)
        sent = process(history)
        fresh = history_processor(compactor)(history)
        dump = ModelMessagesTypeAdapter.dump_python
        assert _untimed(dump(sent, mode="json")) == _untimed(dump(fresh, mode="json"))
        assert (sent is history) == (fresh is history)


@_needs("pydantic_ai")
@settings(max_examples=15, deadline=None)
@given(steps=STEPS)
def test_pydantic_ai_processor_compacts_as_the_engine_does_on_the_full_dump(
    steps: list[tuple[str, int]],
) -> None:
    """The processor keeps its items without the null fields pydantic writes for unset
    options; what it sends is what ``apply_compaction`` makes of the full dump."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from compactlens import apply_compaction
    from compactlens.engine.telemetry import history_changed
    from compactlens.formats.pydantic_ai import merge_requests
    from compactlens.integrations.pydantic_ai import history_processor

    compactor = Compactor.from_config(CONFIG)
    assert compactor.strategy is not None
    process = history_processor(compactor)
    dump = ModelMessagesTypeAdapter.dump_python
    history: list[Any] = []
    for n, (op, value) in enumerate(steps):
        history = _apply(history, op, value, n, _pydantic_make)
        sent = process(history)
        full = list(dump(history, mode="json"))
        result = apply_compaction(full, compactor.strategy, format="pydantic-ai")
        if not history_changed(result):
            assert sent is history
            continue
        rebuilt = ModelMessagesTypeAdapter.validate_python(merge_requests(result.messages))
        assert _untimed(dump(sent, mode="json")) == _untimed(dump(rebuilt, mode="json"))


def _maf_make(op: str, n: int, size: int) -> list[Any]:
    from agent_framework import Content, Message

    if op == "user":
        return [Message(role="user", contents=[Content.from_text(f"question {n} " * size)])]
    call = Content.from_function_call(call_id=f"c{n}", name="look", arguments={"q": n})
    result = Content.from_function_result(call_id=f"c{n}", result=f"result {n} " * size)
    return [
        Message(role="assistant", contents=[call]),
        Message(role="tool", contents=[result]),
        Message(role="assistant", contents=[Content.from_text(f"answer {n}")]),
    ]


@_needs("agent_framework")
@settings(max_examples=30, deadline=None)
@given(steps=STEPS, config=st.sampled_from([CONFIG, TRUNCATION]))
def test_maf_strategy_marks_and_inserts_as_a_fresh_one(
    steps: list[tuple[str, int]], config: dict[str, Any]
) -> None:
    from agent_framework import Message

    from compactlens.integrations.agent_framework import CompactlensStrategy

    compactor = Compactor.from_config(config)
    strategy = CompactlensStrategy(compactor)
    mine: list[Any] = []
    theirs: list[Any] = []
    for n, (op, value) in enumerate(steps):
        mine = _apply(mine, op, value, n, _maf_make)
        # The same history as other objects, for a strategy that has seen nothing before.
        theirs = [Message.from_dict(m.to_dict()) for m in mine]
        changed = asyncio.run(strategy(mine))
        assert changed == asyncio.run(CompactlensStrategy(compactor)(theirs))
        assert [m.to_dict() for m in mine] == [m.to_dict() for m in theirs]


MAF_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 25)),
        st.tuples(st.just("tools"), st.integers(1, 30)),
        st.tuples(st.just("rewind"), st.integers(1, 5)),
        st.tuples(st.just("edit"), st.integers(0, 40)),
        st.tuples(st.just("exclude"), st.integers(0, 40)),
        st.tuples(st.just("include"), st.integers(0, 40)),
        st.tuples(st.just("annotate"), st.integers(0, 0)),
        st.tuples(st.just("copy"), st.integers(0, 0)),
    ),
    min_size=1,
    max_size=14,
)


@_needs("agent_framework")
@settings(max_examples=40, deadline=None)
@given(steps=MAF_STEPS, mode=st.sampled_from(["idle", "pipeline", "truncation"]))
def test_maf_strategy_sees_marks_others_set_or_clear(
    steps: list[tuple[str, int]], mode: str
) -> None:
    """Another strategy of a pipeline (or MAF's own reconciliation) marks or unmarks
    messages already seen between two calls, also messages the strategy itself marked;
    the strategy, which remembers the marks it saw and set, still answers as a fresh
    one."""
    from agent_framework import Message

    from compactlens.integrations.agent_framework import CompactlensStrategy

    idle = {"type": "truncation", "trigger": {"op": "exceed", "metric": "tokens", "n": 10**9}}
    config = {"idle": idle, "pipeline": CONFIG, "truncation": TRUNCATION}[mode]
    compactor = Compactor.from_config(config)
    strategy = CompactlensStrategy(compactor)
    mine: list[Any] = []
    for n, (op, value) in enumerate(steps):
        if op in ("exclude", "include"):
            if mine:
                props = mine[value % len(mine)].additional_properties
                props["_excluded"] = op == "exclude"
        elif op == "annotate":  # what MAF's annotate_message_groups leaves on every message
            for m in mine:
                m.additional_properties.setdefault("_excluded", False)
        elif op == "copy":  # the same messages in a new list
            mine = list(mine)
        else:
            mine = _apply(mine, op, value, n, _maf_make)
        theirs = [Message.from_dict(m.to_dict()) for m in mine]
        changed = asyncio.run(strategy(mine))
        assert changed == asyncio.run(CompactlensStrategy(compactor)(theirs))
        assert [m.to_dict() for m in mine] == [m.to_dict() for m in theirs]


@_needs("agent_framework")
def test_maf_strategy_sees_a_mark_cleared_between_calls() -> None:
    """A long message another strategy had excluded comes back (MAF's reconciliation
    clears marks): the history is then over budget and the strategy must compact."""
    from compactlens.integrations.agent_framework import CompactlensStrategy

    strategy = CompactlensStrategy(Compactor.from_config(CONFIG))
    messages = [*_maf_make("user", 0, 300), *_maf_make("user", 1, 2)]
    messages[0].additional_properties["_excluded"] = True
    assert asyncio.run(strategy(messages)) is False
    messages += _maf_make("user", 2, 2)
    assert asyncio.run(strategy(messages)) is False
    messages[0].additional_properties["_excluded"] = False
    assert asyncio.run(strategy(messages)) is True


@_needs("agent_framework")
@settings(max_examples=20, deadline=None)
@given(sizes=st.lists(st.integers(1, 30), min_size=3, max_size=12))
def test_maf_strategy_follows_its_own_marks_without_reading_the_list_again(
    sizes: list[int],
) -> None:
    """A call that only marks messages (a truncation) leaves the strategy's view of the
    list as a fresh view reads the list after the marks: the next call reads only what
    was appended, and every call answers as a fresh strategy."""
    from agent_framework import Message

    from compactlens.integrations.agent_framework import CompactlensStrategy, _View

    compactor = Compactor.from_config(TRUNCATION)
    strategy = CompactlensStrategy(compactor)
    mine: list[Any] = []
    for n in range(6):  # over budget from the first call on
        mine += [*_maf_make("user", n, 5), *_maf_make("tools", n, 20)]
    marked = 0
    for n, size in enumerate(sizes, start=6):
        mine += [*_maf_make("user", n, 5), *_maf_make("tools", n, size)]
        theirs = [Message.from_dict(m.to_dict()) for m in mine]
        changed = asyncio.run(strategy(mine))
        assert changed == asyncio.run(CompactlensStrategy(compactor)(theirs))
        assert [m.to_dict() for m in mine] == [m.to_dict() for m in theirs]
        views = list(strategy._views._views.values())
        assert len(views) == 1  # a call that only marked kept its view
        view = views[0][1]
        fresh = _View()
        fresh.update(mine)
        assert view.included == fresh.included
        assert view.positions == fresh.positions
        assert view.marks == fresh.marks
        marked += changed
    assert marked >= 1
