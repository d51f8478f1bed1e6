"""Every Python block of docs/integrations.md runs as written against the local model."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agent_server import AgentServer

from compactlens import load_transcript

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_doc_has_one_block_per_framework_and_the_compactors() -> None:
    assert len(BLOCKS) == 6


@pytest.mark.slow
@pytest.mark.parametrize("block", range(len(BLOCKS)))
def test_the_block_runs_as_written(block: int, server: AgentServer, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(BLOCKS[block], encoding="utf-8")
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": server.base_url,
        "COMPACTLENS_RECORD_DIR": str(tmp_path / "runs"),
    }
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    if block in (0, 1):  # the compactors alone: no model call
        return
    assert done.stdout.count("Found:") == 3
    [recording] = list((tmp_path / "runs").glob("*.jsonl"))
    assert load_transcript(recording).compactions, "the example never compacted"
