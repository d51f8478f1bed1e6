"""Transcript builders, invariant checks and hypothesis strategies for engine tests.

Other test authors may import this module (it lives next to the engine tests; put
``tests/engine`` on ``sys.path`` or run from a test module in this directory).

Builders return OpenAI Chat Completions wire dicts, the format the corpus uses:

>>> convo = [system("rules"), user("hi"), calls(call("c1", "get_weather")), result("c1", "sunny")]

The invariant helpers take the *input* (wire dicts or messages) and a
:class:`~compactlens.engine.result.CompactionResult` and raise ``AssertionError`` with a
readable message when an engine promise is broken.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from compactlens import (
    CompactionResult,
    Message,
    MessageIndex,
    PipelineStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    Strategy,
    SummarizationStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    tokens_exceed,
    turns_exceed,
    validate_pairing,
)
from compactlens.formats import from_caller
from compactlens.summarizers import FakeSummarizer

Wire = dict[str, Any]

# --------------------------------------------------------------------------- builders


def stable(value: Any) -> Any:
    """A result's ``to_dict()`` without its timings (``duration_ms``), for comparing runs."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list | tuple):
        return [stable(v) for v in value]
    return value


def system(text: str = "You are a helpful assistant.") -> Wire:
    return {"role": "system", "content": text}


def user(text: str) -> Wire:
    return {"role": "user", "content": text}


def assistant(text: str) -> Wire:
    return {"role": "assistant", "content": text}


def reasoning(text: str) -> Wire:
    """A reasoning-only assistant message (no text, no calls)."""
    return {"role": "assistant", "content": None, "reasoning_content": text}


def call(call_id: str, name: str = "tool", arguments: str = "{}") -> Wire:
    """One tool call, for :func:`calls`."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def calls(*tool_calls: Wire, content: str | None = None) -> Wire:
    """An assistant message making one or more (parallel) tool calls."""
    return {"role": "assistant", "content": content, "tool_calls": list(tool_calls)}


def result(call_id: str, output: str) -> Wire:
    """The tool message answering ``call_id``."""
    return {"role": "tool", "tool_call_id": call_id, "content": output}


def to_messages(wire: Sequence[Wire]) -> list[Message]:
    """Wire dicts as canonical :class:`Message` objects (each keeps its wire dict)."""
    return list(from_caller(list(wire)).messages)


def index_of(items: Sequence[Any], tokenizer: Any = None) -> MessageIndex:
    """Build a :class:`MessageIndex` over wire dicts or messages."""
    return MessageIndex.build(from_caller(list(items)).messages, tokenizer)


def weather_transcript() -> list[Wire]:
    """A small transcript with every group kind but ``summary``, used by many scenarios.

    Groups: 0 system, 1 user, 2 tool_call (two parallel calls), 3 assistant_text,
    4 user, 5 tool_call, 6 assistant_text.
    """
    return [
        system("You are a weather bot. " * 4),
        user("What is the weather in Paris, and do we have docs on umbrellas?"),
        calls(call("w1", "get_weather", '{"city": "Paris"}'), call("d1", "search_docs")),
        result("w1", "sunny, 18°C"),
        result("d1", "found 3 docs"),
        assistant("It is sunny and 18°C in Paris. I found 3 documents about umbrellas."),
        user("And in Oslo?"),
        calls(call("w2", "get_weather", '{"city": "Oslo"}')),
        result("w2", "rain, 7°C"),
        assistant("Rain and 7°C in Oslo."),
    ]


def long_chat(turns: int, size: int = 200, *, with_system: bool = True) -> list[Wire]:
    """``turns`` user/assistant exchanges of about ``size`` characters each."""
    out: list[Wire] = [system("Be brief.")] if with_system else []
    for t in range(turns):
        out.append(user(f"question {t} " + "q" * size))
        out.append(assistant(f"answer {t} " + "a" * size))
    return out


def tool_chat(groups: int, size: int = 300) -> list[Wire]:
    """A user question answered by ``groups`` tool-call groups and a final answer."""
    out: list[Wire] = [system("Use tools."), user("Investigate.")]
    for g in range(groups):
        out.append(calls(call(f"c{g}", f"tool_{g}", f'{{"step": {g}}}')))
        out.append(result(f"c{g}", f"output {g} " + "r" * size))
    out.append(assistant("Done."))
    return out


# --------------------------------------------------------------------------- invariants


def snapshot(items: Sequence[Any]) -> list[Any]:
    """A deep copy of the caller's input, to compare with after a run."""
    return copy.deepcopy(list(items))


def assert_not_mutated(before: list[Any], items: Sequence[Any]) -> None:
    """The caller's list and every dict in it are unchanged (Message objects are frozen)."""
    assert list(items) == before, "the caller's input was mutated"


def _problem_counts(items: Sequence[Any], kinds: tuple[str, ...]) -> Counter[tuple[str, str]]:
    return Counter((p.kind, p.call_id) for p in validate_pairing(items) if p.kind in kinds)


def assert_pairing_preserved(items: Sequence[Any], res: CompactionResult) -> None:
    """No new orphan result or split pair, and every group kept whole or not at all.

    Group atomicity is checked by identity: each input message that survives
    unchanged is the very same object in ``res.projection``; a group must either
    survive entirely or be entirely gone (excluded, collapsed or summarized).
    """
    kinds = ("orphan_result", "split_pair")
    before = _problem_counts(items, kinds)
    after = _problem_counts(res.messages, kinds)
    new = after - before
    assert not new, f"compaction created pairing problems {sorted(new)}"
    after_projection = _problem_counts(res.projection, kinds)
    assert not (after_projection - before), "projection has new pairing problems"
    assert res.problems == tuple(validate_pairing(res.projection)), (
        "result.problems does not match validate_pairing(projection)"
    )
    msgs = from_caller(list(items)).messages
    index = MessageIndex.build(msgs)
    present = survivors(res)
    # A clamped group keeps its messages one for one, some of them shortened copies.
    clamped = {d.group_id for d in res.decisions if d.reason.startswith("clamped")}
    for group in index.groups:
        if group.id in clamped:
            continue
        kept = [id(items[k]) in present for k in group.indices]
        assert all(kept) or not any(kept), (
            f"group {group.id} ({group.kind.value}, messages {group.indices}) was split: "
            f"kept flags {kept}"
        )


def survivors(res: CompactionResult) -> set[int]:
    """Ids of the output objects (unchanged inputs come back as the very same objects)."""
    return {id(m) for m in res.messages}


def assert_systems_kept(items: Sequence[Any], res: CompactionResult) -> None:
    msgs = from_caller(list(items)).messages
    present = survivors(res)
    for k, m in enumerate(msgs):
        if m.is_system:
            assert id(items[k]) in present, f"system message {k} was dropped"


def assert_same_kind(items: Sequence[Any], res: CompactionResult) -> None:
    """Output messages are of the input's kind; surviving originals are the same objects."""
    originals = {id(x) for x in items}
    if items and all(isinstance(x, Message) for x in items):
        assert all(isinstance(m, Message) for m in res.messages)
    else:
        assert all(isinstance(m, dict) for m in res.messages)
    assert len(res.messages) == len(res.projection)
    for out, proj in zip(res.messages, res.projection, strict=True):
        if proj.wire is not None and id(proj.wire) in originals:
            assert out is proj.wire
        if id(proj) in originals:
            assert out is proj


def assert_consistent(items: Sequence[Any], res: CompactionResult, tokenizer: Any = None) -> None:
    """Counts in the result agree with an independent recount of the output."""
    before = index_of(items, tokenizer)
    assert res.tokens_before == before.total_tokens
    assert res.messages_before == before.total_messages
    assert res.messages_after == len(res.messages)
    recount = MessageIndex.build(res.projection, tokenizer)
    assert res.tokens_after == recount.total_tokens, (
        f"tokens_after {res.tokens_after} but the output counts {recount.total_tokens}"
    )
    if res.status == "unchanged":
        assert len(res.messages) == len(items)
        assert all(a is b for a, b in zip(res.messages, items, strict=True))
    parsed = json.loads(res.to_json())
    assert parsed["status"] == res.status
    assert len(parsed["messages"]) == len(res.messages)


def check_all(
    items: Sequence[Any],
    res: CompactionResult,
    *,
    systems: bool = True,
    tokenizer: Any = None,
) -> None:
    """Every generic invariant at once (pairing, kinds, counts; systems when promised)."""
    assert_pairing_preserved(items, res)
    assert_same_kind(items, res)
    assert_consistent(items, res, tokenizer)
    if systems:
        assert_systems_kept(items, res)
    if res.status == "cannot-fit":
        assert isinstance(res.reason, str) and res.reason.strip()
        assert res.explanation.smallest_target == res.tokens_after
    else:
        assert res.reason is None


# --------------------------------------------------------------------------- counting tokenizer


@dataclass
class CountingTokenizer:
    """Wraps ``CharEstimator`` arithmetic and records every text it is asked to count."""

    counted: list[str]
    name: str = "counting"

    def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        return (len(text) + 3) // 4


# --------------------------------------------------------------------------- hypothesis

_ALPHABET = "abcdefgh xyz.,\n é°🙂"


@st.composite
def texts(draw: st.DrawFn, max_repeat: int = 60) -> str:
    """Short random text, sometimes repeated to make big messages cheaply."""
    base = draw(st.text(alphabet=_ALPHABET, min_size=0, max_size=12))
    return base * draw(st.integers(0, max_repeat))


@st.composite
def transcripts(draw: st.DrawFn, max_events: int = 24) -> list[Wire]:
    """OpenAI Chat transcripts with the awkward cases mixed in.

    Parallel calls, results delivered late (after unrelated messages), results in
    a shuffled order, reused call ids, orphan results, calls that never get a
    result, reasoning-only messages before calls, several system messages.
    """
    out: list[Wire] = []
    deferred: list[Wire] = []
    used_ids: list[str] = []
    serial = 0
    if draw(st.booleans()):
        out.append(system(draw(texts())))
    events = draw(
        st.lists(
            st.sampled_from(
                [
                    "user",
                    "user",
                    "assistant",
                    "calls",
                    "calls",
                    "calls",
                    "reasoning",
                    "deliver",
                    "orphan",
                    "system",
                ]
            ),
            max_size=max_events,
        )
    )
    for event in events:
        if event == "user":
            out.append(user(draw(texts())))
        elif event == "assistant":
            out.append(assistant(draw(texts())))
        elif event == "system":
            out.append(system(draw(texts(max_repeat=10))))
        elif event == "reasoning":
            out.append(reasoning(draw(texts()) or "thinking"))
        elif event == "orphan":
            out.append(result(f"ghost{serial}", draw(texts())))
            serial += 1
        elif event == "deliver" and deferred:
            k = draw(st.integers(1, len(deferred)))
            out.extend(deferred[:k])
            del deferred[:k]
        elif event == "calls":
            if draw(st.integers(0, 4)) == 0:
                out.append(reasoning(draw(texts()) or "plan"))
            n = draw(st.integers(1, 3))
            made: list[Wire] = []
            now: list[Wire] = []
            for _ in range(n):
                if used_ids and draw(st.integers(0, 6)) == 0:
                    call_id = draw(st.sampled_from(used_ids))
                else:
                    call_id = f"call_{serial}"
                    serial += 1
                used_ids.append(call_id)
                name = draw(st.sampled_from(["get_weather", "search_docs", "run", "read_file"]))
                made.append(call(call_id, name, json.dumps({"q": draw(texts(max_repeat=3))})))
                fate = draw(st.sampled_from(["now", "now", "now", "later", "never"]))
                res = result(call_id, draw(texts()))
                if fate == "now":
                    now.append(res)
                elif fate == "later":
                    deferred.append(res)
            out.append(calls(*made, content=draw(st.sampled_from([None, "Let me check."]))))
            out.extend(draw(st.permutations(now)))
    if draw(st.booleans()):
        out.extend(deferred)
    return out


@dataclass(frozen=True)
class Case:
    """A strategy plus what it promises: a token limit when met, and system preservation."""

    strategy: Strategy
    limit: int | None
    keeps_system: bool
    label: str


def _fake(draw: st.DrawFn) -> FakeSummarizer:
    mode = draw(st.sampled_from(["ok", "ok", "ok", "raise", "empty", "length"]))
    if mode == "raise":
        return FakeSummarizer(raises=RuntimeError("model down"))
    if mode == "empty":
        return FakeSummarizer(text="   ")
    if mode == "length":
        return FakeSummarizer(text="cut off", finish_reason="length")
    return FakeSummarizer(text=draw(st.sampled_from(["short", "a longer summary " * 8])))


@st.composite
def leaf_cases(draw: st.DrawFn, total: int, min_preserved: int = 0) -> Case:
    """A single (non-composite) strategy with a token trigger around ``total``.

    ``min_preserved`` is the smallest ``minimum_preserved`` drawn (at least 1 keeps
    every leaf from emptying a transcript).
    """
    n = draw(st.integers(1, max(1, total + 5)))
    kind = draw(
        st.sampled_from(
            [
                "truncation",
                "window_turns",
                "window_tokens",
                "window_groups",
                "tool_results",
                "tool_results_all",
                "selective",
                "selective_all",
                "summarization",
            ]
        )
    )
    mp = draw(st.integers(min_preserved, 4))
    keep = draw(st.integers(0, 2))
    if kind == "truncation":
        keep_sys = draw(st.booleans())
        strat: Strategy = TruncationStrategy(
            trigger=tokens_exceed(n), minimum_preserved=mp, preserve_system=keep_sys
        )
        return Case(strat, n, keep_sys, kind)
    if kind == "window_turns":
        k = draw(st.integers(1, 4))
        return Case(
            SlidingWindowStrategy(keep_last_turns=k, minimum_preserved=mp), None, True, kind
        )
    if kind == "window_tokens":
        return Case(
            SlidingWindowStrategy(trigger=tokens_exceed(n), minimum_preserved=mp), n, True, kind
        )
    if kind == "window_groups":
        k = draw(st.integers(1, 6))
        return Case(SlidingWindowStrategy(keep_last_groups=k), None, True, kind)
    if kind == "tool_results":
        fmt = draw(st.sampled_from(["results", "names"]))
        strat = ToolResultCompactionStrategy(
            trigger=tokens_exceed(n),
            keep_last_tool_call_groups=keep,
            minimum_preserved=mp,
            formatter=fmt,
        )
        return Case(strat, n, True, kind)
    if kind == "tool_results_all":
        return Case(ToolResultCompactionStrategy(keep_last_tool_call_groups=keep), None, True, kind)
    if kind == "selective":
        strat = SelectiveToolCallCompactionStrategy(
            trigger=tokens_exceed(n), keep_last_tool_call_groups=keep, minimum_preserved=mp
        )
        return Case(strat, n, True, kind)
    if kind == "selective_all":
        return Case(
            SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=keep), None, True, kind
        )
    strat = SummarizationStrategy(
        _fake(draw),
        trigger=tokens_exceed(n),
        minimum_preserved=mp,
        max_input_tokens=draw(st.sampled_from([1, 50, 8000])),
    )
    return Case(strat, n, True, kind)


@st.composite
def cases(draw: st.DrawFn, total: int) -> Case:
    """Any strategy, including pipelines, token budgets and turn triggers."""
    shape = draw(st.sampled_from(["leaf", "leaf", "pipeline", "budget", "turns"]))
    if shape == "leaf":
        return draw(leaf_cases(total))
    if shape == "turns":
        k = draw(st.integers(1, 3))
        return Case(
            TruncationStrategy(trigger=turns_exceed(k), minimum_preserved=draw(st.integers(0, 3))),
            None,
            True,
            "truncation_turns",
        )
    children = draw(st.lists(leaf_cases(total), min_size=1, max_size=3))
    if shape == "pipeline":
        pipe = PipelineStrategy(*(c.strategy for c in children))
        return Case(pipe, None, all(c.keeps_system for c in children), "pipeline")
    budget = draw(st.integers(1, max(1, total + 5)))
    drop = draw(st.booleans())
    strat = TokenBudgetComposedStrategy(
        budget,
        strategies=tuple(c.strategy for c in children),
        early_stop=draw(st.booleans()),
        minimum_preserved=draw(st.integers(1, 3)),
        drop_system_if_needed=drop,
    )
    keeps = not drop and all(c.keeps_system for c in children)
    return Case(strat, budget, keeps, "token_budget")
