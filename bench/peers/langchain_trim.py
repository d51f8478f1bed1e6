"""Time langchain-core's ``trim_messages`` on a transcript (run inside bench/.peers/venv).

Usage: ``python bench/peers/langchain_trim.py --file T.json --turns N``
Prints one JSON line (``bench_timing.Record``).

The transcript is converted once, outside the timed region, to ``SystemMessage`` /
``HumanMessage`` / ``AIMessage(tool_calls=...)`` / ``ToolMessage`` (``trim_messages``
does not mutate its input). Timed: ``trim_messages(messages, max_tokens=16000,
token_counter=count_tokens_approximately, strategy="last", include_system=True,
start_on="human", allow_partial=False)``, the documented setup for a valid chat history,
with langchain's own 4-characters-per-token estimator.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_timing import BUDGET_S, emit, measure, record
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately

IMPL = "langchain-core"
MAX_TOKENS = 16_000


def to_langchain(dicts: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for d in dicts:
        role = d["role"]
        content = d.get("content") or ""
        if role == "system":
            out.append(SystemMessage(content))
        elif role == "user":
            out.append(HumanMessage(content))
        elif role == "tool":
            out.append(ToolMessage(content, tool_call_id=d["tool_call_id"]))
        else:
            calls = [
                {
                    "name": c["function"]["name"],
                    "args": json.loads(c["function"]["arguments"] or "{}"),
                    "id": c["id"],
                    "type": "tool_call",
                }
                for c in d.get("tool_calls") or ()
            ]
            out.append(AIMessage(content, tool_calls=calls))
    return out


def trim(messages: list[BaseMessage]) -> list[BaseMessage]:
    return trim_messages(
        messages,
        max_tokens=MAX_TOKENS,
        token_counter=count_tokens_approximately,
        strategy="last",
        include_system=True,
        start_on="human",
        allow_partial=False,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time langchain-core trim_messages.")
    parser.add_argument("--file", type=Path, required=True)
    parser.add_argument("--turns", type=int, required=True)
    parser.add_argument("--ops", nargs="+", default=["truncation"])
    parser.add_argument("--max-reps", type=int, default=25)
    parser.add_argument("--budget", type=float, default=BUDGET_S)
    args = parser.parse_args(argv)
    dicts = json.loads(args.file.read_bytes())["messages"]
    messages = to_langchain(dicts)
    n = len(dicts)
    if "truncation" in args.ops:
        t = measure(trim, lambda: (messages,), budget_s=args.budget, max_reps=args.max_reps)
        kept = t.value
        emit(
            record(
                IMPL,
                version(IMPL),
                "truncation",
                "trim_messages",
                args.turns,
                n,
                t,
                messages_after=len(kept),
                tokens_before=count_tokens_approximately(messages),
                tokens_after=count_tokens_approximately(kept),
                status="compacted" if len(kept) < n else "unchanged",
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
