"""OpenAI Agents SDK ``Runner`` with a compacting session, against the local model."""

from __future__ import annotations

import asyncio
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
from compactlens.integrations import CompactingSession, Compactor


def _setup(server: AgentServer, compactor: Compactor) -> tuple[Any, Any, Any]:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        SQLiteSession,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)  # the SDK's own tracing would export to api.openai.com

    @function_tool
    def lookup(q: str) -> str:
        """Look something up."""
        return lookup_text(q)

    client = AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=30)
    agent = Agent(
        name="helper",
        instructions="Answer with the lookup tool.",
        model=OpenAIChatCompletionsModel(model="test-model", openai_client=client),
        tools=[lookup],
    )
    stored = SQLiteSession("conversation-1")
    return agent, CompactingSession(stored, compactor), stored


async def _ask(agent: Any, session: Any, questions: tuple[str, ...]) -> list[str]:
    from agents import Runner

    outputs = []
    for q in questions:
        result = await Runner.run(agent, q, session=session)
        outputs.append(str(result.final_output))
    return outputs


@pytest.mark.slow
def test_openai_agents_session_sends_the_compacted_history(
    server: AgentServer, spans: Any, tmp_path: Path
) -> None:
    compactor = make_compactor(tmp_path)
    agent, session, stored = _setup(server, compactor)
    outputs = asyncio.run(_ask(agent, session, QUESTIONS))
    assert all(o.startswith("Found:") for o in outputs)
    for request in server.requests:
        assert_paired(request.messages)
    records = check_run(tmp_path, spans, "openai-responses", compactor)
    assert_model_got(records, server, "openai-responses")
    # The wrapped session keeps the whole history: compaction is only a view.
    full = asyncio.run(stored.get_items())
    assert len(full) > max(len(r["after"]) for r in records)
    assert sum(1 for i in full if i.get("type") == "function_call") == len(QUESTIONS)


def test_openai_agents_server_error_surfaces_and_recording_stays_valid(
    server: AgentServer, spans: Any, tmp_path: Path
) -> None:
    import openai

    compactor = make_compactor(tmp_path)
    agent, session, _ = _setup(server, compactor)

    async def scenario() -> None:
        await _ask(agent, session, QUESTIONS[:2])
        server.enqueue(Reply(mode="http500"))
        with pytest.raises(openai.InternalServerError):
            await _ask(agent, session, QUESTIONS[2:3])

    asyncio.run(scenario())
    transcript = load_transcript(next(tmp_path.glob("*.jsonl")))
    assert len(transcript.compactions) == len(compaction_records(tmp_path))
