"""Read transcript bytes into canonical messages, with errors that say where, within the
limits a shared server sets on what one upload and one session may cost.

Uses :func:`compactlens.transcript.load_transcript` (every supported format, with
detection, and errors naming file, line and field). Before parsing, an upload is checked
against the operator's limits (:class:`UploadLimits`): its size, the bytes an Inspect
``.eval`` member inflates to (read in bounded chunks, stopped at the limit), and the
number of JSON lines or objects it would make the parser build; after parsing, the number
of messages. Each refusal names the limit and its setting. No Streamlit here.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compactlens import Message, Transcript, TranscriptError, dump_transcript, load_transcript

#: Default upload limit (MB) when ``COMPACTLENS_MAX_UPLOAD_MB`` is not set.
DEFAULT_MAX_UPLOAD_MB = 50
MAX_UPLOAD_ENV = "COMPACTLENS_MAX_UPLOAD_MB"
SAMPLES_ENV = "COMPACTLENS_SAMPLES"
#: Messages per transcript. At the UI benchmark's 50,000 messages an upload costs about
#: 12 s of CPU (parse, both indexes, the first plan) and 280 MB; 100,000 tiny messages cost
#: about 7 s and 410 MB, 200,000 about 22 s and 670 MB on a 2-core server.
MAX_MESSAGES_ENV = "COMPACTLENS_MAX_MESSAGES"
DEFAULT_MAX_MESSAGES = 100_000
#: Transcripts one browser session may hold, and the bytes of all of them together.
SESSION_TRANSCRIPTS_ENV = "COMPACTLENS_SESSION_TRANSCRIPTS"
DEFAULT_SESSION_TRANSCRIPTS = 5
SESSION_MB_ENV = "COMPACTLENS_SESSION_MB"
DEFAULT_SESSION_MB = 100
#: Every limit setting of this module (read from the environment or Streamlit secrets).
LIMIT_SETTINGS = (MAX_UPLOAD_ENV, MAX_MESSAGES_ENV, SESSION_TRANSCRIPTS_ENV, SESSION_MB_ENV)
#: Before parsing: JSON-lines lines, or JSON objects, read per message allowed. Real
#: transcripts have at most 2 lines (Codex, Gemini CLI, Claude Code metadata lines) and
#: about 10 objects (OpenHands histories) per message.
LINES_PER_MESSAGE = 3
OBJECTS_PER_MESSAGE = 10
#: Memory of a parsed transcript, counted at the source (tracemalloc, measured once over
#: the bundled samples, the corpus and crafted files): per byte of JSON text (times the
#: widest character's width in bytes) and per message.
BYTE_COST = 1.3
MESSAGE_COST = 700
_CHUNK = 1 << 20
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


def upload_size_mb() -> int:
    """The per-file upload limit in whole MB, as every uploader (Load, Runs) states and
    enforces it: one limit, where the Runs uploader showed Streamlit's own 200 MB."""
    return max(1, max_upload_bytes() // 1048576)


def _whole(settings: Mapping[str, Any], name: str, default: int) -> int:
    raw = settings.get(name)
    if raw is None or str(raw).strip() == "":
        return default
    text = str(raw).strip().replace("_", "").replace(",", "")
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, not {str(raw)!r}")
    return int(text)


@dataclass(frozen=True, slots=True)
class UploadLimits:
    """What one upload and one browser session may cost (see ``docs/deploy.md``)."""

    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_MB * 1048576
    max_messages: int = DEFAULT_MAX_MESSAGES
    session_transcripts: int = DEFAULT_SESSION_TRANSCRIPTS
    session_bytes: int = DEFAULT_SESSION_MB * 1048576


def limits_from_settings(settings: Mapping[str, Any]) -> UploadLimits:
    """The limits in ``settings`` (environment first, then secrets, merged by the caller).
    Raises ValueError naming the first setting that cannot be read."""
    upload = upload_limit_mb({MAX_UPLOAD_ENV: str(settings.get(MAX_UPLOAD_ENV) or "")})
    return UploadLimits(
        max_upload_bytes=max(1, int(upload * 1048576)),
        max_messages=_whole(settings, MAX_MESSAGES_ENV, DEFAULT_MAX_MESSAGES),
        session_transcripts=_whole(settings, SESSION_TRANSCRIPTS_ENV, DEFAULT_SESSION_TRANSCRIPTS),
        session_bytes=_whole(settings, SESSION_MB_ENV, DEFAULT_SESSION_MB) * 1048576,
    )


def upload_limits(settings: Mapping[str, Any] | None = None) -> UploadLimits:
    """The limits from the environment (Streamlit copies top-level secrets there); a
    setting that cannot be read means its default here (``make serve`` refuses to start
    with it: :mod:`compactlens_inspector.serving.preflight`)."""
    env = os.environ if settings is None else settings
    values: dict[str, Any] = {}
    for name in LIMIT_SETTINGS:
        try:
            limits_from_settings({name: env.get(name)})
            values[name] = env.get(name)
        except ValueError:
            pass
    return limits_from_settings(values)


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
    #: Memory counted at the source (:func:`footprint`); 0 when not measured.
    footprint: int = field(default=0, compare=False)

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


def parse_transcript(
    data: bytes, name: str, limits: UploadLimits | None = None
) -> LoadedTranscript:
    """Parse transcript bytes within ``limits`` (default: the operator's); raises
    :class:`TranscriptError` (file, location, message), naming the limit and its setting
    when one is hit."""
    limits = limits or upload_limits()
    text = inflated(data, name, limits.max_upload_bytes)
    check_records(text, name, limits.max_messages)
    transcript = load_transcript(
        data, source=name, max_bytes=max(len(data), limits.max_upload_bytes)
    )
    if len(transcript.messages) > limits.max_messages:
        raise TranscriptError(
            f"the transcript has {len(transcript.messages):,} messages; the limit is "
            f"{limits.max_messages:,} (set {MAX_MESSAGES_ENV} to change it)",
            source=name,
        )
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
        footprint=footprint(text, len(transcript.messages)),
    )


def inflated(data: bytes, name: str, limit: int) -> bytes:
    """The bytes the parser reads: ``data``, or the sample member of an Inspect ``.eval``
    (a zip) that :func:`~compactlens.load_transcript` reads, inflated in 1 MB chunks and
    refused as soon as it passes ``limit`` (whatever size its header declares)."""
    if data[:4] != b"PK\x03\x04":
        return data
    out = bytearray()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = sorted(
                n for n in archive.namelist() if n.startswith("samples/") and n.endswith(".json")
            )
            if not names:
                return data  # the library says what an .eval log must hold
            with archive.open(names[0]) as member:
                while chunk := member.read(_CHUNK):
                    out += chunk
                    if len(out) > limit:
                        raise TranscriptError(
                            f"{names[0]} inflates to more than {limit / 1048576:.0f} MB; the "
                            f"limit is {limit / 1048576:.0f} MB (set {MAX_UPLOAD_ENV} to "
                            "change it)",
                            source=name,
                        )
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError) as exc:
        raise TranscriptError(f"a damaged zip archive: {exc}", source=name) from None
    return bytes(out)


class _TooMany(Exception):
    pass


def check_records(text: bytes, name: str, max_messages: int) -> None:
    """Refuse, before the parser builds them, a document of more JSON objects or a JSON-lines
    file of more lines than ``max_messages`` can need (:data:`OBJECTS_PER_MESSAGE`,
    :data:`LINES_PER_MESSAGE`): 50 MB of tiny lines would otherwise be 1.6 million messages.

    Counting is cheap: braces first; only past that bound is the JSON scanned (objects
    counted and dropped as they are read, stopping at the bound), and JSON lines counted."""
    objects, lines = OBJECTS_PER_MESSAGE * max_messages, LINES_PER_MESSAGE * max_messages
    if text.count(b"{") <= min(objects, lines):
        return
    seen = 0

    def count(_: dict[str, Any]) -> None:
        nonlocal seen
        seen += 1
        if seen > objects:
            raise _TooMany

    try:
        json.loads(text, object_hook=count)
        return
    except _TooMany:
        raise TranscriptError(
            f"the file holds more than {objects:,} JSON objects; a transcript may have at most "
            f"{max_messages:,} messages, so at most {objects:,} objects are read "
            f"(set {MAX_MESSAGES_ENV} to change it)",
            source=name,
        ) from None
    except (ValueError, RecursionError):
        pass  # not one JSON document: JSON lines, or an error the library locates
    filled = sum(1 for line in text.split(b"\n") if line.strip())
    if filled > lines:
        raise TranscriptError(
            f"the file has {filled:,} JSON lines; a transcript may have at most "
            f"{max_messages:,} messages, so at most {lines:,} lines are read "
            f"(set {MAX_MESSAGES_ENV} to change it)",
            source=name,
        )


_WIDE = re.compile(rb"[\xc4-\xef]|\\u(?!00)[0-9a-fA-F]{4}")
_WIDEST = re.compile(rb"[\xf0-\xf4]|\\u[dD][89abAB]")


def footprint(text: bytes, messages: int) -> int:
    """The memory a parsed transcript of ``text`` with ``messages`` messages takes, counted
    at the source: what sampling its objects cannot see (a crafted file whose sampled
    messages are tiny and the rest huge) is in its bytes. A string takes 1, 2 or 4 bytes
    per character, as its widest character needs; the widest in the file is assumed."""
    width = 4 if _WIDEST.search(text) else 2 if _WIDE.search(text) else 1
    return int(BYTE_COST * width * len(text)) + MESSAGE_COST * messages


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
