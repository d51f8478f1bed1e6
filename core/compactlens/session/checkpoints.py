"""Checkpoints of a :class:`~compactlens.session.runtime.CompactionSession` and where they are kept.

A :class:`Checkpoint` says: "the first ``prefix_length`` messages of the original
history, whose canonical JSON has SHA-256 ``prefix_sha256``, are replaced by
``replacement``". It is only restored while the history still starts with exactly
that prefix. Stores: :class:`InMemoryCheckpointStore`, and two that survive a
restart, :class:`JsonFileCheckpointStore` (one JSON file per session key, written
atomically) and :class:`SQLiteCheckpointStore`.

**Integrity.** A stored checkpoint carries ``content_sha256``, the SHA-256 of its
whole content (prefix digest, replacement, counts and session key). On load the
stores check it and the structure, and that a ``wire`` replacement reads as its wire
format. Anything that fails (a truncated, binary, empty or edited record, a
replacement that is not a transcript, an older version) raises
:class:`CheckpointCorruptError`, which names the store, the key and the reason,
after the store has applied its ``on_corrupt`` policy:

* ``"set-aside"`` (default): the record is kept for inspection and no longer
  loaded: the file is renamed ``<name>.corrupt-<UTC time>`` beside it, the SQLite
  row moves to the table ``compactlens_checkpoints_corrupt``;
* ``"delete"``: the record is deleted.

If setting it aside fails too (a read-only folder), the record stays and is reported
again on the next load. A session that meets a corrupt checkpoint emits a
``discarded`` event and compacts from the original history, as if it had none.

**Crash safety.** A JSON file is written to a temporary file named after the writing
process, flushed to disk and renamed over the old one, so a writer killed at any
moment leaves the old checkpoint or the new one, never a mix. The temporary files of
writers that no longer run are removed by the next save in that folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from compactlens.formats.caller import from_caller
from compactlens.model.errors import CompactlensError, ConfigError, DataError, InputTypeError
from compactlens.model.messages import Message
from compactlens.model.serialize import message_from_dict, message_to_dict

#: Version 2 added ``content_sha256``; a version 1 record is treated as corrupt.
CHECKPOINT_VERSION = 2
#: What a store does with a record that fails to load (see the module docstring).
OnCorrupt: TypeAlias = Literal["set-aside", "delete"]
ON_CORRUPT: tuple[OnCorrupt, ...] = ("set-aside", "delete")
_CHECKSUM = "content_sha256"


class CheckpointCorruptError(CompactlensError, ValueError):
    """A stored checkpoint that cannot be used; names the store, the key and the reason.

    ``action`` says what the store did with it: ``"set aside as <where>"``,
    ``"deleted"``, or why it could not.
    """

    def __init__(self, store: str, key: str, reason: str, action: str) -> None:
        self.store = store
        self.key = key
        self.reason = reason
        self.action = action
        super().__init__(f"{store}: checkpoint of key {key!r} is unusable: {reason}; {action}")


def canonical_json(messages: Sequence[Message]) -> str:
    """Canonical JSON of messages: canonical dicts, sorted keys, no spaces, UTF-8 text.

    It is ``"[" + ",".join(canonical_message_json(m) for m in messages) + "]"``, which
    is what lets :class:`~compactlens.session.digest.PrefixDigest` hash it message by
    message."""
    return json.dumps(
        [message_to_dict(m) for m in messages],
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )


def canonical_message_json(message: Message) -> str:
    """One message's item of :func:`canonical_json`."""
    return json.dumps(
        message_to_dict(message), ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )


def digest_bytes(text: str) -> bytes:
    """The bytes of canonical JSON that are hashed (UTF-8; a lone surrogate as its three
    ``surrogatepass`` bytes)."""
    return text.encode("utf-8", "surrogatepass")


def prefix_digest(messages: Sequence[Message]) -> str:
    """SHA-256 (hex) of :func:`canonical_json` of ``messages`` (see :func:`digest_bytes`)."""
    return hashlib.sha256(digest_bytes(canonical_json(messages))).hexdigest()


def content_digest(payload: Mapping[str, Any]) -> str:
    """SHA-256 of a checkpoint record without its ``content_sha256`` field (sorted keys,
    ASCII JSON, so any text hashes the same way)."""
    body = {k: v for k, v in payload.items() if k != _CHECKSUM}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _check_wire(items: list[Any], fmt: str) -> None:
    """ValueError unless ``items`` read as a transcript in ``fmt``."""
    try:
        from_caller(items, format=fmt)
    except Exception as exc:
        where = getattr(exc, "location", "") or type(exc).__name__
        raise DataError(f"the replacement does not read as {fmt} (at {where})") from None


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

    def covers(
        self,
        messages: Sequence[Message],
        *,
        digest: Callable[[Sequence[Message], int], str] | None = None,
    ) -> bool:
        """True when ``messages`` starts with exactly the prefix this checkpoint covers.

        ``digest(messages, length)`` must equal ``prefix_digest(messages[:length])``; a
        session passes its incremental :class:`~compactlens.session.digest.PrefixDigest`.
        """
        if len(messages) < self.prefix_length:
            return False
        if digest is None:
            return prefix_digest(messages[: self.prefix_length]) == self.prefix_sha256
        return digest(messages, self.prefix_length) == self.prefix_sha256

    def to_json(self, key: str | None = None) -> dict[str, Any]:
        """A JSON-serializable dict with its ``content_sha256`` (raises TypeError when a wire
        item is not JSON). ``key``, when given, is stored (and checksummed) with it."""
        if self.kind == "messages":
            items: list[Any] = []
            for m in self.replacement:
                if not isinstance(m, Message):
                    raise InputTypeError("a 'messages' checkpoint must hold Message objects")
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
        payload: dict[str, Any] = {
            "version": CHECKPOINT_VERSION,
            "prefix_length": self.prefix_length,
            "prefix_sha256": self.prefix_sha256,
            "kind": self.kind,
            "wire_format": self.wire_format,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "replacement": items,
        }
        if key is not None:
            payload["key"] = key
        payload[_CHECKSUM] = content_digest(payload)
        return payload

    @classmethod
    def from_json(cls, data: Any, key: str | None = None) -> Checkpoint:
        """Inverse of :meth:`to_json`; ValueError (saying what is wrong) on anything
        malformed: another version, a checksum that does not match the content, a wrong
        type, a ``wire`` replacement that does not read as its format, or (when ``key`` is
        given) a record stored for another key."""
        if not isinstance(data, dict):
            raise DataError(f"expected a JSON object, got {type(data).__name__}")
        if data.get("version") != CHECKPOINT_VERSION:
            raise DataError(
                f"version {data.get('version')!r}, expected {CHECKPOINT_VERSION} "
                "(not a compactlens checkpoint, or an older one)"
            )
        if data.get(_CHECKSUM) != content_digest(data):
            raise DataError("content_sha256 does not match the content (edited or damaged)")
        if key is not None and data.get("key") != key:
            raise DataError(f"stored for key {data.get('key')!r}")
        return cls._from_checked(data)

    @classmethod
    def _from_checked(cls, data: dict[str, Any]) -> Checkpoint:
        kind = data.get("kind")
        items = data.get("replacement")
        length = data.get("prefix_length")
        digest = data.get("prefix_sha256")
        fmt = data.get("wire_format")
        if kind not in ("messages", "wire") or not isinstance(items, list):
            raise DataError("'kind' or 'replacement' is missing or of the wrong type")
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise DataError("'prefix_length' is not a non-negative integer")
        if not isinstance(digest, str) or not isinstance(fmt, str):
            raise DataError("'prefix_sha256' or 'wire_format' is not a string")
        for name in ("tokens_before", "tokens_after"):
            value = data.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise DataError(f"{name!r} is not an integer")
        replacement: tuple[Any, ...]
        if kind == "messages":
            try:
                replacement = tuple(
                    message_from_dict(
                        item["message"], wire=item.get("wire"), wire_format=item.get("wire_format")
                    )
                    for item in items
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise DataError(f"a replacement message is malformed ({exc})") from None
        else:
            _check_wire(items, fmt)
            replacement = tuple(items)
        return cls(
            prefix_length=length,
            prefix_sha256=digest,
            replacement=replacement,
            kind=kind,
            wire_format=fmt,
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


def _check_policy(on_corrupt: str) -> OnCorrupt:
    if on_corrupt not in ON_CORRUPT:
        raise ConfigError(f"on_corrupt must be one of {ON_CORRUPT}, got {on_corrupt!r}")
    return on_corrupt


def _utc_stamp() -> str:
    now = time.time()
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{now % 1:.6f}"[1:] + "Z"


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - not every platform opens directories
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


class JsonFileCheckpointStore:
    """One JSON file per session key in ``directory``, replaced atomically on save.

    ``on_corrupt`` is the policy for a file that fails to load (see the module
    docstring): ``"set-aside"`` renames it ``<name>.corrupt-<UTC time>``, ``"delete"``
    removes it; either way :meth:`load` raises :class:`CheckpointCorruptError`.
    """

    _TMP_PREFIX = ".checkpoint-"

    def __init__(
        self, directory: str | os.PathLike[str], *, on_corrupt: OnCorrupt = "set-aside"
    ) -> None:
        self.directory = Path(directory)
        self.on_corrupt = _check_policy(on_corrupt)

    def __repr__(self) -> str:
        return f"JsonFileCheckpointStore({str(self.directory)!r})"

    def path_for(self, key: str) -> Path:
        name = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.directory / f"checkpoint-{name}.json"

    def load(self, key: str) -> Checkpoint | None:
        """The checkpoint of ``key``, None when there is none; :class:`CheckpointCorruptError`
        (after applying ``on_corrupt``) when the file cannot be used. Other read errors
        (permissions) propagate as ``OSError``."""
        path = self.path_for(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            return Checkpoint.from_json(json.loads(raw.decode("utf-8")), key=key)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            reason = _reason(exc, raw)
            raise CheckpointCorruptError(
                f"checkpoint file {path}", key, reason, self._set_aside(path)
            ) from None

    def _set_aside(self, path: Path) -> str:
        try:
            if self.on_corrupt == "delete":
                path.unlink(missing_ok=True)
                return "deleted"
            target = path.with_name(f"{path.name}.corrupt-{_utc_stamp()}")
            os.replace(path, target)
            return f"set aside as {target.name}"
        except FileNotFoundError:
            return "another process already set it aside"
        except OSError as exc:
            return f"could not {self.on_corrupt} it ({exc.strerror or exc}); it stays in place"

    def save(self, key: str, checkpoint: Checkpoint) -> None:
        """Write atomically; ``OSError`` naming the file when the folder is read-only or full
        (the previous checkpoint, if any, is then left as it was)."""
        text = json.dumps(checkpoint.to_json(key=key), ensure_ascii=True)
        path = self.path_for(key)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.remove_stale_temporaries()
            self._write(path, text)
        except OSError as exc:
            raise OSError(
                exc.errno, f"{path}: cannot save the checkpoint of key {key!r}: {exc.strerror}"
            ) from exc

    def _write(self, path: Path, text: str) -> None:
        fd, tmp = tempfile.mkstemp(
            prefix=f"{self._TMP_PREFIX}{os.getpid()}-", suffix=".tmp", dir=self.directory
        )
        try:
            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_directory(self.directory)

    def remove_stale_temporaries(self) -> list[Path]:
        """Remove the temporary files of writers that no longer run (killed mid-write);
        returns what was removed."""
        removed: list[Path] = []
        for tmp in self.directory.glob(f"{self._TMP_PREFIX}*.tmp"):
            pid_text = tmp.name[len(self._TMP_PREFIX) :].partition("-")[0]
            if pid_text.isdigit() and _pid_running(int(pid_text)):
                continue
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
        return removed

    def delete(self, key: str) -> None:
        self.path_for(key).unlink(missing_ok=True)


def _reason(exc: BaseException, raw: bytes | str) -> str:
    if not raw.strip():
        return "the record is empty"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (invalid byte at offset {exc.start})"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}; truncated?)"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return str(exc)


class SQLiteCheckpointStore:
    """Checkpoints in an SQLite table ``compactlens_checkpoints`` (one connection per call).

    ``on_corrupt``: ``"set-aside"`` moves a row that fails to load to the table
    ``compactlens_checkpoints_corrupt`` (with the reason and the UTC time), ``"delete"``
    deletes it; either way :meth:`load` raises :class:`CheckpointCorruptError`.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, on_corrupt: OnCorrupt = "set-aside"
    ) -> None:
        self.path = str(path)
        self.on_corrupt = _check_policy(on_corrupt)
        conn = self._connect()
        try:
            with conn:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS compactlens_checkpoints "
                    "(key TEXT PRIMARY KEY, data TEXT NOT NULL)"
                )
        finally:
            conn.close()

    def __repr__(self) -> str:
        return f"SQLiteCheckpointStore({self.path!r})"

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def load(self, key: str) -> Checkpoint | None:
        """The checkpoint of ``key``, None when there is none; :class:`CheckpointCorruptError`
        (after applying ``on_corrupt``) when its row cannot be used."""
        conn = self._connect()
        try:
            row = conn.execute(
                "SELECT data FROM compactlens_checkpoints WHERE key = ?", (key,)
            ).fetchone()
        finally:
            conn.close()
        if row is None:
            return None
        raw = row[0]
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
            if not isinstance(text, str):
                raise DataError(f"the row holds a {type(raw).__name__}, not JSON text")
            return Checkpoint.from_json(json.loads(text), key=key)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            reason = _reason(exc, raw if isinstance(raw, bytes | str) else "?")
            where = f"SQLite checkpoint store {self.path} (table compactlens_checkpoints)"
            raise CheckpointCorruptError(where, key, reason, self._set_aside(key, reason)) from None

    def _set_aside(self, key: str, reason: str) -> str:
        conn = self._connect()
        try:
            with conn:
                if self.on_corrupt == "set-aside":
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS compactlens_checkpoints_corrupt "
                        "(key TEXT NOT NULL, data, reason TEXT, set_aside_at TEXT)"
                    )
                    conn.execute(
                        "INSERT INTO compactlens_checkpoints_corrupt "
                        "SELECT key, data, ?, ? FROM compactlens_checkpoints WHERE key = ?",
                        (reason, _utc_stamp(), key),
                    )
                conn.execute("DELETE FROM compactlens_checkpoints WHERE key = ?", (key,))
        except sqlite3.Error as exc:
            return f"could not {self.on_corrupt} it ({exc}); it stays in place"
        finally:
            conn.close()
        if self.on_corrupt == "delete":
            return "deleted"
        return "set aside in table compactlens_checkpoints_corrupt"

    def save(self, key: str, checkpoint: Checkpoint) -> None:
        text = json.dumps(checkpoint.to_json(key=key), ensure_ascii=True)
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
    "ON_CORRUPT",
    "Checkpoint",
    "CheckpointCorruptError",
    "CheckpointStore",
    "InMemoryCheckpointStore",
    "JsonFileCheckpointStore",
    "OnCorrupt",
    "SQLiteCheckpointStore",
    "canonical_json",
    "canonical_message_json",
    "content_digest",
    "digest_bytes",
    "prefix_digest",
]
