"""``compactlens report --jobs 2`` as a real process tree: however the parent ends
(SIGTERM, SIGKILL, its own SIGINT, a Ctrl-C to the whole process group), no worker or
resource tracker outlives it, checked by PID through /proc. A killed run resumes and
ends with one row per file."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_transcripts" / "support_long.json"
FILES = 60

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def proc_state(pid: int) -> tuple[int, str] | None:
    """(parent PID, state letter) of a live process, None when gone (or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    state, ppid = fields[0], int(fields[1])
    return None if state in ("Z", "X") else (ppid, state)


def descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            info = proc_state(int(entry.name))
            if info is not None:
                children.setdefault(info[0], []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def data_rows(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open(encoding="utf-8", newline="") as handle:
        return max(0, sum(1 for _ in csv.reader(handle)) - 1)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for i in range(FILES):
        shutil.copy(SAMPLE, root / f"t{i:03d}.json")
    return root


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("config") / "config.json"
    path.write_text(json.dumps({"strategy": {"type": "sliding_window", "keep_last_turns": 2}}))
    return path


def start(corpus: Path, config: Path, output: Path) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "compactlens", "report", str(corpus), "--config", str(config)]
    return subprocess.Popen(
        [*args, "--jobs", "2", "-o", str(output), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a shell job has
        preexec_fn=default_sigint,
    )


def default_sigint() -> None:
    """Give the child the default SIGINT: a suite started in the background by a
    non-interactive shell ignores SIGINT, and an ignored signal stays ignored across exec
    (Python then installs no KeyboardInterrupt handler, rightly)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def running_with_workers(proc: subprocess.Popen[str], output: Path) -> set[int]:
    """Wait until two workers run and a row is written; the parent's descendants."""
    wait_for(lambda: len(descendants(proc.pid)) >= 2, 120, "two worker processes")
    wait_for(lambda: data_rows(output) >= 1, 120, "the first row in the output")
    tree = descendants(proc.pid)
    assert proc.poll() is None, proc.communicate()
    return tree


def assert_all_gone(pids: set[int], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = {pid for pid in alive if proc_state(pid) is not None}
    details = {pid: Path(f"/proc/{pid}/cmdline").read_bytes()[:120] for pid in alive}
    assert not alive, f"still running {timeout} s after the parent ended: {details}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "code"),
    [("SIGTERM", 143), ("SIGKILL", -9), ("SIGINT", 130), ("Ctrl-C", 130)],
)
def test_no_worker_outlives_the_parent(
    corpus: Path, config: Path, tmp_path: Path, how: str, code: int
) -> None:
    output = tmp_path / "report.csv"
    proc = start(corpus, config, output)
    try:
        tree = running_with_workers(proc, output)
        if how == "Ctrl-C":  # a terminal sends SIGINT to the whole foreground group
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(getattr(signal, how))
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == code, err
    assert_all_gone(tree)
    if how == "SIGKILL":
        return
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    what = "terminated (SIGTERM)" if how == "SIGTERM" else "interrupted"
    assert lines[0].startswith(f"compactlens report: {what}; the rows done so far are in ")
    assert data_rows(output) >= 1


@pytest.mark.slow
def test_a_ctrl_c_while_the_workers_start_prints_no_worker_traceback(
    corpus: Path, config: Path, tmp_path: Path
) -> None:
    """A Ctrl-C that reaches the group while a spawned worker still imports compactlens
    (before its initializer ignores SIGINT) is held back, not raised inside the worker."""
    output = tmp_path / "report.csv"
    proc = start(corpus, config, output)
    try:
        wait_for(lambda: len(descendants(proc.pid)) >= 2, 120, "two worker processes")
        tree = descendants(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert_all_gone(tree)
    assert "Traceback" not in err, err
    assert err.strip().startswith("compactlens report: interrupted; the rows done so far are in ")


@pytest.mark.slow
def test_a_run_killed_with_sigkill_resumes_to_one_row_per_file(
    corpus: Path, config: Path, tmp_path: Path
) -> None:
    output = tmp_path / "report.csv"
    proc = start(corpus, config, output)
    try:
        tree = running_with_workers(proc, output)
        proc.kill()
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert_all_gone(tree)
    done_before = data_rows(output)
    assert 1 <= done_before < FILES
    with output.open("a", encoding="utf-8", newline="") as handle:
        handle.write("t059.json,compac")  # a row cut short by the kill
    again = subprocess.run(
        [sys.executable, "-m", "compactlens", "report", str(corpus), "--config", str(config),
         "--jobs", "2", "-o", str(output), "--quiet"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "the last row is incomplete" in again.stderr
    summary = json.loads(again.stderr.strip().splitlines()[-1].removeprefix("compactlens report: "))
    assert summary["files"] == FILES and summary["statuses"] == {"compacted": FILES}
    assert summary["skipped"] == done_before
    with output.open(encoding="utf-8", newline="") as handle:
        files = [row["file"] for row in csv.DictReader(handle)]
    assert sorted(files) == [f"t{i:03d}.json" for i in range(FILES)]
