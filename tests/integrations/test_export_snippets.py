"""Each "Use in your agent" snippet runs as written against the local model and records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agent_server import AgentServer

from compactlens import load_transcript
from compactlens_inspector.exports.snippet import FRAMEWORKS, framework_snippet
from compactlens_inspector.lab.config import preset

AGENTS = [f for f in FRAMEWORKS if f != "plain"]


def _run(script: str, folder: Path, server: AgentServer) -> subprocess.CompletedProcess[str]:
    path = folder / "snippet.py"
    path.write_text(script, encoding="utf-8")
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": server.base_url,
        "COMPACTLENS_RECORD_DIR": str(folder / "runs"),
    }
    return subprocess.run(
        [sys.executable, str(path)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("framework", AGENTS)
def test_the_framework_snippet_runs_and_records(
    framework: str, server: AgentServer, tmp_path: Path
) -> None:
    script = framework_snippet(preset("truncation", 60), framework)
    done = _run(script, tmp_path, server)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("Found:") == 3  # every question answered
    assert server.requests, "the snippet never called the model"
    [recording] = list((tmp_path / "runs").glob("*.jsonl"))
    transcript = load_transcript(recording)
    assert transcript.compactions, "the tuned budget of 60 tokens never compacted"
    assert "sk-test" not in recording.read_text()


def test_the_plain_snippet_runs_on_a_transcript(server: AgentServer, tmp_path: Path) -> None:
    messages = [{"role": "system", "content": "Be brief."}]
    for t in range(8):
        messages += [
            {"role": "user", "content": f"question {t} " + "word " * 30},
            {"role": "assistant", "content": f"answer {t} " + "word " * 30},
        ]
    (tmp_path / "t.json").write_text(json.dumps(messages))
    script = framework_snippet(preset("truncation", 400), "plain", transcript_path="t.json")
    done = _run(script, tmp_path, server)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("compacted")


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["pydantic-ai"])
def test_a_one_shot_snippet_runs_and_summarizes(
    framework: str, server: AgentServer, tmp_path: Path
) -> None:
    from dataclasses import replace

    from compactlens_inspector.lab.config import CompactSettings

    config = replace(
        preset("truncation", 2000),
        mode="compact",
        compact=CompactSettings(target_tokens=60, keep_last_messages=2, trigger_tokens=80),
    )
    done = _run(framework_snippet(config, framework), tmp_path, server)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("Found:") == 3
    [recording] = list((tmp_path / "runs").glob("*.jsonl"))
    found = load_transcript(recording).compactions
    assert found and all(c.kind == "summary" and c.summary for c in found)
