"""The Runs page end to end: a real LangChain agent loop (``create_agent`` with the
compactlens middleware and ``record_to=``), then a pydantic-ai agent, against a scripted
OpenAI-compatible model on 127.0.0.1 write recordings while Chromium watches the Runs page
gain their new calls, and a call opens in the Strategy lab; every recorded call replays to
exactly the recorded messages. And: a zip of recordings uploaded to a server that may not
open folders."""

from __future__ import annotations

import io
import sys
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from e2e_support import (
    ARTIFACTS,
    RERUN_TIMEOUT_MS,
    SAMPLES,
    STARTUP_TIMEOUT_S,
    VIEWPORT,
    StreamlitApp,
    guard_page,
    start_server,
    stop_server,
    wait_healthy,
)

from compactlens.integrations import (
    Compactor,
    RunsFolder,
    compaction_capability,
    compaction_middleware,
    iter_calls,
    replay_call,
)
from compactlens_inspector.components.sidebar import picker_label

pytestmark = pytest.mark.e2e

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integrations"))
from agent_server import AgentServer, lookup_text  # noqa: E402
from integration_support import CONFIG, QUESTIONS  # noqa: E402


@pytest.fixture(scope="module")
def runs_server(chromium_executable: str) -> Iterator[str]:
    """The inspector on 127.0.0.1 with opening folders by path on (as ``make demo``)."""
    log = ARTIFACTS / "e2e-runs-streamlit.log"
    proc, base_url = start_server(log, COMPACTLENS_RUNS_FOLDERS="on")
    try:
        wait_healthy(base_url, proc, log, STARTUP_TIMEOUT_S)
        yield base_url
    finally:
        stop_server(proc)


def _page(browser: Any, base_url: str) -> tuple[Any, StreamlitApp]:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(RERUN_TIMEOUT_MS)
    app = StreamlitApp(page, base_url)
    guard_page(app)
    return context, app


def _agent(model: AgentServer, folder: Path) -> Any:
    pytest.importorskip("langchain_openai", reason="langchain-openai is not installed")
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return lookup_text(q)

    chat = ChatOpenAI(
        model="test-model", base_url=model.base_url, api_key="sk-test", max_retries=0, timeout=30
    )
    compactor = Compactor.from_config(CONFIG, record_to=folder)
    return create_agent(
        chat,
        tools=[lookup],
        middleware=[compaction_middleware(compactor)],
        checkpointer=InMemorySaver(),
    )


def _pydantic_agent(model: AgentServer, folder: Path) -> Any:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed")
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=model.base_url, api_key="sk-test", max_retries=0, timeout=30)
    chat = OpenAIChatModel("test-model", provider=OpenAIProvider(openai_client=client))
    compactor = Compactor.from_config(CONFIG, record_to=folder)
    agent = Agent(chat, capabilities=[compaction_capability(compactor)], retries=0)

    @agent.tool_plain
    def lookup(q: str) -> str:
        """Look something up."""
        return lookup_text(q)

    return agent


def _calls(folder: Path) -> int:
    runs = RunsFolder(folder)
    runs.refresh()
    return sum(r.calls for r in runs.runs)


def _wait_for_calls(app: StreamlitApp, n: int) -> None:
    """The page's own count of model calls (its readiness signal) reaches ``n``."""
    app.keyed("runs_count").filter(has_text=f"{n:,} model calls in all").wait_for(
        timeout=RERUN_TIMEOUT_MS
    )


def test_the_runs_page_follows_a_langchain_agent_and_opens_a_call_in_the_lab(
    browser: Any, runs_server: str, tmp_path: Path
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    context, app = _page(browser, runs_server)
    try:
        with AgentServer() as model:
            agent = _agent(model, folder)
            thread = {"configurable": {"thread_id": "e2e"}}
            agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, thread)
            app.open("runs")
            app.keyed("runs_path").locator("input").fill(str(folder))
            app.keyed("runs_path").locator("input").press("Enter")
            app.wait_idle(what="the folder path to be taken")
            app.click("runs_open_path")
            _wait_for_calls(app, _calls(folder))
            for question in QUESTIONS[1:]:  # the agent goes on while the page is open
                agent.invoke({"messages": [{"role": "user", "content": question}]}, thread)
                _wait_for_calls(app, _calls(folder))  # followed: no click, no reload
            other = _pydantic_agent(model, folder)  # a second framework, a second run
            history: list[Any] = []
            # In a worker thread: Playwright's sync API holds this thread's event loop.
            with ThreadPoolExecutor(max_workers=1) as worker:
                for question in QUESTIONS:
                    done = worker.submit(other.run_sync, question, message_history=history)
                    history = done.result(timeout=120).all_messages()
                    _wait_for_calls(app, _calls(folder))
        assert "2 of 2 runs shown" in app.keyed("runs_count").inner_text()
        paths = {p.name.split("-")[0]: p for p in folder.glob("*.jsonl")}
        assert set(paths) == {"langchain", "pydantic"}
        for recording in paths.values():  # each replay reproduces the recorded messages
            for call in iter_calls(recording.read_bytes(), recording.stem):
                replay = replay_call(call)
                assert replay.reproduced, (recording.name, call.seq, replay.detail)
        path = paths["langchain"]
        app.choose("runs_pick", path.stem)
        calls = list(iter_calls(path.read_bytes(), path.stem))
        compacted = [c for c in calls if c.compacted]
        assert compacted, "the conversation never compacted: the test tests nothing"
        last = compacted[-1]
        label = f"call {last.seq} · {last.tokens_before:,} → {last.tokens_after:,} tokens · "
        app.choose("runs_call_pick", label + last.status)
        assert "Replay reproduced" in app.keyed("runs_replay").inner_text()
        app.page.screenshot(path=str(ARTIFACTS / "runs-live.png"))
        app.click("runs_open_lab")
        app.main().get_by_role("heading", name="Strategy lab", exact=True).wait_for()
        main = app.main().inner_text()
        assert "Opened from the Runs page with the recorded configuration" in main
        assert "Replay reproduced" in main
        assert app.selected("sidebar_source") == picker_label(f"{path.stem}.call-{last.seq}.json")
    finally:
        context.close()


def test_a_zip_of_recordings_uploads_where_folders_are_off(
    browser: Any, app_server: Any, tmp_path: Path
) -> None:
    recordings = sorted((SAMPLES / "recordings").glob("*.jsonl"))
    archive = tmp_path / "runs.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path in recordings:
            zf.write(path, f"runs/{path.name}")
    archive.write_bytes(buffer.getvalue())
    context, app = _page(browser, app_server.base_url)
    try:
        app.open("runs")
        assert "Opening a folder on the server is off" in app.main().inner_text()
        chooser = app.keyed("runs_upload").locator('input[type="file"]')
        app.rerun(lambda: chooser.set_input_files(str(archive)), what="the zip upload")
        total = sum(len(list(iter_calls(p.read_bytes()))) for p in recordings)
        _wait_for_calls(app, total)
        assert f"{len(recordings)} of {len(recordings)} runs shown" in app.main().inner_text()
    finally:
        context.close()
