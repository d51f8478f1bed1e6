"""A compactor that remembers between the calls of an agent loop gives, on every call, what a
from-scratch run gives on the same history.

Random loops of appends, tool rounds, rewinds, edits inside the prefix, restores of an
earlier history, strategy changes and histories replaced by the compacted output (what
LangChain's state does) run through one :class:`LoopMemory` and, beside it, through a
compactor without memory (``apply_compaction`` / ``compact()``); every call must agree on
the messages, status, tokens, trigger and decisions.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import load_transcript
from compactlens.formats.pydantic_ai import merge_requests
from compactlens.integrations import Compactor
from compactlens.integrations.compactor import OneShot
from compactlens.integrations.loop import Conversions, LoopMemory
from compactlens.integrations.outcome import CompactorRun
from compactlens.integrations.window import window_result
from compactlens.summarizers.base import SummaryRequest
from compactlens.summarizers.testing import FakeSummarizer


def _summary(request: SummaryRequest) -> str:
    return f"summary of {len(request.transcript_json)} characters"


def _chat_user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def _chat_tools(n: int, size: int) -> list[dict[str, Any]]:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "look", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"result {n} " * size},
        {"role": "assistant", "content": f"answer {n}"},
    ]


def _responses_user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def _responses_tools(n: int, size: int) -> list[dict[str, Any]]:
    return [
        {"type": "function_call", "call_id": f"c{n}", "name": "look", "arguments": "{}"},
        {"type": "function_call_output", "call_id": f"c{n}", "output": f"result {n} " * size},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": f"answer {n}"}],
        },
    ]


def _langchain(kind: str, **data: Any) -> dict[str, Any]:
    body = {"content": "", "additional_kwargs": {}, "response_metadata": {}, "type": kind}
    return {"type": kind, "data": {**body, **data}}


def _langchain_user(text: str) -> list[dict[str, Any]]:
    return [_langchain("human", content=text)]


def _langchain_tools(n: int, size: int) -> list[dict[str, Any]]:
    call = {"name": "look", "args": {"q": n}, "id": f"c{n}", "type": "tool_call"}
    return [
        _langchain("ai", tool_calls=[call]),
        _langchain("tool", content=f"result {n} " * size, tool_call_id=f"c{n}"),
        _langchain("ai", content=f"answer {n}"),
    ]


@dataclass(frozen=True)
class Shape:
    format: str
    user: Callable[[str], list[dict[str, Any]]]
    tools: Callable[[int, int], list[dict[str, Any]]]


def _pydantic_ai_user(text: str) -> list[dict[str, Any]]:
    import pydantic_ai.messages as pm

    request = pm.ModelRequest(parts=[pm.UserPromptPart(content=text, timestamp=WHEN)])
    return list(pm.ModelMessagesTypeAdapter.dump_python([request], mode="json"))


def _pydantic_ai_tools(n: int, size: int) -> list[dict[str, Any]]:
    import pydantic_ai.messages as pm

    call = pm.ToolCallPart(tool_name="look", args={"q": n}, tool_call_id=f"c{n}")
    result = pm.ToolReturnPart(
        tool_name="look", content=f"result {n} " * size, tool_call_id=f"c{n}", timestamp=WHEN
    )
    messages = [
        pm.ModelResponse(parts=[call], timestamp=WHEN),
        pm.ModelRequest(parts=[result]),
        pm.ModelResponse(parts=[pm.TextPart(content=f"answer {n}")], timestamp=WHEN),
    ]
    return list(pm.ModelMessagesTypeAdapter.dump_python(messages, mode="json"))


def _maf_user(text: str) -> list[dict[str, Any]]:
    from agent_framework import Content, Message

    return [Message(role="user", contents=[Content.from_text(text)]).to_dict()]


def _maf_tools(n: int, size: int) -> list[dict[str, Any]]:
    from agent_framework import Content, Message

    call = Content.from_function_call(call_id=f"c{n}", name="look", arguments={"q": n})
    result = Content.from_function_result(call_id=f"c{n}", result=f"result {n} " * size)
    messages = [
        Message(role="assistant", contents=[call]),
        Message(role="tool", contents=[result]),
        Message(role="assistant", contents=[Content.from_text(f"answer {n}")]),
    ]
    return [m.to_dict() for m in messages]


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


WHEN = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
SHAPES = (
    Shape("openai-chat", _chat_user, _chat_tools),
    Shape("openai-responses", _responses_user, _responses_tools),
    Shape("langchain", _langchain_user, _langchain_tools),
    *(
        [Shape("pydantic-ai", _pydantic_ai_user, _pydantic_ai_tools)]
        if _installed("pydantic_ai")
        else []
    ),
    *([Shape("agent-framework", _maf_user, _maf_tools)] if _installed("agent_framework") else []),
)


def _compactors(limit: int, summarizer: FakeSummarizer) -> list[Compactor]:
    tokens = {"op": "exceed", "metric": "tokens", "n": limit}
    return [
        Compactor.from_config({"type": "truncation", "trigger": tokens, "minimum_preserved": 2}),
        Compactor.from_config(
            {
                "type": "pipeline",
                "strategies": [
                    {
                        "type": "tool_result_collapse",
                        "trigger": tokens,
                        "keep_last_tool_call_groups": 1,
                    },
                    {"type": "truncation", "trigger": tokens, "minimum_preserved": 2},
                ],
            }
        ),
        Compactor.from_config(
            {"type": "summarization", "trigger": tokens, "minimum_preserved": 2},
            summarizer=summarizer,
        ),
        Compactor.from_config(
            {"type": "truncation", "trigger": tokens, "minimum_preserved": 2}, profile="maf"
        ),
        Compactor.from_config(
            {"type": "tool_result_collapse", "trigger": tokens, "keep_last_tool_call_groups": 1},
            profile="deepagents",
        ),
        Compactor.from_one_shot(
            OneShot(
                summarizer=summarizer,
                target_tokens=limit // 2,
                keep_last_messages=3,
                trigger_tokens=limit,
            )
        ),
    ]


def _decisions(run: CompactorRun) -> list[Any] | None:
    decisions = getattr(run.result, "decisions", None)
    return None if decisions is None else list(decisions)


def _events(run: CompactorRun) -> list[dict[str, Any]]:
    """The stage events without their timings."""
    return [{k: v for k, v in e.items() if k != "duration_ms"} for e in run.events]


def _same(remembered: CompactorRun, fresh: CompactorRun) -> None:
    assert remembered.messages == fresh.messages
    assert (remembered.status, remembered.changed, remembered.strategy) == (
        fresh.status,
        fresh.changed,
        fresh.strategy,
    )
    assert (remembered.tokens_before, remembered.tokens_after) == (
        fresh.tokens_before,
        fresh.tokens_after,
    )
    assert (remembered.trigger, remembered.summarized, remembered.summary) == (
        fresh.trigger,
        fresh.summarized,
        fresh.summary,
    )
    if remembered.result is None:  # answered from the running totals: nothing may change
        assert fresh.status == "unchanged"
        assert all(d.action == "kept" for d in _decisions(fresh) or [])
    else:
        assert _decisions(remembered) == _decisions(fresh)
        assert _events(remembered) == _events(fresh)
        assert getattr(remembered.result, "explanation", None) == getattr(
            fresh.result, "explanation", None
        )
        assert getattr(remembered.result, "problems", None) == getattr(
            fresh.result, "problems", None
        )
        assert getattr(remembered.result, "summaries", None) == getattr(
            fresh.result, "summaries", None
        )


STEP = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 30)),
    st.tuples(st.just("tools"), st.integers(1, 40)),
    st.tuples(st.just("rewind"), st.integers(1, 6)),
    st.tuples(st.just("edit"), st.integers(0, 60)),
    st.tuples(st.just("restore"), st.integers(0, 20)),
    st.tuples(st.just("strategy"), st.integers(0, 5)),
    st.tuples(st.just("adopt"), st.booleans()),
)


@settings(max_examples=150, deadline=None)
@given(
    shape=st.sampled_from(SHAPES),
    limit=st.sampled_from([120, 300, 900]),
    system=st.booleans(),
    steps=st.lists(STEP, min_size=1, max_size=30),
)
def test_every_call_equals_a_fresh_run(
    shape: Shape, limit: int, system: bool, steps: list[tuple[str, Any]]
) -> None:
    summarizer = FakeSummarizer(text=_summary)
    compactors = _compactors(limit, summarizer)
    chosen = compactors[0]
    memory = LoopMemory()
    history: list[dict[str, Any]] = []
    if system:
        history.append({"role": "system", "content": "Be brief."})
        if shape.format != "openai-chat":  # a system message in the shape's own format
            history = []
    saved: list[list[dict[str, Any]]] = []
    last: CompactorRun | None = None
    for n, (op, value) in enumerate(steps):
        if op == "user":
            history = [*history, *shape.user(f"question {n} " + "word " * value)]
        elif op == "tools":
            history = [*history, *shape.tools(n, value)]
        elif op == "rewind":
            history = history[: max(0, len(history) - value)]
        elif op == "edit" and history:
            at = value % len(history)
            history = [*history[:at], *shape.user(f"edited {n}"), *history[at + 1 :]]
        elif op == "restore" and saved:
            history = list(saved[value % len(saved)])
        elif op == "strategy":
            chosen = compactors[value]
        elif op == "adopt" and last is not None and last.changed and value:
            history = list(last.messages)  # the framework keeps the compacted history
        saved.append(history)
        last = chosen.run(history, shape.format, memory=memory)
        _same(last, chosen.run(history, shape.format))


@settings(max_examples=15, deadline=None)
@given(turns=st.integers(4, 25))
def test_a_range_already_summarised_is_not_summarised_again(turns: int) -> None:
    """A history that stays over budget (a session view re-compacts the stored history on
    every call) asks the summarizer only when the range to summarise changed."""
    summarizer = FakeSummarizer(text=_summary)
    compactor = Compactor.from_config(
        {
            "type": "summarization",
            "trigger": {"op": "exceed", "metric": "tokens", "n": 100},
            "minimum_preserved": 2,
        },
        summarizer=summarizer,
    )
    memory = LoopMemory()
    history = [m for n in range(turns) for m in _chat_user(f"question {n} " * 20)]
    first = compactor.run(history, "openai-chat", memory=memory)
    assert first.summarized and summarizer.call_count == 1
    again = compactor.run(list(history), "openai-chat", memory=memory)
    assert again.messages == first.messages
    assert summarizer.call_count == 1


def test_conversions_convert_each_object_once() -> None:
    converted: list[int] = []

    def to_items(objects: list[int]) -> list[dict[str, int]]:
        converted.extend(objects)
        return [{"n": o} for o in objects]

    def from_items(items: list[dict[str, int]]) -> list[int]:
        return [-item["n"] for item in items]

    conversions = Conversions(to_items, from_items)
    objects = [1, 2, 3]
    first = conversions.items(objects)
    second = conversions.items([*objects, 4])
    assert converted == [1, 2, 3, 4]
    assert second[:3] == first and all(a is b for a, b in zip(first, second, strict=False))
    assert conversions.items([1, 5]) == [{"n": 1}, {"n": 5}]
    assert converted[-1] == 5
    made = conversions.items([1, 5])
    back = conversions.objects([made[1], {"n": 7}])
    assert back == [5, -7]
    assert json.dumps(made) == json.dumps([{"n": 1}, {"n": 5}])


def _pydantic_ai_opening(text: str) -> list[dict[str, Any]]:
    """The first request of a pydantic-ai agent with a system prompt: one request holding
    a system part and a user part (read as two messages, neither the request itself)."""
    import pydantic_ai.messages as pm

    request = pm.ModelRequest(
        parts=[
            pm.SystemPromptPart(content="You are terse.", timestamp=WHEN),
            pm.UserPromptPart(content=text, timestamp=WHEN),
        ]
    )
    return list(pm.ModelMessagesTypeAdapter.dump_python([request], mode="json"))


@settings(max_examples=15, deadline=None)
@given(rounds=st.lists(st.integers(min_value=1, max_value=40), min_size=2, max_size=8))
def test_a_pydantic_ai_history_opening_with_a_system_prompt_is_remembered(
    rounds: list[int],
) -> None:
    """The opening request's parts cannot be traced to the request (the reader splits it),
    which once made the memory give up on every call; each later call on a history that
    only grew is answered from the running totals, as a fresh run answers it."""
    if not _installed("pydantic_ai"):
        return
    limit = 10**9  # idle: the trigger cannot fire
    remembered = Compactor.from_config(
        {"type": "truncation", "trigger": {"op": "exceed", "metric": "tokens", "n": limit}}
    )
    memory = LoopMemory()
    history = _pydantic_ai_opening("start")
    # A telemetry listener (an OpenTelemetry provider another test of this worker set) makes
    # every call a full run on purpose; this test is about the memory, so nobody listens.
    with patch("compactlens.integrations.compactor.listening", return_value=False):
        _opening_loop(remembered, memory, history, rounds)


def _opening_loop(
    remembered: Compactor, memory: LoopMemory, history: list[Any], rounds: list[int]
) -> None:
    for n, size in enumerate(rounds):
        history = history + _pydantic_ai_tools(n, size) + _pydantic_ai_user(f"next {n}")
        run = remembered.run(history, "pydantic-ai", memory=memory)
        fresh = remembered.run(history, "pydantic-ai")
        # A fresh read splits the opening request into its parts; unchanged, both hand
        # the framework its own history back, so they agree once requests are merged.
        assert merge_requests(run.messages) == merge_requests(fresh.messages) == history
        assert (run.status, run.changed, run.tokens_before, run.tokens_after) == (
            fresh.status,
            fresh.changed,
            fresh.tokens_before,
            fresh.tokens_after,
        )
        if n > 0:
            assert run.result is None, "answered by a full read, not from the totals"


# -- a history that stays over budget: the kept window ---------------------------------


def _windowed_compactors(limit: int) -> list[Compactor]:
    """Truncations a call may run on the window the last call left (see
    compactlens.integrations.window), and a pipeline that always runs in full."""
    tokens = {"op": "exceed", "metric": "tokens", "n": limit}
    half = {"op": "at_most", "metric": "tokens", "n": limit // 2}
    return [
        Compactor.from_config({"type": "truncation", "trigger": tokens, "minimum_preserved": 2}),
        Compactor.from_config(
            {"type": "truncation", "trigger": tokens, "target": half, "minimum_preserved": 1}
        ),
        Compactor.from_config(
            {"type": "truncation", "max_n": 12, "compact_to": 8, "minimum_preserved": 3}
        ),
        Compactor.from_config({"type": "truncation", "trigger": tokens}, profile="maf"),
        Compactor.from_config(
            {"type": "truncation", "trigger": tokens, "minimum_preserved": 1},
            guards={"provider": "anthropic"},
        ),
        Compactor.from_config(
            {
                "type": "pipeline",
                "strategies": [
                    {
                        "type": "tool_result_collapse",
                        "trigger": tokens,
                        "keep_last_tool_call_groups": 1,
                    },
                    {"type": "truncation", "trigger": tokens, "minimum_preserved": 2},
                ],
            }
        ),
    ]


def _call(n: int | str, reasoning: bool) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": {"name": "look", "arguments": "{}"}}
        ],
    }
    if reasoning:
        message["reasoning_content"] = f"thinking about {n} " * 3
    return message


def _result(n: int | str, size: int) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"c{n}", "content": f"result {n} " * size}


LONG_STEP = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 30)),
    st.tuples(st.just("tools"), st.integers(1, 40)),
    st.tuples(st.just("tools"), st.integers(1, 40)),
    st.tuples(st.just("parallel"), st.integers(2, 4)),
    st.tuples(st.just("reasoning"), st.integers(1, 20)),
    st.tuples(st.just("open"), st.integers(1, 20)),
    st.tuples(st.just("late"), st.integers(1, 20)),
    st.tuples(st.just("system"), st.integers(1, 5)),
    st.tuples(st.just("rewind"), st.integers(1, 6)),
    st.tuples(st.just("edit"), st.integers(0, 200)),
    st.tuples(st.just("strategy"), st.integers(0, 5)),
)


def _grow(
    history: list[dict[str, Any]], n: int, op: str, value: int, open_calls: list[int]
) -> None:
    if op == "user":
        history.append({"role": "user", "content": f"question {n} " + "word " * value})
    elif op in ("tools", "reasoning"):
        history += [_call(n, op == "reasoning"), _result(n, value)]
        history.append({"role": "assistant", "content": f"answer {n}"})
    elif op == "parallel":
        calls = [_call(f"{n}_{k}", False)["tool_calls"][0] for k in range(value)]
        history.append({"role": "assistant", "content": None, "tool_calls": calls})
        history += [_result(f"{n}_{k}", 5 * k + 3) for k in range(value)]
    elif op == "open":  # a call whose result comes many turns later
        history.append(_call(n, False))
        open_calls.append(n)
        history.append({"role": "user", "content": f"meanwhile {n} " + "word " * value})
    elif op == "late" and open_calls:
        history.append(_result(open_calls.pop(0), value))
    elif op == "system":
        history.append({"role": "system", "content": f"rule {n} " * value})


class _InFormat:
    """OpenAI Chat messages as ``format``'s wire items, each message converted once (so a
    history that grows keeps its items, as a framework's store hands them over)."""

    def __init__(self, format: str) -> None:
        self.format = format
        self._made: dict[int, tuple[dict[str, Any], list[Any]]] = {}

    def __call__(self, history: list[dict[str, Any]]) -> list[Any]:
        if self.format == "openai-chat":
            return history
        out: list[Any] = []
        for m in history:
            held = self._made.get(id(m))
            if held is None or held[0] is not m:
                items, _ = load_transcript([m], "openai-chat").to_wire(self.format)
                held = self._made[id(m)] = (m, items)
            out += held[1]
        return out


@settings(max_examples=60, deadline=None)
@given(
    limit=st.sampled_from([150, 300, 600]),
    system=st.booleans(),
    opening=st.integers(5, 40),
    steps=st.lists(LONG_STEP, min_size=20, max_size=70),
    format=st.sampled_from(["openai-chat", "openai-responses"]),
)
def test_a_history_over_budget_follows_the_kept_window_and_equals_a_fresh_run(
    limit: int, system: bool, opening: int, steps: list[tuple[str, Any]], format: str
) -> None:
    """Long loops over budget (appends, tool rounds, parallel calls, reasoning, calls
    answered many turns later, system messages in the middle, rewinds, edits inside the
    dropped prefix, strategy changes): every call equals a fresh run, and most calls are
    answered from the window the call before left. In the Responses format each parallel
    call is an item of its own, so its result is apart from its call (a split pair)."""
    wire = _InFormat(format)
    compactors = _windowed_compactors(limit)
    chosen = compactors[0]
    memory = LoopMemory()
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}] if system else []
    open_calls: list[int] = []
    for n in range(opening):  # start over budget
        _grow(history, n, "user", 5, open_calls)
        _grow(history, n, "tools", 20, open_calls)
    for n, (op, value) in enumerate(steps, start=opening):
        if op == "rewind":
            history = history[: max(0, len(history) - value)]
        elif op == "edit" and history:
            at = value % len(history)
            history = [
                *history[:at],
                {"role": "user", "content": f"edited {n}"},
                *history[at + 1 :],
            ]
        elif op == "strategy":
            chosen = compactors[value]
        else:
            history = list(history)
            _grow(history, n, op, value, open_calls)
        items = wire(history)
        remembered = chosen.run(items, format, memory=memory)
        _same(remembered, chosen.run(items, format))


class _Followed:
    """Counts the calls answered from the kept window (wraps the real step)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        done = window_result(*args, **kwargs)
        self.count += done is not None
        return done


@settings(max_examples=10, deadline=None)
@given(
    system=st.booleans(),
    rounds=st.lists(st.tuples(st.integers(1, 30), st.integers(1, 3)), min_size=12, max_size=30),
    format=st.sampled_from(["openai-chat", "openai-responses"]),
)
def test_a_loop_that_only_grows_over_budget_reads_only_the_window(
    system: bool, rounds: list[tuple[int, int]], format: str
) -> None:
    """After the first compacting call, each call of a loop that appends a tool round and
    the next request runs on the kept window (and equals a fresh run), also when the
    window holds parallel calls whose results are apart from their calls (the Responses
    format's one item per call)."""
    wire = _InFormat(format)
    compactor = Compactor.from_config(
        {
            "type": "truncation",
            "trigger": {"op": "exceed", "metric": "tokens", "n": 300},
            "minimum_preserved": 2,
        }
    )
    memory = LoopMemory()
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}] if system else []
    for n in range(20):
        _grow(history, n, "user", 5, [])
        _grow(history, n, "tools", 20, [])
    compactor.run(wire(history), format, memory=memory)  # the first call runs in full
    followed = _Followed()
    with (
        patch("compactlens.integrations.compactor.window_result", followed),
        patch("compactlens.integrations.compactor.listening", return_value=False),
    ):
        for n, (size, calls) in enumerate(rounds, start=20):
            history = list(history)
            _grow(
                history, n, "parallel" if calls > 1 else "tools", calls if calls > 1 else size, []
            )
            _grow(history, n, "user", size, [])
            items = wire(history)
            remembered = compactor.run(items, format, memory=memory)
            _same(remembered, compactor.run(items, format))
    assert followed.count == len(rounds)


def test_parallel_calls_in_the_responses_format_follow_the_window_until_a_rewind_or_edit() -> None:
    """Parallel calls in the Responses format (one item per call, results apart from their
    calls): a call after a tool round and the next request runs on the kept window; a
    rewind past the window's start, or an edit inside the dropped prefix, is a full run.
    Every call equals a fresh run."""
    compactor = Compactor.from_config(
        {
            "type": "truncation",
            "trigger": {"op": "exceed", "metric": "tokens", "n": 300},
            "minimum_preserved": 2,
        }
    )
    wire = _InFormat("openai-responses")
    memory = LoopMemory()
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for n in range(20):
        _grow(history, n, "user", 5, [])
        _grow(history, n, "parallel", 3, [])
    followed = _Followed()

    def call(expect_window: bool) -> None:
        before = followed.count
        items = wire(history)
        remembered = compactor.run(items, "openai-responses", memory=memory)
        _same(remembered, compactor.run(items, "openai-responses"))
        assert followed.count == before + expect_window

    with (
        patch("compactlens.integrations.compactor.window_result", followed),
        patch("compactlens.integrations.compactor.listening", return_value=False),
    ):
        call(False)  # the first call runs in full
        for n in range(20, 23):
            history = list(history)
            _grow(history, n, "parallel", 3, [])
            _grow(history, n, "user", 5, [])
            call(True)
        history = history[:40]  # a rewind far past the window's start
        call(False)
        history = list(history)
        _grow(history, 23, "parallel", 4, [])
        _grow(history, 23, "user", 5, [])
        call(True)
        history = [history[0], {"role": "user", "content": "edited"}, *history[2:]]
        call(False)  # an edit inside the dropped prefix


@settings(max_examples=10, deadline=None)
@given(shape=st.sampled_from(SHAPES), sizes=st.lists(st.integers(4, 12), min_size=10, max_size=14))
def test_a_call_over_budget_after_an_idle_stretch_equals_a_fresh_run(
    shape: Shape, sizes: list[int]
) -> None:
    """An idle loop keeps no messages between calls; the first call that runs the engine
    after the idle calls reads the history again and answers as a fresh run."""
    compactor = Compactor.from_config(
        {
            "type": "truncation",
            "trigger": {"op": "exceed", "metric": "tokens", "n": 200},
            "minimum_preserved": 2,
        }
    )
    memory = LoopMemory()
    history: list[dict[str, Any]] = []
    quiet = engine = 0
    with patch("compactlens.integrations.compactor.listening", return_value=False):
        for n, size in enumerate(sizes):
            history = [*history, *shape.user(f"q{n}"), *shape.tools(n, size)]
            run = compactor.run(history, shape.format, memory=memory)
            _same(run, compactor.run(history, shape.format))
            if run.result is None:
                quiet += 1
            elif quiet >= 2:
                engine += 1
    assert quiet >= 2 and engine >= 1, "no call over budget after two idle ones"


@settings(max_examples=10, deadline=None)
@given(shape=st.sampled_from(SHAPES), sizes=st.lists(st.integers(4, 12), min_size=4, max_size=10))
def test_a_first_call_with_nothing_to_do_keeps_no_messages(shape: Shape, sizes: list[int]) -> None:
    """A first call (a full run) that leaves the history unchanged and whose trigger the
    running totals keep quiet keeps only the items and totals, not the messages it read
    (an idle loop would otherwise free them all at once in a later call); the calls after
    it, idle or over budget, still answer as fresh runs."""
    compactor = Compactor.from_config(
        {
            "type": "truncation",
            "trigger": {"op": "exceed", "metric": "tokens", "n": 200},
            "minimum_preserved": 2,
        }
    )
    memory = LoopMemory()
    history = [*shape.user("q"), *shape.tools(0, 2)]
    with patch("compactlens.integrations.compactor.listening", return_value=False):
        first = compactor.run(history, shape.format, memory=memory)
        assert first.status == "unchanged" and first.result is not None  # a full run
        assert memory.counts == []
        for n, size in enumerate(sizes, start=1):
            history = [*history, *shape.user(f"q{n}"), *shape.tools(n, size)]
            run = compactor.run(history, shape.format, memory=memory)
            _same(run, compactor.run(history, shape.format))
