"""LangChain v1 ``create_agent`` with the compactlens middleware, against the local model."""

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

from compactlens.integrations import Compactor, compaction_middleware

pytest.importorskip("langchain_openai", reason="langchain-openai is not installed")


def _agent(
    server: AgentServer, folder: Path, compactor: Compactor | None = None
) -> tuple[Any, Any]:
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return lookup_text(q)

    model = ChatOpenAI(
        model="test-model", base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=30
    )
    compactor = compactor or make_compactor(folder)
    agent = create_agent(
        model,
        tools=[lookup],
        middleware=[compaction_middleware(compactor)],
        checkpointer=InMemorySaver(),
    )
    return agent, compactor


@pytest.mark.slow
def test_langchain_agent_sends_the_compacted_history(
    server: AgentServer, spans: Any, tmp_path: Path
) -> None:
    agent, compactor = _agent(server, tmp_path)
    config = {"configurable": {"thread_id": "t1"}}
    for q in QUESTIONS:
        out = agent.invoke({"messages": [{"role": "user", "content": q}]}, config)
        assert out["messages"][-1].content.startswith("Found:")
    for request in server.requests:
        assert_paired(request.messages)
    records = check_run(tmp_path, spans, "langchain", compactor)
    assert_model_got(records, server, "langchain")


def test_langchain_server_error_surfaces_and_recording_stays_valid(
    server: AgentServer, spans: Any, tmp_path: Path
) -> None:
    agent, _ = _agent(server, tmp_path)
    config = {"configurable": {"thread_id": "t2"}}
    for q in QUESTIONS[:2]:
        agent.invoke({"messages": [{"role": "user", "content": q}]}, config)
    server.enqueue(Reply(mode="http500"))
    import openai

    with pytest.raises(openai.InternalServerError):
        agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[2]}]}, config)
    from compactlens import load_transcript

    files = list(tmp_path.glob("*.jsonl"))
    transcript = load_transcript(files[0])
    assert len(transcript.compactions) == len(compaction_records(tmp_path))


def test_langchain_agent_with_a_compact_one_shot(server: AgentServer, tmp_path: Path) -> None:
    from compactlens import ExtractiveSummarizer
    from compactlens.integrations import Compactor, OneShot

    shot = OneShot(
        summarizer=ExtractiveSummarizer(),
        target_tokens=700,
        keep_last_messages=3,
        trigger_tokens=900,
    )
    agent, _ = _agent(server, tmp_path, Compactor.from_one_shot(shot, record_to=tmp_path))
    config = {"configurable": {"thread_id": "t3"}}
    for q in QUESTIONS:
        agent.invoke({"messages": [{"role": "user", "content": q}]}, config)
    for request in server.requests:
        assert_paired(request.messages)
    records = compaction_records(tmp_path)
    assert records and all(r["summarized"] and r["summary"] for r in records)
    assert_model_got(records, server, "langchain")
    summary_texts = [str(m.get("content")) for m in server.requests[-1].messages]
    assert any(records[-1]["summary"] in text for text in summary_texts)
