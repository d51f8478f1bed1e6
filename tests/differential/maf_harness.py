"""Run Microsoft Agent Framework's compaction and ours (maf profile) on the same conversation.

Conversations are seeded random lists of MAF ``Message.to_dict()`` dicts, each with a
``message_id`` ``m<index>``. Both sides count tokens with one shared table: every
original message has a fixed count (MAF looks it up by message id in the serialized
message, we by the message's text), every message a strategy creates (collapsed line,
summary) counts :data:`NEW_MESSAGE_TOKENS`. An outcome is the list of what the model
would see: original message indices, and ``("new", text)`` for created messages (our
summary prefix removed, since the summary's wording is a documented difference).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_framework import ChatResponse
from agent_framework import Message as MafMessage
from agent_framework._compaction import (
    annotate_message_groups,
    annotate_token_counts,
    included_messages,
)

from compactlens.engine.index import MessageIndex
from compactlens.engine.profiles import get_profile
from compactlens.engine.run import run_strategy
from compactlens.engine.strategies.base import Strategy
from compactlens.formats.agent_framework import to_messages
from compactlens.model.messages import SUMMARY_PREFIX, Message, message_text

NEW_MESSAGE_TOKENS = 5
SUMMARY_TEXT = "S: the conversation so far"

Outcome = list[int | tuple[str, str]]


# ------------------------------------------------------------------ conversations


def _text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t, "additional_properties": {}}


def _reasoning(t: str) -> dict[str, Any]:
    return {"type": "text_reasoning", "text": t, "additional_properties": {}}


def _call(call_id: str, name: str, n: int) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": {"n": n},
        "additional_properties": {},
    }


def _result(call_id: str, out: str) -> dict[str, Any]:
    return {
        "type": "function_result",
        "call_id": call_id,
        "result": out,
        "additional_properties": {},
    }


def _msg(role: str, contents: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "role": role, "contents": contents, "additional_properties": {}}


@dataclass
class _Builder:
    rng: random.Random
    out: list[dict[str, Any]] = field(default_factory=list)
    ids: int = 0
    used_ids: list[str] = field(default_factory=list)

    def n(self) -> int:
        return len(self.out)

    def add(self, role: str, contents: list[dict[str, Any]]) -> None:
        self.out.append(_msg(role, contents))

    def call_id(self) -> str:
        # Reused ids: a finished call's id comes back now and then (never while pending).
        if self.used_ids and self.rng.random() < 0.15:
            return self.rng.choice(self.used_ids)
        self.ids += 1
        return f"call_{self.ids}"

    def output(self, call_id: str) -> str:
        """A result text: short, with whitespace runs, or longer than a collapsed line."""
        text = f"out {self.n()} {call_id}"
        roll = self.rng.random()
        if roll < 0.2:
            return f"  {text}\n\n   spaced\tout   "
        if roll < 0.3:
            return f"{text} " + "word  " * self.rng.randint(300, 900)
        return text

    def tool_round(self) -> None:
        rng = self.rng
        if rng.random() < 0.3:
            self.add("assistant", [_reasoning(f"plan {self.n()}")])
        calls = [self.call_id() for _ in range(rng.choice((1, 1, 2, 3)))]
        calls = list(dict.fromkeys(calls))  # parallel calls have distinct ids
        contents: list[dict[str, Any]] = []
        if rng.random() < 0.3:
            contents.append(_reasoning(f"why {self.n()}"))
        if rng.random() < 0.3:
            contents.append(_text(f"let me check {self.n()}"))
        contents.extend(
            _call(c, rng.choice(("get_weather", "search", "read")), self.n()) for c in calls
        )
        self.add("assistant", contents)
        order = list(calls)
        if rng.random() < 0.4:
            rng.shuffle(order)  # out-of-order results
        if len(order) > 1 and rng.random() < 0.3:
            self.add("tool", [_result(c, self.output(c)) for c in order])
        else:
            for c in order:
                self.add("tool", [_result(c, self.output(c))])
        self.used_ids.extend(calls)

    def hosted_round(self) -> None:
        rng = self.rng
        k = self.n()
        kind = rng.choice(("mcp", "mcp", "code", "shell"))
        if kind == "mcp":
            self.add(
                "assistant",
                [
                    {
                        "type": "mcp_server_tool_call",
                        "call_id": f"mcp_{k}",
                        "tool_name": "lookup",
                        "server_name": "docs",
                        "arguments": {"q": f"q{k}"},
                        "additional_properties": {},
                    },
                    {
                        "type": "mcp_server_tool_result",
                        "call_id": f"mcp_{k}",
                        "output": f"mcp out {k}",
                        "additional_properties": {},
                    },
                ],
            )
        elif kind == "code":
            self.add(
                "assistant",
                [
                    {
                        "type": "code_interpreter_tool_call",
                        "call_id": f"ci_{k}",
                        "inputs": [_text(f"print({k})")],
                        "additional_properties": {},
                    }
                ],
            )
        else:
            self.add(
                "assistant",
                [
                    {
                        "type": "shell_tool_call",
                        "call_id": f"sh_{k}",
                        "commands": [f"ls {k}"],
                        "additional_properties": {},
                    }
                ],
            )

    def turn(self) -> None:
        rng = self.rng
        if rng.random() < 0.12:
            self.add("system", [_text(f"note {self.n()}")])  # system mid-conversation
        self.add("user", [_text(f"question {self.n()}")])
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            if rng.random() < 0.25:
                self.hosted_round()
            else:
                self.tool_round()
        if rng.random() < 0.3:
            self.add("assistant", [_reasoning(f"consider {self.n()}")])
        self.add("assistant", [_text(f"answer {self.n()}")])


def conversation(seed: int, turns: int) -> list[dict[str, Any]]:
    """A seeded conversation of MAF message dicts, each with ``message_id`` ``m<index>``."""
    rng = random.Random(seed)
    b = _Builder(rng)
    if rng.random() < 0.8:
        b.add("system", [_text("You are helpful.")])
    for _ in range(turns):
        b.turn()
    for i, d in enumerate(b.out):
        d["message_id"] = f"m{i}"
    return b.out


def token_table(dicts: Sequence[dict[str, Any]], seed: int) -> list[int]:
    """A seeded count per message; messages with the same text get the same count."""
    rng = random.Random(seed * 7919 + 1)
    by_text: dict[str, int] = {}
    return [by_text.setdefault(message_text(m), rng.randint(3, 60)) for m in to_messages(dicts)]


# ------------------------------------------------------------------ shared counting


class MafTable:
    """MAF tokenizer: the count of a serialized message, looked up by its message id."""

    def __init__(self, counts: Sequence[int]) -> None:
        self.counts = counts

    def count_tokens(self, text: str) -> int:
        mid = json.loads(text).get("message_id") or ""
        if mid.startswith("m") and mid[1:].isdigit():
            return self.counts[int(mid[1:])]
        return NEW_MESSAGE_TOKENS


@dataclass(frozen=True)
class OurTable:
    """Our tokenizer: the count of a message's text (originals have distinct texts)."""

    by_text: dict[str, int]
    message_overhead: int = 0
    name: str = "shared-table"

    def count_tokens(self, text: str) -> int:
        return self.by_text.get(text, NEW_MESSAGE_TOKENS)


def our_table(messages: Sequence[Message], counts: Sequence[int]) -> OurTable:
    table: dict[str, int] = {}
    for m, c in zip(messages, counts, strict=True):
        text = message_text(m)
        assert table.setdefault(text, c) == c, f"one text, two counts: {text!r}"
    return OurTable(table)


# ------------------------------------------------------------------ running both


class FixedClient:
    """A MAF chat client that answers every summary request with the same text."""

    def __init__(self) -> None:
        self.calls = 0

    async def get_response(self, messages: Any, *, stream: bool = False, **kw: Any) -> Any:
        self.calls += 1
        return ChatResponse(messages=[MafMessage(role="assistant", contents=[SUMMARY_TEXT])])


def run_maf(
    dicts: Sequence[dict[str, Any]],
    counts: Sequence[int],
    make: Callable[[MafTable], Any],
    *,
    tokens: bool,
) -> Outcome:
    msgs = [MafMessage.from_dict(json.loads(json.dumps(d))) for d in dicts]
    table = MafTable(counts)
    annotate_message_groups(msgs)
    if tokens:
        annotate_token_counts(msgs, tokenizer=table)
    asyncio.run(make(table)(msgs))
    out: Outcome = []
    for m in included_messages(msgs):
        mid = m.message_id or ""
        if mid.startswith("m") and mid[1:].isdigit():
            out.append(int(mid[1:]))
        else:
            out.append(("new", m.text))
    return out


def run_ours(
    dicts: Sequence[dict[str, Any]],
    counts: Sequence[int],
    strategy: Strategy,
    *,
    tokens: bool,
) -> Outcome:
    messages = to_messages(dicts)
    table = our_table(messages, counts)
    index = MessageIndex.build(messages, table, grouping=get_profile("maf").grouping)
    # The public way: run_strategy's profile applies the maf defaults and guards.
    result = run_strategy(index, strategy, tokenizer_given=tokens, profile="maf")
    position = {id(m): i for i, m in enumerate(messages)}
    out: Outcome = []
    for m in result.messages:
        i = position.get(id(m))
        if i is not None:
            out.append(i)
        else:
            text = m.text
            out.append(("new", text.removeprefix(SUMMARY_PREFIX)))
    return out
