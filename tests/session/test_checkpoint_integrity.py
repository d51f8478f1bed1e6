"""Checkpoints that cannot be used: reported (an event, an error naming store and key), set
aside by the store's policy, and the session compacts from the original history instead of
failing for good or letting the history grow."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import messages_exceed
from compactlens.formats import from_caller
from compactlens.session import (
    Checkpoint,
    CheckpointCorruptError,
    CheckpointDiscarded,
    CompactionSession,
    InMemoryCheckpointStore,
    JsonFileCheckpointStore,
    SQLiteCheckpointStore,
)
from compactlens.session.checkpoints import CHECKPOINT_VERSION, content_digest, prefix_digest
from compactlens.summarizers import FakeSummarizer

KEY = "conversation-7"


def chat(n: int) -> list[dict[str, Any]]:
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": f"message {i} " + "x" * 40} for i in range(n)]


def session(store: Any, events: list[Any], **kw: Any) -> CompactionSession:
    return CompactionSession(
        triggers=[messages_exceed(8)],
        target_tokens=100_000,
        summarizer=FakeSummarizer(text="the summary"),
        keep_last_messages=2,
        store=store,
        key=KEY,
        on_event=events.append,
        **kw,
    )


def json_store(tmp: Path) -> JsonFileCheckpointStore:
    return JsonFileCheckpointStore(tmp / "cps")


def sqlite_store(tmp: Path) -> SQLiteCheckpointStore:
    return SQLiteCheckpointStore(tmp / "cps.sqlite")


def raw_of(store: Any) -> str:
    if isinstance(store, JsonFileCheckpointStore):
        return store.path_for(KEY).read_text(encoding="utf-8")
    with sqlite3.connect(store.path) as conn:
        row = conn.execute("SELECT data FROM compactlens_checkpoints WHERE key=?", (KEY,))
        return str(row.fetchone()[0])


def put_raw(store: Any, data: str | bytes) -> None:
    if isinstance(store, JsonFileCheckpointStore):
        path = store.path_for(KEY)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute("UPDATE compactlens_checkpoints SET data=? WHERE key=?", (data, KEY))
    conn.close()


def resealed(text: str, change: Callable[[dict[str, Any]], None]) -> str:
    """A record changed and given a matching checksum (what a careless tool might write)."""
    data = json.loads(text)
    change(data)
    data["content_sha256"] = content_digest(data)
    return json.dumps(data)


def edited_replacement(data: dict[str, Any]) -> None:
    data["replacement"][1]["content"] = "an edited summary"


# name -> the bad record, built from a good one
DAMAGE: dict[str, Callable[[str], str | bytes]] = {
    "truncated": lambda good: good[: len(good) // 2],
    "binary": lambda good: b"\x00\xff\xfe\x80 not text",
    "empty": lambda good: "",
    "a list": lambda good: "[1,2,3]",
    "edited replacement": lambda good: good.replace("the summary", "an edited summary"),
    "not a transcript": lambda good: resealed(good, lambda d: d.update(replacement=[123, None])),
    "older version": lambda good: resealed(good, lambda d: d.update(version=1)),
}
STORES = {"json-file": json_store, "sqlite": sqlite_store}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("store_kind", sorted(STORES))
@pytest.mark.parametrize("on_error", ["raise", "return"])
def test_a_damaged_checkpoint_is_reported_set_aside_and_compacted_from_scratch(
    tmp_path: Path, store_kind: str, damage: str, on_error: str
) -> None:
    store = STORES[store_kind](tmp_path)
    events: list[Any] = []
    history = chat(10)
    first = session(store, events, on_error=on_error).prepare(history)
    assert len(first) < len(history)
    put_raw(store, DAMAGE[damage](raw_of(store)))

    with pytest.raises(CheckpointCorruptError) as caught:
        store.load(KEY)
    error = caught.value
    assert error.key == KEY and KEY in str(error)
    expected_where = (
        str(store.path_for(KEY)) if isinstance(store, JsonFileCheckpointStore) else store.path
    )
    assert expected_where in str(error)
    assert store.load(KEY) is None  # set aside: no longer loaded
    # ... and kept for inspection
    if isinstance(store, JsonFileCheckpointStore):
        assert len(list(store.directory.glob("checkpoint-*.json.corrupt-*"))) == 1
    else:
        with sqlite3.connect(store.path) as conn:
            kept = conn.execute("SELECT key, reason FROM compactlens_checkpoints_corrupt")
            assert [k for k, _ in kept.fetchall()] == [KEY]

    # The session meets the damaged record: one event, then it compacts from scratch.
    session(store, []).prepare(history)  # a good checkpoint again, then the same damage
    put_raw(store, DAMAGE[damage](raw_of(store)))
    events.clear()
    grown = [*history, *chat(3)]
    out = session(store, events, on_error=on_error).prepare(grown)
    assert [e.type for e in events] == ["discarded", "started", "completed"]
    discarded = events[0]
    assert isinstance(discarded, CheckpointDiscarded)
    assert discarded.key == KEY and expected_where in discarded.store
    assert "set aside" in discarded.action
    assert "the summary" not in json.dumps(discarded.to_dict())  # never the content
    assert len(out) < len(grown)
    restored = session(store, []).prepare([*grown, *chat(1)])
    assert len(restored) == len(out) + 1  # the new checkpoint is used from then on


@pytest.mark.parametrize("store_kind", sorted(STORES))
def test_the_delete_policy_removes_the_record(tmp_path: Path, store_kind: str) -> None:
    path = tmp_path / ("cps" if store_kind == "json-file" else "cps.sqlite")
    store: Any = (
        JsonFileCheckpointStore(path, on_corrupt="delete")
        if store_kind == "json-file"
        else SQLiteCheckpointStore(path, on_corrupt="delete")
    )
    events: list[Any] = []
    session(store, events).prepare(chat(10))
    put_raw(store, "{")
    with pytest.raises(CheckpointCorruptError, match=r"not valid JSON.*deleted"):
        store.load(KEY)
    assert store.load(KEY) is None
    if store_kind == "json-file":
        assert list(path.iterdir()) == []
    with pytest.raises(ValueError, match="on_corrupt"):
        JsonFileCheckpointStore(path, on_corrupt="ignore")  # type: ignore[arg-type]


def test_a_replacement_that_is_not_a_transcript_never_escapes_on_error_return() -> None:
    history = chat(10)
    store = InMemoryCheckpointStore()
    digest = prefix_digest(from_caller(history).messages)
    store.save(KEY, Checkpoint(len(history), digest, (123, None)))
    events: list[Any] = []
    out = session(store, events, on_error="return").prepare(history)
    assert [e.type for e in events] == ["discarded", "started", "completed"]
    assert "does not read as openai-chat" in events[0].reason
    assert all(isinstance(m, dict) for m in out) and len(out) < len(history)


def test_a_failing_store_read_no_longer_lets_the_history_grow() -> None:
    class Unreadable(InMemoryCheckpointStore):
        def load(self, key: str) -> Checkpoint | None:
            raise OSError("I/O error")

    events: list[Any] = []
    lenient = session(Unreadable(), events, on_error="return")
    sizes = []
    history = chat(6)
    for _ in range(6):
        history = [*history, *chat(2)]
        sizes.append(len(lenient.prepare(history)))
    assert max(sizes) <= 9  # compacted each time a trigger fires, never the whole history
    assert {(e.type, getattr(e, "phase", None)) for e in events} >= {("failed", "restore")}


@settings(max_examples=40, deadline=None)
@given(
    position=st.integers(min_value=0, max_value=10**6),
    byte=st.integers(min_value=0, max_value=255),
)
def test_any_changed_byte_is_caught(tmp_path_factory: Any, position: int, byte: int) -> None:
    store = JsonFileCheckpointStore(tmp_path_factory.mktemp("cps"))
    session(store, []).prepare(chat(10))
    original = store.load(KEY)
    raw = bytearray(store.path_for(KEY).read_bytes())
    i = position % len(raw)
    if raw[i] == byte:
        return
    raw[i] = byte
    store.path_for(KEY).write_bytes(bytes(raw))
    try:
        loaded = store.load(KEY)
    except CheckpointCorruptError:
        return
    # only a change JSON cannot see (whitespace between tokens) may still load, unchanged
    assert original is not None and loaded == original
    assert list(loaded.replacement) == list(original.replacement)


def test_version_and_checksum_are_written(tmp_path: Path) -> None:
    store = json_store(tmp_path)
    session(store, []).prepare(chat(10))
    data = json.loads(store.path_for(KEY).read_text(encoding="ascii"))
    assert data["version"] == CHECKPOINT_VERSION and data["key"] == KEY
    assert data["content_sha256"] == content_digest(data)
