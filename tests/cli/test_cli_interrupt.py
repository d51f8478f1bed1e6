"""Ctrl-C during a long ``compactlens inspect``: one line on stderr, no traceback, exit
130. The signal is sent once the process is past start-up (its CPU time, read from /proc,
exceeds what ``compactlens --version`` needs to start and finish)."""

from __future__ import annotations

import base64
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def default_sigint() -> None:
    """The default SIGINT in the child: a suite started in the background by a
    non-interactive shell ignores SIGINT, and an ignored signal stays ignored across exec."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def startup_cpu() -> float:
    proc = subprocess.Popen([sys.executable, "-m", "compactlens", "--version"],
                            stdout=subprocess.DEVNULL)  # fmt: skip
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return usage.ru_utime + usage.ru_stime


@pytest.mark.slow
def test_ctrl_c_during_inspect_is_one_line_and_exit_130(tmp_path: Path) -> None:
    rnd = random.Random(5)
    text = base64.b64encode(rnd.randbytes(20 * 1024 * 1024)).decode()
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"role": "user", "content": text}]), encoding="ascii")
    busy_after = startup_cpu() + 0.5
    proc = subprocess.Popen(
        [sys.executable, "-m", "compactlens", "inspect", str(path),
         "--tokenizer", "o200k_base"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_sigint,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while cpu_seconds(proc.pid) < busy_after:
            assert proc.poll() is None, "inspect finished before it could be interrupted"
            assert time.monotonic() < deadline, "inspect never got busy"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err == "compactlens: interrupted\n"
    assert out == ""
