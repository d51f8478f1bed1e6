"""Per-call cost of our integrations in a growing agent loop (issue 26, item 5).

    python bench/bench_loop.py              # 1,000 and 10,000 turns, update docs/benchmarks.md
    python bench/bench_loop.py --quick      # 100 and 1,000 turns, fewer calls
    python bench/bench_loop.py --no-write   # measure and print only
    python bench/bench_loop.py --modes "over budget" --impls pydantic-ai sdk maf
                                            # only those rows (printed, never written)

An agent calls its compaction hook before every model call, on a history that grew since
the last call. For each history shape and size this benchmark builds the history of
``N`` turns in each framework's own types, makes one call (the *first call*, which a
compactor that remembers has to pay in full), then appends what the agent appends
between model calls (an assistant tool call with its results; then the answer with the
next user request) and times each of the next ``--calls`` calls (at least
:data:`OVER_BUDGET_CALLS` over budget: a call there costs a few milliseconds, and the
median of 3 or 5 of them moved the 10,000 / 1,000 ratio by about 2x between runs). The
per-call figure is the median of those calls: the cost at the end of a loop of ``N``
turns, without running the whole loop.

What is called, per framework (each as the framework calls it):

- LangChain: ``before_model(state, runtime)`` of our ``compaction_middleware`` and of
  LangChain's own ``SummarizationMiddleware`` (with a fake chat model as summarizer). An
  update replaces the state's messages (``RemoveMessage(REMOVE_ALL_MESSAGES)``), so the
  next call sees the compacted history plus what was appended.
- pydantic-ai: our ``history_processor`` on the whole stored ``list[ModelMessage]``
  (the processed list goes to the model; the stored history keeps growing).
- OpenAI Agents SDK: ``get_items()`` of our ``CompactingSession`` over a
  ``SQLiteSession`` (in memory), and of that ``SQLiteSession`` alone; new items go in
  with ``add_items`` of the session the runner holds (ours, which passes them on, or
  the ``SQLiteSession``), as ``Runner.run`` writes them.
- Microsoft Agent Framework: ``await strategy(messages)`` for our
  ``CompactlensStrategy`` and MAF's own ``TruncationStrategy`` (its character
  estimator), on one list that keeps the exclusion marks between calls, as MAF's tool
  loop does.

Modes: *idle* (a truncation far above the history: nothing to do, so the cost is pure
overhead) and *over budget* (truncation to 16,000 tokens, triggered whenever the
history is above that, keeping at least the newest 4 groups; LangChain's own middleware
triggers at 16,000 tokens and keeps 20 messages). Shapes (seeded OpenAI Chat turns,
converted to each framework's types through compactlens's formats): ``tool rounds`` (one
call, a result of 50-600 characters), ``long outputs`` (1-2 calls, 2,000-8,000
characters), ``parallel`` (3-5 calls a turn) and ``reasoning`` (one call, a reasoning
part on both assistant messages).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
REPO = _HERE.parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from bench_timing import replace_section  # noqa: E402
from generate import DEFAULT_SEED, _sentence, _tool_result  # noqa: E402

from compactlens import CharEstimator, TruncationStrategy, load_transcript  # noqa: E402
from compactlens.formats.pydantic_ai import merge_requests  # noqa: E402
from compactlens.integrations import (  # noqa: E402
    CompactingSession,
    CompactlensStrategy,
    Compactor,
    compaction_middleware,
    history_processor,
)

START, END = "<!-- agent-loop:start -->", "<!-- agent-loop:end -->"
SHAPES = ("tool rounds", "long outputs", "parallel", "reasoning")
MODES = ("idle", "over budget")
TARGET = 16_000
#: The fewest timed calls over budget (see the module docstring).
OVER_BUDGET_CALLS = 25
IDLE = 10**12
TOOLS = ("read_file", "grep", "run_shell", "list_dir", "search_docs", "http_get")

#: Implementations, in table order: (name, framework, ours).
IMPLS = (
    ("LangChain SummarizationMiddleware (LangChain's own)", "langchain", False),
    ("our LangChain middleware", "langchain", True),
    ("our pydantic-ai history processor", "pydantic-ai", True),
    ("SQLiteSession.get_items (Agents SDK's own)", "openai-agents", False),
    ("our CompactingSession.get_items over SQLiteSession", "openai-agents", True),
    ("MAF TruncationStrategy (MAF's own)", "agent-framework", False),
    ("our MAF CompactlensStrategy", "agent-framework", True),
)
LC_OWN, LC_OURS, PAI, SDK_OWN, SDK_OURS, MAF_OWN, MAF_OURS = (i[0] for i in IMPLS)
#: Short names for ``--impls``.
SHORT = dict(
    zip(
        ("langchain-own", "langchain", "pydantic-ai", "sdk-own", "sdk", "maf-own", "maf"),
        (i[0] for i in IMPLS),
        strict=True,
    )
)


# -- histories -------------------------------------------------------------------------


class _Text:
    """A seeded pool of tool-output lines and sentences (generating each output line by
    line would dominate the benchmark's own run time at 10,000 turns)."""

    def __init__(self, rng: random.Random) -> None:
        lines: list[str] = []
        while len(lines) < 4000:
            lines += _tool_result(rng, rng.choice(TOOLS)).splitlines()
        self.lines = lines
        self.sentences = [_sentence(rng) for _ in range(1000)]

    def output(self, rng: random.Random, lo: int, hi: int) -> str:
        size = round(math.exp(rng.uniform(math.log(lo), math.log(hi))))
        start = rng.randrange(len(self.lines))
        parts: list[str] = []
        length = 0
        while length < size:
            line = self.lines[(start + len(parts)) % len(self.lines)]
            parts.append(line)
            length += len(line) + 1
        return "\n".join(parts)[:size]

    def sentence(self, rng: random.Random, n: int = 1) -> str:
        return " ".join(rng.choice(self.sentences) for _ in range(n))


def turns(shape: str, count: int, seed: int = DEFAULT_SEED) -> list[list[dict[str, Any]]]:
    """``count`` turns of ``shape`` as OpenAI Chat dicts: ``[user, assistant with calls,
    results..., answer]`` each (the first turn starts with the system prompt)."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; choose from {', '.join(SHAPES)}")
    rng = random.Random(f"{seed}/{shape}")
    text = _Text(rng)
    calls_per_turn, lo, hi = {
        "tool rounds": ((1, 1), 50, 600),
        "long outputs": ((1, 2), 2_000, 8_000),
        "parallel": ((3, 5), 100, 1_500),
        "reasoning": ((1, 1), 50, 600),
    }[shape]
    reasoning = shape == "reasoning"
    out: list[list[dict[str, Any]]] = []
    for t in range(count):
        turn: list[dict[str, Any]] = []
        if t == 0:
            system = "You are a coding agent. " + text.sentence(rng)
            turn.append({"role": "system", "content": system})
        turn.append({"role": "user", "content": text.sentence(rng, 2)})
        calls = [
            {
                "id": f"call_{t}_{k}",
                "type": "function",
                "function": {
                    "name": rng.choice(TOOLS),
                    "arguments": f'{{"query": "{rng.choice(text.sentences)[:40]}"}}',
                },
            }
            for k in range(rng.randint(*calls_per_turn))
        ]
        asking: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
        answer: dict[str, Any] = {"role": "assistant", "content": text.sentence(rng, 2)}
        if reasoning:
            asking["reasoning_content"] = text.sentence(rng, 3)
            answer["reasoning_content"] = text.sentence(rng, 2)
        turn.append(asking)
        turn += [
            {"role": "tool", "tool_call_id": c["id"], "content": text.output(rng, lo, hi)}
            for c in calls
        ]
        turn.append(answer)
        out.append(turn)
    return out


@dataclass(frozen=True, slots=True)
class Loop:
    """A history at a model-call point (``prefix``: ``size`` whole turns and the next user
    request) and what the agent appends before each of the next calls (``steps``)."""

    shape: str
    size: int
    prefix: list[dict[str, Any]]
    steps: list[list[dict[str, Any]]]


def make_loop(shape: str, size: int, calls: int) -> Loop:
    """``size`` turns and the next ``calls`` model-call steps of ``shape``."""
    extra = calls // 2 + 2
    all_turns = turns(shape, size + extra)
    prefix = [m for turn in all_turns[:size] for m in turn] + [all_turns[size][0]]
    steps: list[list[dict[str, Any]]] = []
    for k in range(size, size + extra - 1):
        turn, following = all_turns[k], all_turns[k + 1]
        steps.append(turn[1:-1])  # the assistant's calls and their results
        steps.append([turn[-1], following[0]])  # the answer and the next request
    return Loop(shape, size, prefix, steps[:calls])


_WIRE: dict[tuple[int, str], tuple[list[dict[str, Any]], list[Any]]] = {}


def wire(dicts: list[dict[str, Any]], format: str) -> list[Any]:
    """``dicts`` in ``format``'s wire form, through compactlens's own converter (kept for
    the loop's other drivers, keyed by the list's identity while it lives)."""
    if not dicts:
        return []
    known = _WIRE.get((id(dicts), format))
    if known is not None and known[0] is dicts:
        return known[1]
    items, _ = load_transcript(dicts, "openai-chat").to_wire(format)
    out = merge_requests(items) if format == "pydantic-ai" else items
    _WIRE[(id(dicts), format)] = (dicts, out)
    return out


# -- the framework drivers -------------------------------------------------------------


def _compactor(mode: str) -> Compactor:
    """Truncation in tokens (``max_n`` / ``compact_to`` count messages without a tokenizer)."""
    limit = IDLE if mode == "idle" else TARGET
    strategy = TruncationStrategy(max_n=limit, compact_to=limit, minimum_preserved=4)
    return Compactor(strategy=strategy, tokenizer=CharEstimator())


class Driver:
    """One framework's history and hook: ``append`` what the agent adds, ``call`` the hook."""

    def append(self, dicts: list[dict[str, Any]]) -> None:
        raise NotImplementedError

    def call(self) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the driver holds."""

    def drop_hook(self) -> None:
        """Drop the integration, keeping the framework's history (what the framework keeps
        between calls), so that what the integration held can be measured."""
        raise NotImplementedError


class LangChainDriver(Driver):
    def __init__(self, middleware: Any, prefix: list[dict[str, Any]]) -> None:
        from langchain_core.messages import messages_from_dict

        self._from_dict = messages_from_dict
        self.middleware = middleware
        self.messages: list[Any] = []
        self.next_id = 0
        self.append(prefix)

    def append(self, dicts: list[dict[str, Any]]) -> None:
        for message in self._from_dict(wire(dicts, "langchain")):
            message.id = f"m{self.next_id}"  # LangGraph gives every state message an id
            self.next_id += 1
            self.messages.append(message)

    def call(self) -> Any:
        update = self.middleware.before_model({"messages": self.messages}, None)
        if update is not None:
            self.messages = list(update["messages"][1:])  # after RemoveMessage(ALL)
        return update

    def drop_hook(self) -> None:
        self.middleware = None


class PydanticAIDriver(Driver):
    def __init__(self, mode: str, prefix: list[dict[str, Any]]) -> None:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        self._adapter = ModelMessagesTypeAdapter
        self.process = history_processor(_compactor(mode))
        self.messages: list[Any] = []
        self.append(prefix)

    def append(self, dicts: list[dict[str, Any]]) -> None:
        self.messages += self._adapter.validate_python(wire(dicts, "pydantic-ai"))

    def call(self) -> Any:
        return self.process(self.messages)

    def drop_hook(self) -> None:
        self.process = None


class AgentsSDKDriver(Driver):
    def __init__(self, mode: str | None, prefix: list[dict[str, Any]]) -> None:
        from agents import SQLiteSession

        self.loop = asyncio.new_event_loop()
        self.stored = SQLiteSession(f"bench-{id(self)}")
        self.session: Any = (
            self.stored if mode is None else CompactingSession(self.stored, _compactor(mode))
        )
        self.append(prefix)

    def append(self, dicts: list[dict[str, Any]]) -> None:
        if dicts:
            items = wire(dicts, "openai-responses")
            self.loop.run_until_complete(self.session.add_items(items))

    def call(self) -> Any:
        return self.loop.run_until_complete(self.session.get_items())

    def drop_hook(self) -> None:
        self.session = None

    def close(self) -> None:
        self.stored.close()
        self.loop.close()


class AgentFrameworkDriver(Driver):
    def __init__(self, strategy: Any, prefix: list[dict[str, Any]]) -> None:
        from agent_framework import Message

        self._message = Message
        self.loop = asyncio.new_event_loop()
        self.strategy = strategy
        self.messages: list[Any] = []
        self.append(prefix)

    def append(self, dicts: list[dict[str, Any]]) -> None:
        self.messages += [self._message.from_dict(d) for d in wire(dicts, "agent-framework")]

    def call(self) -> Any:
        return self.loop.run_until_complete(self.strategy(self.messages))

    def drop_hook(self) -> None:
        self.strategy = None

    def close(self) -> None:
        self.loop.close()


def _langchain_own(mode: str) -> Any:
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(responses=["A summary of the conversation so far."])
    trigger = ("tokens", IDLE if mode == "idle" else TARGET)
    return SummarizationMiddleware(model, trigger=trigger, keep=("messages", 20))


def _maf_own(mode: str) -> Any:
    from agent_framework._compaction import CharacterEstimatorTokenizer
    from agent_framework._compaction import TruncationStrategy as MafTruncation

    limit = IDLE if mode == "idle" else TARGET
    return MafTruncation(max_n=limit, compact_to=limit, tokenizer=CharacterEstimatorTokenizer())


def driver(impl: str, mode: str, prefix: list[dict[str, Any]]) -> Driver:
    """The driver of ``impl`` (one of :data:`IMPLS`' names) in ``mode`` on ``prefix``."""
    if impl == LC_OWN:
        return LangChainDriver(_langchain_own(mode), prefix)
    if impl == LC_OURS:
        return LangChainDriver(compaction_middleware(_compactor(mode)), prefix)
    if impl == PAI:
        return PydanticAIDriver(mode, prefix)
    if impl == SDK_OWN:
        return AgentsSDKDriver(None, prefix)
    if impl == SDK_OURS:
        return AgentsSDKDriver(mode, prefix)
    if impl == MAF_OWN:
        return AgentFrameworkDriver(_maf_own(mode), prefix)
    if impl == MAF_OURS:
        return AgentFrameworkDriver(CompactlensStrategy(_compactor(mode)), prefix)
    raise ValueError(f"unknown implementation {impl!r}")


# -- measuring -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    shape: str
    size: int
    impl: str
    mode: str
    first_ms: float
    first_cpu_ms: float
    call_ms: float
    cpu_ms: float
    calls: int


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return (time.perf_counter() - wall) * 1000.0, (time.process_time() - cpu) * 1000.0


def timed_calls(mode: str, calls: int) -> int:
    """How many calls to time in ``mode`` when ``calls`` were asked for."""
    return max(calls, OVER_BUDGET_CALLS) if mode == "over budget" else calls


def measure_loop(loop: Loop, impl: str, mode: str, calls: int | None = None) -> Row:
    """Build ``impl``'s history, make the first call, then time one call after each of the
    first ``calls`` steps (every step by default)."""
    d = driver(impl, mode, loop.prefix)
    try:
        gc.collect()
        first, first_cpu = _timed(d.call)
        walls: list[float] = []
        cpus: list[float] = []
        for step in loop.steps[:calls]:
            d.append(step)
            wall, cpu = _timed(d.call)
            walls.append(wall)
            cpus.append(cpu)
    finally:
        d.close()
    return Row(
        loop.shape,
        loop.size,
        impl,
        mode,
        first,
        first_cpu,
        statistics.median(walls),
        statistics.median(cpus),
        len(walls),
    )


def measure_all(
    sizes: Sequence[int],
    shapes: Sequence[str],
    calls: int,
    impls: Sequence[str] | None = None,
    modes: Sequence[str] = MODES,
) -> Iterator[Row]:
    chosen = [name for name, _, _ in IMPLS if impls is None or name in impls]
    _import_frameworks()
    for shape in shapes:
        for size in sizes:
            loop = make_loop(shape, size, max(timed_calls(mode, calls) for mode in modes))
            for mode in modes:
                for impl in chosen:
                    row = measure_loop(loop, impl, mode, timed_calls(mode, calls))
                    print(row, flush=True)
                    yield row
            del loop
            _WIRE.clear()
            gc.collect()


#: Our integrations, with the wire format they keep the history in.
MEMORY_IMPLS = {
    LC_OURS: "langchain",
    PAI: "pydantic-ai",
    SDK_OURS: "openai-responses",
    MAF_OURS: "agent-framework",
}


@dataclass(frozen=True, slots=True)
class MemoryRow:
    shape: str
    size: int
    impl: str
    parsed: int  # bytes of the history's wire dicts, parsed from JSON
    kept: int  # bytes the integration holds between calls


def _traced_now() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def parsed_size(dicts: list[dict[str, Any]], format: str) -> int:
    """Bytes of ``dicts`` in ``format``'s wire form as ``json.loads`` builds them."""
    text = json.dumps(wire(dicts, format))
    tracemalloc.start()
    try:
        before = _traced_now()
        parsed = json.loads(text)
        size = _traced_now() - before
        del parsed
    finally:
        tracemalloc.stop()
    return size


def measure_memory(loop: Loop, impl: str) -> MemoryRow:
    """What ``impl`` (idle) holds after the loop's calls: the memory traced with the
    integration minus after dropping it (the framework's history and store stay)."""
    history = loop.prefix + [m for step in loop.steps for m in step]
    parsed = parsed_size(history, MEMORY_IMPLS[impl])
    _WIRE.clear()
    tracemalloc.start()
    try:
        d = driver(impl, "idle", loop.prefix)
        try:
            d.call()
            for step in loop.steps:
                d.append(step)
                d.call()
            holding = _traced_now()
            d.drop_hook()
            kept = holding - _traced_now()
        finally:
            d.close()
    finally:
        tracemalloc.stop()
    return MemoryRow(loop.shape, loop.size, impl, parsed, kept)


def measure_memory_all(
    size: int, shapes: Sequence[str], calls: int, impls: Sequence[str] | None = None
) -> Iterator[MemoryRow]:
    chosen = [name for name in MEMORY_IMPLS if impls is None or name in impls]
    for shape in shapes:
        loop = make_loop(shape, size, calls)
        for impl in chosen:
            row = measure_memory(loop, impl)
            print(row, flush=True)
            yield row
        _WIRE.clear()
        gc.collect()


def _import_frameworks() -> None:
    """Import every framework first and move what the imports made out of the
    collector's way (``gc.freeze``), as a long-running agent's process has it: a full
    collection then scans the history and the integrations' state, not the modules."""
    for name, _, _ in IMPLS:
        driver(name, "idle", []).close()
    gc.collect()
    gc.freeze()


# -- the report ------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.3g}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or not b else f"{a / b:.2f}x" if a / b < 10 else f"{a / b:,.0f}x"


def memory_lines(rows: Sequence[MemoryRow], calls: int) -> list[str]:
    """The memory table (empty without rows)."""
    if not rows:
        return []
    size = max(r.size for r in rows)
    lines = [
        "",
        f"Memory an integration keeps between calls (idle, {size:,} turns, after the first "
        f"call and {calls} more): the memory traced (`tracemalloc`) with the integration "
        "minus after dropping it (the framework's own history, or the Agents SDK's "
        "`SQLiteSession`, stays), beside the history's wire dicts as `json.loads` builds "
        "them (*parsed*).",
        "",
        "| shape | implementation | parsed MB | kept MB | kept / parsed |",
        "| --- | --- | --: | --: | --: |",
    ]
    for r in rows:
        mb = 1024 * 1024
        lines.append(
            f"| {r.shape} | {r.impl} | {r.parsed / mb:,.1f} | {r.kept / mb:,.1f} "
            f"| {r.kept / r.parsed:.2f}x |"
        )
    return lines


def section(
    rows: Sequence[Row],
    sizes: Sequence[int],
    calls: int,
    memory: Sequence[MemoryRow] = (),
) -> str:
    small, large = min(sizes), max(sizes)
    by = {(r.shape, r.size, r.impl, r.mode): r for r in rows}
    shapes = [s for s in SHAPES if any(r.shape == s for r in rows)]
    lines = [
        START,
        "## The agent loop (issue 26)",
        "",
        f"`python bench/bench_loop.py`: the per-call cost of each integration at the end of a "
        f"loop of {small:,} and {large:,} turns, the median of {calls} calls "
        f"({timed_calls('over budget', calls)} over budget), each after "
        "appending what an agent appends between model calls (a tool call with its results; "
        "an answer with the next request). *First call* is the call on the history as "
        "loaded, before the timed ones. *Idle*: a truncation far above the history (pure "
        f"overhead); *over budget*: truncation to {TARGET:,} tokens whenever the history is "
        "above it. LangChain replaces the state with the compacted history, so after its "
        "first call over budget it works on a short history; pydantic-ai and the Agents SDK "
        "hand the integration the whole stored history on every call; MAF keeps its "
        "exclusion marks on the list. The Agents SDK rows time `get_items()`, so ours "
        "includes the wrapped `SQLiteSession`'s own read (the *+ over SQLite* column is the "
        "difference). Ratios: *vs LangChain's own* divides by "
        "`SummarizationMiddleware.before_model` idle, same shape and size (over budget it "
        "summarizes once and then idles on a short history, so a ratio would say nothing), "
        "*vs MAF's own* by MAF's `TruncationStrategy` in the same mode. Medians of process "
        "CPU milliseconds (the machine "
        "is shared with other work, which stretches wall-clock time but hardly CPU time; "
        "the run prints wall-clock medians too); one run.",
        "",
        f"| shape | implementation | mode | {small:,} turns ms | {large:,} turns ms "
        f"| {large:,} / {small:,} | first call at {large:,} ms | + over SQLite at {large:,} "
        f"| vs LangChain's own at {large:,} | vs MAF's own at {large:,} |",
        "| --- | --- | --- | --: | --: | --: | --: | --: | --: | --: |",
    ]
    for shape in shapes:
        for mode in MODES:
            for impl, framework, ours in IMPLS:
                big = by.get((shape, large, impl, mode))
                little = by.get((shape, small, impl, mode))
                if big is None and little is None:
                    continue
                lc = by.get((shape, large, LC_OWN, mode))
                maf = by.get((shape, large, MAF_OWN, mode))
                sqlite = by.get((shape, large, SDK_OWN, mode))
                call = big.cpu_ms if big else None
                extra = (
                    _ms(call - sqlite.cpu_ms)
                    if impl == SDK_OURS and call is not None and sqlite
                    else ""
                )
                cells = (
                    _ms(little.cpu_ms if little else None),
                    _ms(call),
                    _ratio(call, little.cpu_ms if little else None) if small != large else "-",
                    _ms(big.first_cpu_ms if big else None),
                    extra,
                    _ratio(call, lc.cpu_ms if lc else None)
                    if mode == "idle" and (ours or impl == LC_OWN)
                    else "",
                    _ratio(call, maf.cpu_ms if maf else None)
                    if framework == "agent-framework"
                    else "",
                )
                lines.append(f"| {shape} | {impl} | {mode} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Goals (issue 26): idle per-call overhead at 10,000 turns at most 0.1x LangChain's "
        "own middleware for every integration; compacting every call at 10,000 turns at "
        "most 2x its cost at 1,000 turns; the first call no slower than before; memory "
        "kept between calls at most 1x the history's parsed size.",
        *memory_lines(memory, calls),
        END,
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--calls", type=int, default=None, help="timed calls per loop")
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 turns, 3 calls")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument(
        "--impls",
        nargs="+",
        choices=list(SHORT),
        default=None,
        help="only these implementations (a partial run prints, never writes the table)",
    )
    parser.add_argument(
        "--no-memory", action="store_true", help="skip the memory table (tracemalloc)"
    )
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([100, 1000] if args.quick else [1000, 10_000])
    calls = args.calls or (3 if args.quick else 5)
    impls = None if args.impls is None else [SHORT[name] for name in args.impls]
    started = time.perf_counter()
    rows = list(measure_all(sizes, args.shapes, calls, impls, args.modes))
    memory = (
        [] if args.no_memory else list(measure_memory_all(max(sizes), args.shapes, calls, impls))
    )
    text = section(rows, sizes, calls, memory)
    print(text)
    print(f"({time.perf_counter() - started:,.0f} s)")
    partial = args.impls is not None or len(args.modes) < len(MODES)
    if not args.no_write and not partial:
        replace_section(args.out, text, START, END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
