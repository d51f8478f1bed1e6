"""Fixtures for the compact()/session tests: message builders and the local chat server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from chat_server import ChatServer

from compactlens import Message
from compactlens.model import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    OpaquePart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)


class Builders:
    """OpenAI Chat dicts and canonical messages for tests."""

    @staticmethod
    def sys(text: str = "You are a careful coding agent.") -> dict[str, Any]:
        return {"role": "system", "content": text}

    @staticmethod
    def user(text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    @staticmethod
    def asst(text: str) -> dict[str, Any]:
        return {"role": "assistant", "content": text}

    @staticmethod
    def call(*ids: str, name: str = "read_file", text: str | None = None) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": text,
            "tool_calls": [
                {
                    "id": i,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps({"path": f"src/{i}.py"})},
                }
                for i in ids
            ],
        }

    @staticmethod
    def result(call_id: str, output: str = "ok") -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": call_id, "content": output}

    @staticmethod
    def image_user(text: str = "look at this") -> dict[str, Any]:
        return {
            "role": "user",
            "content": [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            ],
        }

    @staticmethod
    def chat(n: int, *, size: int = 40, system: bool = True) -> list[dict[str, Any]]:
        """A system message then ``n`` alternating user/assistant messages of ~``size`` chars."""
        out: list[dict[str, Any]] = [Builders.sys()] if system else []
        for i in range(n):
            role = "user" if i % 2 == 0 else "assistant"
            out.append({"role": role, "content": f"m{i} " + "x" * size})
        return out

    # canonical messages -------------------------------------------------------
    @staticmethod
    def m_text(role: Any, text: str) -> Message:
        return Message(role=role, parts=(TextPart(text),))

    @staticmethod
    def m_call(call_id: str, name: str = "deploy") -> Message:
        return Message(role="assistant", parts=(ToolCallPart(call_id, name, "{}"),))

    @staticmethod
    def m_result(call_id: str, output: str = "done") -> Message:
        return Message(role="tool", parts=(ToolResultPart(call_id, output),))

    @staticmethod
    def m_approval_request(approval_id: str, call_id: str | None = None) -> Message:
        return Message(
            role="assistant",
            parts=(ApprovalRequestPart(approval_id, call_id=call_id, name="deploy"),),
        )

    @staticmethod
    def m_approval_response(approval_id: str, approved: bool = True) -> Message:
        return Message(role="user", parts=(ApprovalResponsePart(approval_id, approved),))

    @staticmethod
    def m_media(text: str = "see image") -> Message:
        return Message(
            role="user", parts=(TextPart(text), MediaPart("image", url="https://x/y.png"))
        )

    @staticmethod
    def m_opaque() -> Message:
        return Message(role="assistant", parts=(OpaquePart("anthropic", "redacted_thinking", "z"),))


@pytest.fixture
def b() -> type[Builders]:
    return Builders


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    with ChatServer() as server:
        yield server
