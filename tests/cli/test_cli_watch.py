"""``compactlens watch DIR``: one line per model call, new calls as they are recorded,
Ctrl-C ends it cleanly (exit 130)."""

from __future__ import annotations

import io
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from compactlens.cli import main
from compactlens.cli.watch import watch
from compactlens.integrations import Compactor, RunsFolder
from compactlens.integrations.runs import iter_calls

CONFIG = {"type": "truncation", "trigger": {"op": "exceed", "metric": "messages", "n": 6},
          "minimum_preserved": 2}  # fmt: skip


def _turn(t: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"question {t}"},
        {"role": "assistant", "content": f"answer {t}"},
    ]


class Agent:
    """A loop that sends what the compactor keeps, one call per :meth:`step`."""

    def __init__(self, folder: Path) -> None:
        self.compactor = Compactor.from_config(CONFIG, record_to=folder)
        self.history: list[dict[str, Any]] = []
        self.t = 0

    def step(self) -> None:
        self.history = [*self.history, _turn(self.t)[0]]
        result = self.compactor.run(self.history, "openai-chat")
        self.history = [*result.messages, _turn(self.t)[1]]
        self.t += 1


def test_once_prints_one_line_per_recorded_call(tmp_path: Path, capsys: Any) -> None:
    agent = Agent(tmp_path)
    for _ in range(6):
        agent.step()
    assert agent.compactor.recorder is not None
    path = agent.compactor.recorder.path
    (tmp_path / "notes.jsonl").write_text("{}\n")
    assert main(["watch", str(tmp_path), "--once"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    calls = list(iter_calls(path.read_bytes(), path.stem))
    assert len(lines) == len(calls) == 6
    for line, call in zip(lines, calls, strict=True):
        assert f"  {path.stem}  #{call.seq}  " in line
        assert line.endswith(
            f"{call.tokens_before:,} → {call.tokens_after:,} tokens  {call.status}"
        )
    assert any(line.endswith("compacted") for line in lines)
    assert (
        err == "notes.jsonl: skipped (line 1: not a compactlens recording (no "
        "compactlens.recording header))\n"
    )


def test_following_prints_only_new_calls(tmp_path: Path) -> None:
    agent = Agent(tmp_path)
    agent.step()
    out, err = io.StringIO(), io.StringIO()
    looks = 0

    def sleep(_: float) -> None:
        nonlocal looks
        looks += 1
        if looks == 3:
            raise KeyboardInterrupt
        agent.step()  # the agent makes one call between two looks

    with pytest.raises(KeyboardInterrupt):
        watch(RunsFolder(tmp_path), out, err, sleep=sleep)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"watching {tmp_path}: 1 run, 1 call so far")
    assert [line.split("  ")[2] for line in lines[1:]] == ["#1", "#2"]


def test_a_missing_folder_is_a_usage_error(tmp_path: Path, capsys: Any) -> None:
    assert main(["watch", str(tmp_path / "nowhere"), "--once"]) == 2
    assert "nowhere: not a folder" in capsys.readouterr().err


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_watch_follows_a_live_agent_and_ctrl_c_exits_130(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "compactlens", "watch", str(tmp_path), "--interval", "0.2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_sigint,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    try:
        assert lines.get(timeout=120).startswith("watching ")  # its readiness line
        agent = Agent(tmp_path)
        agent.step()
        assert agent.compactor.recorder is not None
        line = lines.get(timeout=60)
        assert f"  {agent.compactor.recorder.path.stem}  #0  " in line
        assert line.rstrip().endswith("unchanged")
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        assert proc.stderr is not None
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err == "compactlens: interrupted\n"
