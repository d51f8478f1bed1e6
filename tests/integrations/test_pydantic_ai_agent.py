"""pydantic-ai ``Agent`` with the compactlens capability, against the local model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_server import AgentServer, Reply, lookup_text
from integration_support import (
    QUESTIONS,
    assert_model_got,
    assert_paired,
    check_run,
    compaction_records,
    make_compactor,
)

from compactlens import load_transcript
from compactlens.integrations import Compactor, compaction_capability

INTERRUPTED = "interrupted before a result"


def _agent(server: AgentServer, compactor: Compactor) -> Any:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=30)
    model = OpenAIChatModel("test-model", provider=OpenAIProvider(openai_client=client))
    agent = Agent(model, capabilities=[compaction_capability(compactor)], retries=0)

    @agent.tool_plain
    def lookup(q: str) -> str:
        """Look something up."""
        return lookup_text(q)

    return agent


def test_pydantic_ai_agent_sends_the_compacted_history(
    server: AgentServer, spans: Any, tmp_path: Path
) -> None:
    compactor = make_compactor(tmp_path)
    agent = _agent(server, compactor)
    history: list[Any] = []
    for q in QUESTIONS:
        result = agent.run_sync(q, message_history=history)
        assert result.output.startswith("Found:")
        history = result.all_messages()
    for request in server.requests:
        assert_paired(request.messages)
        for m in request.messages:
            assert INTERRUPTED not in str(m.get("content")), "a tool result was lost silently"
    records = check_run(tmp_path, spans, "pydantic-ai", compactor)
    assert_model_got(records, server, "pydantic-ai")
    # Kept tool results keep their text (a dropped one would be silently replaced).
    last = server.requests[-1].messages
    assert any(m.get("role") == "tool" and "fact-39" in m["content"] for m in last)


def test_pydantic_ai_server_error_surfaces_and_recording_stays_valid(
    server: AgentServer, spans: Any, tmp_path: Path
) -> None:
    from pydantic_ai.exceptions import ModelHTTPError

    compactor = make_compactor(tmp_path)
    agent = _agent(server, compactor)
    history: list[Any] = []
    for q in QUESTIONS[:2]:
        history = agent.run_sync(q, message_history=history).all_messages()
    server.enqueue(Reply(mode="http500"))
    with pytest.raises(ModelHTTPError):
        agent.run_sync(QUESTIONS[2], message_history=history)
    transcript = load_transcript(next(tmp_path.glob("*.jsonl")))
    assert len(transcript.compactions) == len(compaction_records(tmp_path))


@pytest.mark.slow
def test_pydantic_ai_timeout_surfaces_and_recording_stays_valid(
    server: AgentServer, spans: Any, tmp_path: Path
) -> None:
    compactor = make_compactor(tmp_path)
    agent = _agent(server, compactor)
    history: list[Any] = []
    for q in QUESTIONS[:3]:
        history = agent.run_sync(q, message_history=history).all_messages()
    before = compaction_records(tmp_path)
    server.enqueue(Reply(mode="slow", delay=120))
    with pytest.raises(Exception, match=r"(?i)timed? ?out") as info:
        agent.run_sync(QUESTIONS[3], message_history=history, model_settings={"timeout": 3})
    assert "APITimeoutError" in type(info.value).__name__ + repr(info.value.__cause__)
    transcript = load_transcript(next(tmp_path.glob("*.jsonl")))
    assert len(transcript.compactions) == len(compaction_records(tmp_path)) >= len(before)
