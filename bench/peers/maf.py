"""Time agent-framework-core's compaction on a transcript (run inside bench/.peers/venv).

Usage: ``python bench/peers/maf.py --file T.json --turns N --ops truncation tool_result_collapse``
Prints one JSON line (``bench_timing.Record``) per measurement.

What is timed, per repetition, on a fresh list of ``agent_framework.Message`` objects
converted from the transcript outside the timed region (the strategies annotate and
mutate the list they are given, so a list cannot be reused):

- ``apply_compaction``: ``await agent_framework.apply_compaction(messages, strategy=...,
  tokenizer=CharacterEstimatorTokenizer())``, run to completion on one event loop. This
  is what a caller pays for the first compaction of a transcript: group and token
  annotation of every message, the strategy, and the projection of included messages.
- ``strategy_call``: the ``await strategy(messages)`` part of that same call alone
  (measured by a thin timing wrapper around the strategy), that is with the annotations
  already in place, as on a later call over an annotated list.

Strategies: ``TruncationStrategy(max_n=32000, compact_to=16000, tokenizer=estimator)``
(token-based because a tokenizer is given) and
``ToolResultCompactionStrategy(keep_last_tool_call_groups=1)``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_framework import Content, Message
from agent_framework._compaction import (
    CharacterEstimatorTokenizer,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    included_token_count,
)
from bench_timing import BUDGET_S, Timing, emit, measure, record

IMPL = "agent-framework-core"


def to_maf(dicts: Sequence[dict[str, Any]]) -> list[Message]:
    """OpenAI Chat dicts to agent_framework messages (function_call / function_result)."""
    out: list[Message] = []
    for d in dicts:
        role = d["role"]
        content = d.get("content")
        contents: list[Content] = []
        if role == "tool":
            result = content if isinstance(content, str) else json.dumps(content)
            contents.append(Content.from_function_result(call_id=d["tool_call_id"], result=result))
        else:
            if isinstance(content, str) and content:
                contents.append(Content.from_text(content))
            for call in d.get("tool_calls") or ():
                fn = call["function"]
                contents.append(
                    Content.from_function_call(
                        call_id=call["id"], name=fn["name"], arguments=fn["arguments"]
                    )
                )
        out.append(Message(role=role, contents=contents))
    return out


class TimedStrategy:
    """Wraps a strategy and records how long each ``await strategy(messages)`` takes."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.times_ms: list[float] = []
        self.cpu_ms: list[float] = []

    async def __call__(self, messages: list[Message]) -> bool:
        start_cpu = time.process_time()
        start = time.perf_counter()
        changed = bool(await self.inner(messages))
        self.times_ms.append((time.perf_counter() - start) * 1000.0)
        self.cpu_ms.append((time.process_time() - start_cpu) * 1000.0)
        return changed


def make_strategy(op: str, tokenizer: CharacterEstimatorTokenizer) -> Any:
    if op == "truncation":
        return TruncationStrategy(max_n=32_000, compact_to=16_000, tokenizer=tokenizer)
    if op == "tool_result_collapse":
        return ToolResultCompactionStrategy(keep_last_tool_call_groups=1)
    raise ValueError(f"unknown op {op!r}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time agent-framework-core compaction.")
    parser.add_argument("--file", type=Path, required=True)
    parser.add_argument("--turns", type=int, required=True)
    parser.add_argument("--ops", nargs="+", default=["truncation", "tool_result_collapse"])
    parser.add_argument("--max-reps", type=int, default=25)
    parser.add_argument("--budget", type=float, default=BUDGET_S)
    args = parser.parse_args(argv)
    dicts = json.loads(args.file.read_bytes())["messages"]
    n = len(dicts)
    ver = version(IMPL)
    loop = asyncio.new_event_loop()
    try:
        for op in args.ops:
            tokenizer = CharacterEstimatorTokenizer()
            timed = TimedStrategy(make_strategy(op, tokenizer))
            last: dict[str, Any] = {}

            def run(
                messages: list[Message],
                timed: TimedStrategy = timed,
                tokenizer: CharacterEstimatorTokenizer = tokenizer,
            ) -> list[Message]:
                return loop.run_until_complete(
                    apply_compaction(messages, strategy=timed, tokenizer=tokenizer)
                )

            def fresh(last: dict[str, Any] = last) -> tuple[list[Message]]:
                messages = to_maf(dicts)
                last["messages"] = messages
                return (messages,)

            t = measure(run, fresh, budget_s=args.budget, max_reps=args.max_reps)
            projected = t.value
            extra = {
                "messages_after": len(projected),
                "tokens_after": included_token_count(last["messages"]),
                "status": "compacted" if len(projected) < n else "unchanged",
            }
            emit(record(IMPL, ver, op, "apply_compaction", args.turns, n, t, **extra))
            inner = Timing(tuple(timed.times_ms), cpu_ms=tuple(timed.cpu_ms))
            emit(record(IMPL, ver, op, "strategy_call", args.turns, n, inner, **extra))
            last.clear()
            del projected, t
    finally:
        loop.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
