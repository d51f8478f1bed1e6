"""Helpers shared by the transcript-format tests (not a test module)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from compactlens import Message
from compactlens.model import ReasoningPart

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "formats"

#: fixture file -> the format detection must choose for it.
FIXTURE_FORMATS: dict[str, str] = {
    "openai_chat_request.json": "openai-chat",
    "openai_chat.jsonl": "openai-chat",
    "openai_responses_request.json": "openai-responses",
    "openai_responses_response.json": "openai-responses",
    "anthropic_request.json": "anthropic",
    "anthropic_response.json": "anthropic",
    "ai_sdk_messages.json": "ai-sdk",
    "claude_code_session.jsonl": "claude-code",
    "langchain_messages.json": "langchain",
    "agent_framework_messages.json": "agent-framework",
    "openhands_history.json": "openhands-events",
    "canonical_document.json": "canonical",
    "claude_code_compacted.jsonl": "claude-code",
    "claude_code_titles.jsonl": "claude-code",
    "codex_rollout.jsonl": "codex",
    "codex_parallel_calls.jsonl": "codex",
    "codex_desktop_events.jsonl": "codex",
    "inspect_log.json": "inspect-ai",
    "openhands_sdk_events.json": "openhands-sdk",
    "swe_agent_run.traj": "swe-agent",
    "otel_genai_messages.json": "otel-genai",
    "atif_trajectory.json": "atif",
    "gemini_cli_session.jsonl": "gemini-cli",
    "pydantic_ai_history.json": "pydantic-ai",
    "compactlens_recording.jsonl": "compactlens-recording",
}


def corpus_root() -> Path:
    """``<repo root>/../shared/corpus``, or ``$COMPACTLENS_CORPUS``."""
    override = os.environ.get("COMPACTLENS_CORPUS")
    if override:
        return Path(override).expanduser().resolve()
    return (REPO_ROOT.parent / "shared" / "corpus").resolve()


def require_corpus() -> Path:
    root = corpus_root()
    if not root.is_dir():
        pytest.skip(f"../shared/corpus not found: {root} (set COMPACTLENS_CORPUS to override)")
    return root


def read_json_or_lines(path: Path) -> Any:
    """The JSON value of a file; a list of values for a ``.jsonl`` file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.split("\n") if line.strip()]
    return json.loads(text)


def parse_dump(text: str, jsonl: bool) -> Any:
    if jsonl:
        return [json.loads(line) for line in text.split("\n") if line.strip()]
    return json.loads(text)


def norm_args(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def conversation(messages: Sequence[Message]) -> tuple[list[Any], dict[int, Any]]:
    """What a conversation says, independent of its wire format.

    Turns are ``(role, text, reasoning, calls)``; consecutive assistant messages
    are one turn (the Responses API and Claude Code split a turn into items).
    Results map each call's ordinal (the order calls were made) to ``(turn of
    the call, output)``, so pairing is compared without comparing ids (legacy
    function calls get synthetic ids).
    """
    turns: list[Any] = []
    results: dict[int, Any] = {}
    call_turn: dict[str, tuple[int, int]] = {}
    for m in messages:
        results_here = m.tool_results if m.role != "assistant" else ()
        for r in results_here:
            ordinal, turn = call_turn.get(r.call_id, (-1 - len(results), -1))
            results[ordinal] = (turn, r.output)
        if results_here and not m.text:
            continue
        role = "system" if m.role in ("system", "developer") else m.role
        if role == "tool":
            role = "user"
        reasoning = tuple(p.text for p in m.parts if isinstance(p, ReasoningPart))
        calls = tuple((c.name, norm_args(c.arguments)) for c in m.tool_calls)
        if turns and role == "assistant" and turns[-1][0] == "assistant":
            _, text, old_reasoning, old_calls = turns[-1]
            joined = "\n".join(t for t in (text, m.text) if t)
            turns[-1] = ("assistant", joined, old_reasoning + reasoning, old_calls + calls)
        else:
            turns.append((role, m.text, reasoning, calls))
        for c in m.tool_calls:
            call_turn[c.id] = (len(call_turn), len(turns) - 1)
    return turns, results
