"""Read transcript bytes into canonical messages, with errors that say where.

Uses :func:`compactlens.transcript.load_transcript` (every supported format, with
detection, and errors naming file, line and field); if an older compactlens lacks it,
reads OpenAI Chat JSON: a list of messages, an object with a ``messages`` list, or JSON
Lines of messages. No Streamlit here.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compactlens.errors import TranscriptError
from compactlens.messages import Message
from compactlens.wire import CallerMessages, from_caller

#: Default upload limit (MB) when ``COMPACTLENS_MAX_UPLOAD_MB`` is not set.
DEFAULT_MAX_UPLOAD_MB = 50
MAX_UPLOAD_ENV = "COMPACTLENS_MAX_UPLOAD_MB"
SAMPLES_ENV = "COMPACTLENS_SAMPLES"
REPO_ROOT = Path(__file__).resolve().parents[2]


def content_hash(data: bytes) -> str:
    """SHA-256 (hex) of the raw bytes: the cache key of everything derived from them."""
    return hashlib.sha256(data).hexdigest()


def max_upload_bytes() -> int:
    """Our own upload limit in bytes (``COMPACTLENS_MAX_UPLOAD_MB``, default 50 MB)."""
    raw = os.environ.get(MAX_UPLOAD_ENV, "")
    try:
        mb = float(raw) if raw else float(DEFAULT_MAX_UPLOAD_MB)
    except ValueError:
        mb = float(DEFAULT_MAX_UPLOAD_MB)
    return max(1, int(mb * 1024 * 1024))


def check_size(name: str, size: int, limit: int | None = None) -> None:
    """Raise a :class:`TranscriptError` naming the file when it is over the limit."""
    limit = max_upload_bytes() if limit is None else limit
    if size > limit:
        raise TranscriptError(
            f"the file is {size / 1048576:.1f} MB; the limit is {limit / 1048576:.0f} MB "
            f"(set {MAX_UPLOAD_ENV} to change it)",
            source=name,
        )


@dataclass(frozen=True, slots=True)
class LoadedTranscript:
    """A parsed transcript and what the app needs to show and re-emit it."""

    name: str
    content_hash: str
    size_bytes: int
    messages: tuple[Message, ...]
    format: str
    detection: str
    title: str = ""
    description: str = ""
    caller: CallerMessages | None = field(default=None, repr=False, compare=False)
    envelope: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    transcript: Any = field(default=None, repr=False, compare=False)
    jsonl: bool = False

    @property
    def message_count(self) -> int:
        return len(self.messages)

    def emit(self, projection: Sequence[Message]) -> bytes:
        """The compacted transcript in the format it was loaded in, as bytes.

        Unchanged messages are written back as their original wire objects; an
        envelope object (``{"title", "description", "messages"}``) is kept with its
        ``messages`` replaced.
        """
        if self.transcript is not None:
            from compactlens.transcript import dump_transcript

            text = dump_transcript(self.transcript.with_messages(projection))
            return text.encode("utf-8")
        if self.caller is not None:
            items = self.caller.emit(projection)
        else:
            from compactlens.formats import OPENAI_CHAT

            items = [
                m.wire if m.wire is not None else dict(OPENAI_CHAT.from_message(m))
                for m in projection
            ]
        if self.jsonl:
            text = "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items)
            return text.encode("utf-8")
        doc: Any = items
        if self.envelope is not None:
            doc = {**self.envelope, "messages": items}
        return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TranscriptError(
            f"the file is not UTF-8 text ({exc.reason})", source=name, location=f"byte {exc.start}"
        ) from None


def _parse_json(text: str, name: str) -> tuple[Any, bool]:
    """The JSON document, or a list of JSON Lines; (value, was_jsonl)."""
    if not text.strip():
        raise TranscriptError("the file is empty", source=name)
    try:
        return json.loads(text), False
    except json.JSONDecodeError as first:
        lines = [ln for ln in text.splitlines()]
        if first.msg == "Extra data" and len([ln for ln in lines if ln.strip()]) > 1:
            items: list[Any] = []
            for no, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    items.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise TranscriptError(
                        f"invalid JSON: {exc.msg}",
                        source=name,
                        location=f"line {no}, column {exc.colno}",
                    ) from None
            return items, True
        raise TranscriptError(
            f"invalid JSON: {first.msg}",
            source=name,
            location=f"line {first.lineno}, column {first.colno}",
        ) from None


def _native_loader() -> Any:
    try:
        from compactlens.transcript import load_transcript
    except ImportError:
        return None
    return load_transcript


def _from_native(data: bytes, name: str, digest: str, loader: Any) -> LoadedTranscript:
    transcript = loader(data, source=name, max_bytes=max(len(data), max_upload_bytes()))
    title = description = ""
    container = getattr(transcript, "container", None)
    parent = container.parent() if container is not None else None
    if isinstance(parent, Mapping):
        title = str(parent.get("title") or "")
        description = str(parent.get("description") or "")
    return LoadedTranscript(
        name=name,
        content_hash=digest,
        size_bytes=len(data),
        messages=tuple(transcript.messages),
        format=str(transcript.format),
        detection=str(transcript.detection or ""),
        title=title,
        description=description,
        transcript=transcript,
        jsonl=getattr(container, "kind", "") == "jsonl",
    )


def parse_transcript(data: bytes, name: str) -> LoadedTranscript:
    """Parse transcript bytes; raises :class:`TranscriptError` (file, location, message)."""
    digest = content_hash(data)
    loader = _native_loader()
    if loader is not None:
        return _from_native(data, name, digest, loader)
    text = _decode(data, name)
    doc, jsonl = _parse_json(text, name)
    envelope: dict[str, Any] | None = None
    title = description = ""
    if isinstance(doc, dict):
        items = doc.get("messages")
        if not isinstance(items, list):
            raise TranscriptError(
                "expected an object with a 'messages' list (or a JSON list of messages)",
                source=name,
                location="messages",
            )
        envelope = {k: v for k, v in doc.items() if k != "messages"}
        title = str(doc.get("title") or "")
        description = str(doc.get("description") or "")
        detection = "a JSON object with a 'messages' list of OpenAI Chat messages"
    elif isinstance(doc, list):
        items = doc
        detection = (
            "JSON Lines of OpenAI Chat messages" if jsonl else "a JSON list of OpenAI Chat messages"
        )
    else:
        raise TranscriptError(
            f"expected a list of messages or an object with 'messages', got {type(doc).__name__}",
            source=name,
        )
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise TranscriptError(
                f"each message must be an object, got {type(item).__name__}",
                source=name,
                location=f"messages[{i}]",
            )
    caller = from_caller(items, source=name)
    return LoadedTranscript(
        name=name,
        content_hash=digest,
        size_bytes=len(data),
        messages=caller.messages,
        format=caller.format.name,
        detection=detection,
        title=title,
        description=description,
        caller=caller,
        envelope=envelope,
        jsonl=jsonl,
    )


# -- bundled samples ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    """A bundled sample transcript (``name`` is the file stem, the URL value)."""

    name: str
    path: Path
    title: str
    description: str


def samples_dir() -> Path:
    """``COMPACTLENS_SAMPLES`` or ``<repo root>/sample_transcripts``."""
    override = os.environ.get(SAMPLES_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return REPO_ROOT / "sample_transcripts"


def list_samples(folder: Path | None = None) -> list[Sample]:
    """The bundled samples, sorted by name; title and description read from each file."""
    root = samples_dir() if folder is None else folder
    if not root.is_dir():
        return []
    out: list[Sample] = []
    for path in sorted(root.glob("*.json")):
        if path.name.startswith("_"):
            continue
        title = path.stem.replace("_", " ")
        description = ""
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(head, dict):
                title = str(head.get("title") or title)
                description = str(head.get("description") or "")
        except (OSError, ValueError):
            pass
        out.append(Sample(path.stem, path, title, description))
    return out
