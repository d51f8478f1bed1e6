"""Chaos for checkpoint files, with real processes: ``kill -9`` during writes, a full disk
(``RLIMIT_FSIZE`` in the writing process) and a read-only folder (``chmod``, or a read-only
bind mount in a private mount namespace when the tests run as root, which ignores modes)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from compactlens.session import Checkpoint, JsonFileCheckpointStore

WORKER = Path(__file__).with_name("checkpoint_chaos_worker.py")
KEY = "chaos"


def findings(stdout: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for line in stdout.splitlines():
        item = json.loads(line)
        out[item["event"]] = item
    return out


def worker(*args: object) -> list[str]:
    return [sys.executable, str(WORKER), *(str(a) for a in args)]


@pytest.mark.slow
def test_kill_9_during_writes_leaves_the_old_or_the_new_checkpoint(tmp_path: Path) -> None:
    store = JsonFileCheckpointStore(tmp_path)
    seen: set[int] = set()
    for delay in (0.0, 0.013, 0.031, 0.057, 0.11, 0.2):
        proc = subprocess.Popen(
            worker("write-forever", tmp_path), stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline()) == {"event": "ready"}
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        checkpoint = store.load(KEY)  # never corrupt: raises CheckpointCorruptError if it were
        assert checkpoint is not None
        n = checkpoint.prefix_length
        assert checkpoint.replacement[0]["content"] == f"{n:08d}" * 50_000
        seen.add(n)
    # A save by a live process removes what the killed writers left behind.
    store.save("other", Checkpoint(1, "0" * 64, ({"role": "user", "content": "x"},)))
    assert list(tmp_path.glob(".*.tmp")) == []
    assert len(seen) > 1  # the writers were killed at different points


def test_temporaries_of_dead_writers_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".checkpoint-{dead.pid}-abc.tmp"
    live = tmp_path / f".checkpoint-{os.getpid()}-def.tmp"
    stale.write_text("{", encoding="ascii")
    live.write_text("{", encoding="ascii")
    store = JsonFileCheckpointStore(tmp_path)
    store.save(KEY, Checkpoint(1, "0" * 64, ({"role": "user", "content": "x"},)))
    assert not stale.exists() and live.exists()
    assert store.load(KEY) is not None


def test_disk_full_fails_the_save_with_the_file_named_and_keeps_the_old_one(
    tmp_path: Path,
) -> None:
    limit = 20_000
    done = subprocess.run(
        worker("disk-full", tmp_path, limit), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = findings(done.stdout)
    failed = found["save-failed"]
    assert failed["errno"] == 27  # EFBIG: File too large
    assert str(JsonFileCheckpointStore(tmp_path).path_for(KEY)) in failed["message"]
    assert "'chaos'" in failed["message"]
    assert found["loaded"]["prefix_length"] == 1  # the previous checkpoint, intact
    assert found["temporaries"]["names"] == []
    session = found["session"]
    assert session["returned"] == 8  # on_error="return": the uncompacted history
    assert [(e["type"], e.get("phase")) for e in session["events"]] == [
        ("started", None),
        ("failed", "persist"),
    ]
    assert session["events"][1]["error_type"] == "OSError"


def run_read_only(directory: Path) -> subprocess.CompletedProcess[str]:
    """Run the read-only worker with ``directory`` read-only for it."""
    args = worker("read-only", directory)
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            return subprocess.run(args, capture_output=True, text=True, timeout=120)
        finally:
            directory.chmod(0o755)
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("running as root without unshare(1): cannot make a read-only folder")
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    done = subprocess.run(
        [unshare, "-m", "sh", "-c", script, "sh", str(directory), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if "mount:" in done.stderr or "unshare:" in done.stderr:
        pytest.skip(f"cannot make a read-only bind mount here: {done.stderr.strip()}")
    return done


def test_a_read_only_folder_reads_reports_and_fails_writes_clearly(tmp_path: Path) -> None:
    store = JsonFileCheckpointStore(tmp_path)
    store.save(KEY, Checkpoint(3, "0" * 64, ({"role": "user", "content": "x"},)))
    store.path_for("damaged").write_text('{"version": 2, "trunc', encoding="ascii")
    done = run_read_only(tmp_path)
    assert done.returncode == 0, done.stderr
    found = findings(done.stdout)
    assert found["loaded"]["prefix_length"] == 3
    corrupt = found["corrupt"]
    assert str(store.path_for("damaged")) in corrupt["message"]
    assert "it stays in place" in corrupt["action"]
    failed = found["save-failed"]
    assert failed["errno"] in (13, 30)  # EACCES (chmod) or EROFS (read-only mount)
    assert str(store.path_for(KEY)) in failed["message"]
    session = found["session"]
    assert session["returned"] == 8
    assert [(e["type"], e.get("phase")) for e in session["events"]] == [
        ("started", None),
        ("failed", "persist"),
    ]
    assert store.path_for("damaged").exists()  # nothing could be moved
