"""``bench/multiuser_bench.py --split-cores``: the server (every thread it has) ends up
on the first core alone and the benchmark on the others; checked on real processes, in
a child process so this test run keeps its own cores."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
E2E = Path(__file__).resolve().parents[1] / "e2e"

# A stand-in server: a process with a second thread, waiting to be stopped.
_SERVER = (
    "import threading, time; threading.Thread(target=time.sleep, args=(60,)).start(); "
    "print('ready', flush=True); time.sleep(60)"
)

_SPLIT = """
import os, sys
sys.path[:0] = [{bench!r}, {e2e!r}]
import multiuser_bench
server, rest = multiuser_bench.split_cores({pid})
print(sorted(server), sorted(rest), sorted(os.sched_getaffinity(0)))
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs at least 2 cores")
def test_split_cores_pins_every_server_thread_and_the_benchmark_apart() -> None:
    server = subprocess.Popen([sys.executable, "-c", _SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        code = _SPLIT.format(bench=str(BENCH), e2e=str(E2E), pid=server.pid)
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
        )
        lines = [x for x in done.stdout.splitlines() if x.startswith("[")]
        cores = sorted(os.sched_getaffinity(0))
        assert lines == [f"{[cores[0]]} {cores[1:]} {cores[1:]}"]
        tasks = list(Path(f"/proc/{server.pid}/task").iterdir())
        assert len(tasks) >= 2
        assert all(os.sched_getaffinity(int(t.name)) == {cores[0]} for t in tasks)
    finally:
        server.kill()
        server.wait()
