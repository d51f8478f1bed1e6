"""Builders for the analysis tests: OpenAI Chat Completions dicts and a small transcript."""

from __future__ import annotations

import json
import math
from typing import Any

Wire = dict[str, Any]


def system(text: str = "You are a careful support agent.") -> Wire:
    return {"role": "system", "content": text}


def user(text: str) -> Wire:
    return {"role": "user", "content": text}


def assistant(text: str | None = None, calls: list[Wire] | None = None) -> Wire:
    msg: Wire = {"role": "assistant", "content": text}
    if calls:
        msg["tool_calls"] = calls
    return msg


def call(call_id: str, name: str, args: dict[str, Any] | None = None) -> Wire:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args or {})},
    }


def result(call_id: str, content: str) -> Wire:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def estimate(role: str, text: str) -> int:
    """CharEstimator's count of a one-text message: ceil(len("role\\ntext") / 4)."""
    return math.ceil(len(f"{role}\n{text}") / 4)


def small_transcript() -> list[Wire]:
    """8 messages; groups: 0 system, 1 user, 2 assistant, 3 user, 4-5 tool call, 6 assistant,
    7 user. Each early message holds facts of its own."""
    return [
        system("You are a careful support agent."),  # 0
        user("My order ORD-48213 never arrived, I ordered it on 2024-03-02."),  # 1
        assistant("Sorry about that. I will look up ORD-48213 for you."),  # 2
        user("Please also check the refund of $129.99 to ana.lopez@example.org."),  # 3
        assistant(None, [call("c1", "lookup_order", {"order_id": "ORD-48213"})]),  # 4
        result("c1", '{"status": "lost", "carrier": "UPS", "tracking": "1Z999AA10123456784"}'),
        assistant("The parcel 1Z999AA10123456784 was lost by the carrier."),  # 6
        user("Then send a replacement to 12 Rua Augusta, Lisbon, please."),  # 7
    ]
