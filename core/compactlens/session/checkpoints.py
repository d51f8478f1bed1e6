"""Checkpoints of a :class:`~compactlens.session.runtime.CompactionSession` and where they are kept.

A :class:`Checkpoint` says: "the first ``prefix_length`` messages of the original
history, whose canonical JSON has SHA-256 ``prefix_sha256``, are replaced by
``replacement``". It is only restored while the history still starts with exactly
that prefix. Stores: :class:`InMemoryCheckpointStore`, and two that survive a
restart, :class:`JsonFileCheckpointStore` (one JSON file per session key, written
atomically) and :class:`SQLiteCheckpointStore`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from compactlens.model.messages import Message
from compactlens.model.serialize import message_from_dict, message_to_dict

CHECKPOINT_VERSION = 1


def canonical_json(messages: Sequence[Message]) -> str:
    """Canonical JSON of messages: canonical dicts, sorted keys, no spaces, UTF-8 text."""
    return json.dumps(
        [message_to_dict(m) for m in messages],
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )


def prefix_digest(messages: Sequence[Message]) -> str:
    """SHA-256 (hex) of :func:`canonical_json` of ``messages``."""
    return hashlib.sha256(canonical_json(messages).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A compacted replacement for a prefix of the original history.

    ``replacement`` is in the caller's kind (``kind``: ``"wire"`` dicts of
    ``wire_format``, or ``"messages"``). ``tokens_before`` / ``tokens_after`` are the
    message counts of the compaction that produced it.
    """

    prefix_length: int
    prefix_sha256: str
    replacement: tuple[Any, ...]
    kind: Literal["messages", "wire"] = "wire"
    wire_format: str = "openai-chat"
    tokens_before: int | None = None
    tokens_after: int | None = None

    def covers(self, messages: Sequence[Message]) -> bool:
        """True when ``messages`` starts with exactly the prefix this checkpoint covers."""
        if len(messages) < self.prefix_length:
            return False
        return prefix_digest(messages[: self.prefix_length]) == self.prefix_sha256

    def to_json(self) -> dict[str, Any]:
        """A JSON-serializable dict (raises TypeError when a wire item is not JSON)."""
        if self.kind == "messages":
            items: list[Any] = []
            for m in self.replacement:
                if not isinstance(m, Message):
                    raise TypeError("a 'messages' checkpoint must hold Message objects")
                wire = m.wire
                try:
                    json.dumps(wire)
                except (TypeError, ValueError):
                    wire = None
                items.append(
                    {"message": message_to_dict(m), "wire": wire, "wire_format": m.wire_format}
                )
        else:
            items = list(self.replacement)
            json.dumps(items)  # fail early, before anything is written
        return {
            "version": CHECKPOINT_VERSION,
            "prefix_length": self.prefix_length,
            "prefix_sha256": self.prefix_sha256,
            "kind": self.kind,
            "wire_format": self.wire_format,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "replacement": items,
        }

    @classmethod
    def from_json(cls, data: Any) -> Checkpoint:
        """Inverse of :meth:`to_json`; ValueError on anything malformed."""
        if not isinstance(data, dict) or data.get("version") != CHECKPOINT_VERSION:
            raise ValueError("not a compactlens checkpoint (or an unknown version)")
        kind = data.get("kind")
        items = data.get("replacement")
        length = data.get("prefix_length")
        digest = data.get("prefix_sha256")
        if kind not in ("messages", "wire") or not isinstance(items, list):
            raise ValueError("malformed checkpoint")
        if not isinstance(length, int) or not isinstance(digest, str):
            raise ValueError("malformed checkpoint")
        replacement: tuple[Any, ...]
        if kind == "messages":
            replacement = tuple(
                message_from_dict(
                    item["message"], wire=item.get("wire"), wire_format=item.get("wire_format")
                )
                for item in items
            )
        else:
            replacement = tuple(items)
        fmt = data.get("wire_format")
        return cls(
            prefix_length=length,
            prefix_sha256=digest,
            replacement=replacement,
            kind=kind,
            wire_format=fmt if isinstance(fmt, str) else "openai-chat",
            tokens_before=data.get("tokens_before"),
            tokens_after=data.get("tokens_after"),
        )


@runtime_checkable
class CheckpointStore(Protocol):
    """Where a session keeps its checkpoint, by session key."""

    def load(self, key: str) -> Checkpoint | None:  # pragma: no cover - protocol
        ...

    def save(self, key: str, checkpoint: Checkpoint) -> None:  # pragma: no cover
        ...

    def delete(self, key: str) -> None:  # pragma: no cover - protocol
        ...


class InMemoryCheckpointStore:
    """Checkpoints in a dict of this instance (lost on restart)."""

    def __init__(self) -> None:
        self._data: dict[str, Checkpoint] = {}
        self._lock = threading.Lock()

    def load(self, key: str) -> Checkpoint | None:
        with self._lock:
            return self._data.get(key)

    def save(self, key: str, checkpoint: Checkpoint) -> None:
        with self._lock:
            self._data[key] = checkpoint

    def delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)

    def __len__(self) -> int:
        return len(self._data)


class JsonFileCheckpointStore:
    """One JSON file per session key in ``directory``, replaced atomically on save."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def path_for(self, key: str) -> Path:
        name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return self.directory / f"checkpoint-{name}.json"

    def load(self, key: str) -> Checkpoint | None:
        path = self.path_for(key)
        if not path.exists():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return Checkpoint.from_json(data)

    def save(self, key: str, checkpoint: Checkpoint) -> None:
        payload = checkpoint.to_json()
        payload["key"] = key
        text = json.dumps(payload, ensure_ascii=False)
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path_for(key)
        fd, tmp = tempfile.mkstemp(prefix=".checkpoint-", suffix=".tmp", dir=self.directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def delete(self, key: str) -> None:
        self.path_for(key).unlink(missing_ok=True)


class SQLiteCheckpointStore:
    """Checkpoints in an SQLite table ``compactlens_checkpoints`` (one connection per call)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        conn = self._connect()
        try:
            with conn:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS compactlens_checkpoints "
                    "(key TEXT PRIMARY KEY, data TEXT NOT NULL)"
                )
        finally:
            conn.close()

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def load(self, key: str) -> Checkpoint | None:
        conn = self._connect()
        try:
            row = conn.execute(
                "SELECT data FROM compactlens_checkpoints WHERE key = ?", (key,)
            ).fetchone()
        finally:
            conn.close()
        return Checkpoint.from_json(json.loads(row[0])) if row else None

    def save(self, key: str, checkpoint: Checkpoint) -> None:
        text = json.dumps(checkpoint.to_json(), ensure_ascii=False)
        conn = self._connect()
        try:
            with conn:
                conn.execute(
                    "INSERT INTO compactlens_checkpoints (key, data) VALUES (?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET data = excluded.data",
                    (key, text),
                )
        finally:
            conn.close()

    def delete(self, key: str) -> None:
        conn = self._connect()
        try:
            with conn:
                conn.execute("DELETE FROM compactlens_checkpoints WHERE key = ?", (key,))
        finally:
            conn.close()


__all__ = [
    "CHECKPOINT_VERSION",
    "Checkpoint",
    "CheckpointStore",
    "InMemoryCheckpointStore",
    "JsonFileCheckpointStore",
    "SQLiteCheckpointStore",
    "canonical_json",
    "prefix_digest",
]
