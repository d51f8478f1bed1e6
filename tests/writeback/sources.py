"""Input transcripts for the read-back tests, one per format (not a test module).

Each is accepted by its format's own package before we compact it (the tests check
that first): fixtures for the formats whose packages only validate, and for the
Agent Framework and LangChain documents written by those packages themselves
(``Message.to_dict()``, ``messages_to_dict``), so the input is what they produce.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
FORMAT_FIXTURES = HERE.parent / "fixtures" / "formats"

_LOG = "ERROR: test_utils failed\n" + "trace line\n" * 40
_CONFIG = "jobs:\n  test:\n    runs-on: ubuntu\n" * 10


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def agent_framework_document() -> list[dict[str, Any]]:
    """A tool-using conversation as MAF 1.23 writes it (``Message.to_dict()``)."""
    from agent_framework import Content, Message

    def call(call_id: str, name: str, path: str) -> Any:
        return Content.from_function_call(call_id=call_id, name=name, arguments={"path": path})

    messages = [
        Message(role="system", contents=[Content.from_text("You are a build assistant.")]),
        Message(role="user", contents=[Content.from_text("The nightly build failed.")]),
        Message(
            role="assistant",
            contents=[
                Content.from_text("Reading the log and the config."),
                call("c_log", "read_file", "build.log"),
                call("c_cfg", "read_file", "ci.yaml"),
            ],
        ),
        Message(role="tool", contents=[Content.from_function_result(call_id="c_log", result=_LOG)]),
        Message(
            role="tool", contents=[Content.from_function_result(call_id="c_cfg", result=_CONFIG)]
        ),
        Message(role="assistant", contents=[call("c_test", "read_file", "tests/test_utils.py")]),
        Message(
            role="tool",
            contents=[Content.from_function_result(call_id="c_test", result="def test(): ..." * 9)],
        ),
        Message(role="assistant", contents=[Content.from_text("Fixed parse(); tests pass.")]),
        Message(role="user", contents=[Content.from_text("Thanks. Run the whole suite.")]),
        Message(role="assistant", contents=[Content.from_text("All 120 tests pass.")]),
    ]
    return [m.to_dict() for m in messages]


def langchain_document() -> list[dict[str, Any]]:
    """A tool-using conversation as LangChain writes it (``messages_to_dict``)."""
    from langchain_core.messages import (
        AIMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        messages_to_dict,
    )

    def call(call_id: str, path: str) -> dict[str, Any]:
        return {"id": call_id, "name": "read_file", "args": {"path": path}}

    messages = [
        SystemMessage("You are a build assistant."),
        HumanMessage("The nightly build failed."),
        AIMessage(
            "Reading the log and the config.",
            tool_calls=[call("c_log", "build.log"), call("c_cfg", "ci.yaml")],
        ),
        ToolMessage(_LOG, tool_call_id="c_log", name="read_file"),
        ToolMessage(_CONFIG, tool_call_id="c_cfg", name="read_file"),
        AIMessage("", tool_calls=[call("c_test", "tests/test_utils.py")]),
        ToolMessage("def test(): ..." * 9, tool_call_id="c_test", name="read_file"),
        AIMessage("Fixed parse(); tests pass."),
        HumanMessage("Thanks. Run the whole suite."),
        AIMessage("All 120 tests pass."),
    ]
    return messages_to_dict(messages)


def web_search_document() -> list[dict[str, Any]]:
    """An AI SDK 7 conversation with a provider-executed web search exchange."""
    data: list[dict[str, Any]] = _load(FIXTURES / "ai_sdk_web_search.json")
    return data


def source_documents() -> dict[str, tuple[str, Any]]:
    """format -> (name, wire document) of every format with a reader."""
    return {
        "openai-chat": (
            "openai_chat_request.json",
            _load(FORMAT_FIXTURES / "openai_chat_request.json"),
        ),
        "openai-responses": (
            "openai_responses_items.json",
            _load(FIXTURES / "openai_responses_items.json"),
        ),
        "anthropic": ("anthropic_request.json", _load(FORMAT_FIXTURES / "anthropic_request.json")),
        "claude-code": (
            "claude_code_session.jsonl",
            _load(FORMAT_FIXTURES / "claude_code_session.jsonl"),
        ),
        "langchain": ("messages_to_dict", langchain_document()),
        "agent-framework": ("Message.to_dict", agent_framework_document()),
        "ai-sdk": ("ai_sdk_v7_parts.json", _load(FIXTURES / "ai_sdk_v7_parts.json")),
    }
