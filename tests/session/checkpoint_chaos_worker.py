"""Run in a subprocess by test_checkpoint_chaos.py: checkpoint writes that get killed, run
out of space or meet a read-only folder. Prints one JSON line per finding.

    python checkpoint_chaos_worker.py write-forever DIR       # saves until killed
    python checkpoint_chaos_worker.py disk-full DIR LIMIT     # RLIMIT_FSIZE = LIMIT bytes
    python checkpoint_chaos_worker.py read-only DIR           # DIR is read-only
"""

from __future__ import annotations

import json
import resource
import signal
import sys
from pathlib import Path
from typing import Any

from compactlens import messages_exceed
from compactlens.session import (
    Checkpoint,
    CheckpointCorruptError,
    CompactionSession,
    JsonFileCheckpointStore,
)
from compactlens.summarizers import FakeSummarizer

KEY = "chaos"


def report(**finding: Any) -> None:
    sys.stdout.write(json.dumps(finding) + "\n")
    sys.stdout.flush()


def checkpoint(n: int, size: int) -> Checkpoint:
    """A checkpoint whose every byte depends on ``n`` (a torn write would show)."""
    body = f"{n:08d}" * (size // 8)
    return Checkpoint(n, f"{n:064x}", ({"role": "user", "content": body},))


def write_forever(directory: Path) -> None:
    store = JsonFileCheckpointStore(directory)
    n = 0
    while True:
        store.save(KEY, checkpoint(n, 400_000))
        if n == 0:
            report(event="ready")
        n += 1


def lenient_session(store: JsonFileCheckpointStore, events: list[Any]) -> CompactionSession:
    return CompactionSession(
        triggers=[messages_exceed(4)],
        target_tokens=100_000,
        summarizer=FakeSummarizer(text="s" * 50_000),
        keep_last_messages=2,
        store=store,
        key="session",
        on_error="return",
        on_event=lambda e: events.append(e.to_dict()),
    )


def chat(n: int) -> list[dict[str, Any]]:
    return [{"role": ("user", "assistant")[i % 2], "content": f"m{i}"} for i in range(n)]


def disk_full(directory: Path, limit: int) -> None:
    store = JsonFileCheckpointStore(directory)
    store.save(KEY, checkpoint(1, 1_000))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        store.save(KEY, checkpoint(2, limit * 4))
        report(event="saved")
    except OSError as exc:
        report(event="save-failed", errno=exc.errno, message=str(exc))
    loaded = store.load(KEY)
    report(event="loaded", prefix_length=loaded.prefix_length if loaded else None)
    report(event="temporaries", names=sorted(p.name for p in directory.glob(".*.tmp")))
    events: list[Any] = []
    history = chat(8)
    out = lenient_session(store, events).prepare(history)
    report(event="session", returned=len(out), events=events)


def read_only(directory: Path) -> None:
    store = JsonFileCheckpointStore(directory)
    loaded = store.load(KEY)
    report(event="loaded", prefix_length=loaded.prefix_length if loaded else None)
    try:
        store.load("damaged")
    except CheckpointCorruptError as exc:
        report(event="corrupt", message=str(exc), action=exc.action)
    try:
        store.save(KEY, checkpoint(9, 100))
        report(event="saved")
    except OSError as exc:
        report(event="save-failed", errno=exc.errno, message=str(exc))
    events: list[Any] = []
    history = chat(8)
    out = lenient_session(store, events).prepare(history)
    report(event="session", returned=len(out), events=events)


def main(argv: list[str]) -> None:
    mode, directory = argv[0], Path(argv[1])
    if mode == "write-forever":
        write_forever(directory)
    elif mode == "disk-full":
        disk_full(directory, int(argv[2]))
    elif mode == "read-only":
        read_only(directory)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
