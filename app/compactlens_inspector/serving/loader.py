"""Read transcript bytes into canonical messages, with errors that say where.

Uses :func:`compactlens.transcript.load_transcript` (every supported format, with
detection, and errors naming file, line and field). No Streamlit here.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from compactlens import Message, Transcript, TranscriptError, dump_transcript, load_transcript

#: Default upload limit (MB) when ``COMPACTLENS_MAX_UPLOAD_MB`` is not set.
DEFAULT_MAX_UPLOAD_MB = 50
MAX_UPLOAD_ENV = "COMPACTLENS_MAX_UPLOAD_MB"
SAMPLES_ENV = "COMPACTLENS_SAMPLES"
REPO_ROOT = Path(__file__).resolve().parents[3]


def content_hash(data: bytes) -> str:
    """SHA-256 (hex) of the raw bytes: the cache key of everything derived from them."""
    return hashlib.sha256(data).hexdigest()


def upload_limit_mb(env: Mapping[str, str]) -> float:
    """``COMPACTLENS_MAX_UPLOAD_MB`` from ``env``, or the default. Raises ValueError
    naming the setting when it is not a number of MB above 0."""
    text = env.get(MAX_UPLOAD_ENV, "").strip()
    if not text:
        return float(DEFAULT_MAX_UPLOAD_MB)
    try:
        mb = float(text)
    except ValueError:
        mb = float("nan")
    if not mb > 0 or mb == float("inf"):
        raise ValueError(f"{MAX_UPLOAD_ENV} must be a number of MB above 0, not {text!r}")
    return mb


def max_upload_bytes() -> int:
    """Our own upload limit in bytes (``COMPACTLENS_MAX_UPLOAD_MB``, default 50 MB).

    A value that cannot be read means the default here (``make serve`` refuses to start
    with it: :mod:`compactlens_inspector.serving.preflight`)."""
    try:
        mb = upload_limit_mb(os.environ)
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
    transcript: Transcript = field(repr=False, compare=False)
    title: str = ""
    description: str = ""
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
        text = dump_transcript(self.transcript.with_messages(projection))
        return text.encode("utf-8")


def parse_transcript(data: bytes, name: str) -> LoadedTranscript:
    """Parse transcript bytes; raises :class:`TranscriptError` (file, location, message)."""
    transcript = load_transcript(data, source=name, max_bytes=max(len(data), max_upload_bytes()))
    title = description = ""
    parent = transcript.container.parent()
    if isinstance(parent, Mapping):
        title = str(parent.get("title") or "")
        description = str(parent.get("description") or "")
    return LoadedTranscript(
        name=name,
        content_hash=content_hash(data),
        size_bytes=len(data),
        messages=tuple(transcript.messages),
        format=str(transcript.format),
        detection=str(transcript.detection or ""),
        transcript=transcript,
        title=title,
        description=description,
        jsonl=transcript.container.kind == "jsonl",
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
    paths = sorted([*root.glob("*.json"), *root.glob("*.jsonl")], key=lambda p: p.name)
    for path in paths:
        if path.name.startswith("_"):
            continue
        title = path.stem.replace("_", " ")
        description = ""
        if path.suffix == ".jsonl":  # an agent's own log: no title object to read
            out.append(Sample(path.stem, path, title, "an agent's own JSON-lines log"))
            continue
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(head, dict):
                title = str(head.get("title") or title)
                description = str(head.get("description") or "")
        except (OSError, ValueError):
            pass
        out.append(Sample(path.stem, path, title, description))
    return out
