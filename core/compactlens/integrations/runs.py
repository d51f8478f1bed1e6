"""A folder of recordings as a run history: list the runs, follow new calls, replay one.

An integration given ``record_to=`` writes one recording per run into a folder (see
:mod:`compactlens.integrations.recording`). :class:`RunsFolder` reads such a folder
incrementally: it remembers how far it read each file and, on :meth:`RunsFolder.refresh`,
reads only the bytes appended since (a new file from its start), so following a folder
that agents keep writing costs what was written, not what is there. It keeps one
:class:`RunSummary` per run (counts, never histories); a file it cannot read, or one that
ends in a half-written line, is listed in :attr:`RunsFolder.problems` with the reason.

:func:`read_call` rebuilds the exact history one call saw (from the deltas of version 2,
or the whole histories of version 1) with its recorded result and configuration;
:func:`replay_call` runs that history through the recorded configuration again and says
whether it reproduces the recorded result.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compactlens.engine.vocabulary import stage_words
from compactlens.formats.recording import COMPACTION, HEADER, HISTORY, rebuild, rebuild_after
from compactlens.integrations.compactor import Compactor, OneShot
from compactlens.integrations.outcome import CompactorRun
from compactlens.integrations.recording import TOTALS
from compactlens.model.errors import CompactlensError, ConfigError, DataError, TranscriptError
from compactlens.model.tokens import make_tokenizer
from compactlens.summarizers.base import FINISH_STOP, Summarizer, SummaryRequest, SummaryResponse

#: Statuses a call can end with that the pages count separately.
CANNOT_FIT = "cannot-fit"
#: How many bytes a skimmed file is read at its start and at its end (at most).
SKIM_BYTES = 64 * 1024
#: Files larger than this are skimmed (smaller ones cost little to read whole).
SKIM_FROM = 16 * 1024
#: How many bytes one refresh reads from one file at most (the rest waits for the next).
READ_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class CallSummary:
    """One model call of a run, as listed (no messages)."""

    run: str
    seq: int
    line: int
    timestamp: str | None
    status: str
    strategy: str | None
    tokens_before: int | None
    tokens_after: int | None
    messages: int | None
    compacted: bool
    config: int

    @property
    def cannot_fit(self) -> bool:
        return self.status == CANNOT_FIT


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSummary:
    """One recording file: who wrote it, when, and what its calls did."""

    name: str
    path: str
    framework: str
    format: str
    version: int
    started: str | None
    last: str | None
    calls: int
    compactions: int
    cannot_fits: int
    largest: int
    saved: int
    config_name: str
    partial: bool = False

    @property
    def duration_s(self) -> float | None:
        """Seconds from the start to the last call (None without both times)."""
        from datetime import datetime

        if not self.started or not self.last:
            return None
        try:
            a, b = datetime.fromisoformat(self.started), datetime.fromisoformat(self.last)
        except ValueError:
            return None
        return max(0.0, (b - a).total_seconds())


@dataclass(frozen=True, slots=True, kw_only=True)
class FileProblem:
    """A file of the folder that is not (or not wholly) a readable recording."""

    name: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedCall:
    """One call with what a replay needs: the history it saw and its recorded result."""

    run: str
    seq: int
    format: str
    framework: str
    history: list[Any]
    after: list[Any] | None
    status: str
    strategy: str | None
    tokens_before: int | None
    tokens_after: int | None
    summary: str | None
    timestamp: str | None
    configuration: Mapping[str, Any] | None
    events: tuple[Mapping[str, Any], ...] = ()
    #: The summarizer's answers of the call by request key.
    summaries: Mapping[str, str] = field(default_factory=dict)

    @property
    def compacted(self) -> bool:
        return self.after is not None

    @property
    def sent(self) -> list[Any]:
        """What the model got: the compacted history, or the history as it was."""
        return self.after if self.after is not None else self.history


@dataclass(frozen=True, slots=True, kw_only=True)
class Replay:
    """A recorded call run again through its recorded configuration."""

    call: RecordedCall
    run: CompactorRun | None
    reproduced: bool
    detail: str


def config_name(configuration: Mapping[str, Any] | None) -> str:
    """A short name for a recorded configuration in the vocabulary's words
    ("Pipeline: Tool-result collapse → Truncation", "Truncation", ``compact()``)."""
    if not configuration:
        return "not recorded"
    if "one_shot" in configuration:
        return "compact()"
    strategy = configuration.get("strategy")
    if not isinstance(strategy, Mapping):
        return "not recorded"
    kind = str(strategy.get("type", "?"))
    if kind == "pipeline":
        parts = strategy.get("strategies")
        names = (
            [stage_words(str(p.get("type"))) for p in parts if isinstance(p, Mapping)]
            if parts
            else []
        )
        return "Pipeline: " + " → ".join(names) if names else stage_words("pipeline")
    return stage_words(kind)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


#: Where the bulky fields of a version 2 call line begin (each key is written after the
#: call's numbers, ``appended`` last; a quote inside a JSON string is escaped, so these
#: bytes cannot occur inside a value).
_APPENDED = b', "appended": '
_BULKY_KEYS = (b', "summary": ', b', "summaries": ', b', "events": ')
_decode = json.JSONDecoder().decode


def _numbers_part(raw: bytes) -> bytes:
    """A call line without its bulky fields (its messages, events and summaries): the
    JSON object of its numbers. A line without them comes back whole."""
    cut = raw.find(_APPENDED)
    if cut < 0:
        return raw
    for key in _BULKY_KEYS:
        at = raw.find(key, 0, cut)
        if at > 0:
            cut = at
            break
    return raw[:cut] + b"}"


def _complete_lines(pending: bytes, data: bytes) -> tuple[list[bytes], bytes]:
    """The lines ``pending + data`` completes (newline-ended), and the unfinished rest,
    which waits for the bytes that end it."""
    chunk = pending + data
    end = chunk.rfind(b"\n")
    if end < 0:
        return [], chunk
    return chunk[:end].split(b"\n"), chunk[end + 1 :]


class RunReader:
    """Reads one recording from its bytes as they arrive (:meth:`feed`), keeping counts.

    A line not ended by a newline waits for the rest; a line that is not a record stops
    the reading of this file and sets :attr:`problem`.
    """

    def __init__(self, name: str, path: str = "") -> None:
        self.name = name
        self.path = path
        self.offset = 0
        self.lines = 0
        self.pending = b""
        self.problem: str | None = None
        self.header: Mapping[str, Any] | None = None
        self.calls = 0
        self.compactions = 0
        self.cannot_fits = 0
        self.largest = 0
        self.saved = 0
        self.last: str | None = None
        self.config: Mapping[str, Any] | None = None
        self.configs = 0

    def feed(self, data: bytes) -> list[CallSummary]:
        """Read ``data`` (the bytes after what was fed before); the calls it completes."""
        self.offset += len(data)
        if self.problem is not None:
            return []
        lines, self.pending = _complete_lines(self.pending, data)
        found: list[CallSummary] = []
        for raw in lines:
            self.lines += 1
            if not raw.strip():
                continue
            try:
                call = self._line(raw)
            except (ValueError, TranscriptError) as exc:
                self.problem = f"line {self.lines}: {exc}"
                break
            if call is not None:
                found.append(call)
        return found

    def _line(self, raw: bytes) -> CallSummary | None:
        try:
            text = (_numbers_part(raw) if self.header is not None else raw).decode("utf-8")
            record = _decode(text)
        except ValueError:
            try:
                record = json.loads(raw)
            except ValueError as exc:
                raise DataError(f"not JSON ({exc})") from None
        if not isinstance(record, dict):
            raise DataError("not a JSON object")
        get = record.get
        kind = get("type")
        if self.header is None:
            if kind != HEADER:
                raise DataError("not a compactlens recording (no compactlens.recording header)")
            self.header = record
            return None
        if kind != HISTORY and kind != COMPACTION:
            raise DataError(f"unknown record type {kind!r}")
        config = get("config")
        if config is not None and isinstance(config, dict):
            self.config = config
            self.configs += 1
        before, after = _int(get("tokens_before")), _int(get("tokens_after"))
        status = get("status")
        compacted = kind == COMPACTION
        if not isinstance(status, str):
            status = "compacted" if compacted else "unchanged"
        seen = get("messages_seen")
        if not isinstance(seen, int):
            history = get("messages" if kind == HISTORY else "before")
            seen = len(history) if isinstance(history, list) else None
        self.calls += 1
        if compacted:
            self.compactions += 1
            if before is not None and after is not None and before > after:
                self.saved += before - after
        if status == CANNOT_FIT:
            self.cannot_fits += 1
        if before is not None and before > self.largest:
            self.largest = before
        stamp = get("timestamp")
        if isinstance(stamp, str):
            self.last = stamp
        else:
            stamp = None
        seq = get("seq")
        strategy = get("strategy")
        return CallSummary(
            run=self.name,
            seq=seq if isinstance(seq, int) else self.calls - 1,
            line=self.lines,
            timestamp=stamp,
            status=status,
            strategy=strategy if isinstance(strategy, str) else None,
            tokens_before=before,
            tokens_after=after,
            messages=seen,
            compacted=compacted,
            config=self.configs,
        )

    def skim(self, head: bytes, tail: bytes, size: int) -> bool:
        """Take a version 2 recording's counts from its first lines (header, configuration)
        and its last complete line (the run's running totals), without reading what lies
        between; False when the file does not allow it (then read it whole)."""
        lines = head.split(b"\n")
        end = tail.rfind(b"\n")
        start = tail.rfind(b"\n", 0, end) + 1 if end > 0 else 0
        # The first call's line may go on past ``head``: its numbers come first.
        if len(lines) < 2 or end < 0 or (start == 0 and len(tail) < size):
            return False
        try:
            header = json.loads(lines[0])
            first = json.loads(_numbers_part(lines[1]))
            last = json.loads(_numbers_part(tail[start:end]))
        except ValueError:
            return False
        if not (isinstance(header, dict) and isinstance(first, dict) and isinstance(last, dict)):
            return False
        totals = last.get("totals")
        if header.get("type") != HEADER or not isinstance(totals, dict):
            return False
        counts: list[int] = []
        for key in TOTALS:
            n = totals.get(key)
            if not isinstance(n, int) or isinstance(n, bool):
                return False
            counts.append(n)
        self.header = header
        self.calls, self.compactions, self.cannot_fits, self.largest, self.saved = counts
        if isinstance(first.get("config"), dict):
            self.config, self.configs = first["config"], 1
        self.last = _str(last.get("timestamp"))
        self.lines = self.calls + 1  # the header, then one line per call
        self.offset = size
        self.pending = tail[end + 1 :]
        return True

    def summary(self) -> RunSummary | None:
        """The run as listed (None before its header was read)."""
        head = self.header
        if head is None:
            return None
        return RunSummary(
            name=self.name,
            path=self.path,
            framework=_str(head.get("framework")) or "?",
            format=_str(head.get("format")) or "?",
            version=_int(head.get("version")) or 1,
            started=_str(head.get("started")),
            last=self.last,
            calls=self.calls,
            compactions=self.compactions,
            cannot_fits=self.cannot_fits,
            largest=self.largest,
            saved=self.saved,
            config_name=config_name(self.config),
            partial=bool(self.pending) or self.problem is not None,
        )

    def file_problem(self) -> FileProblem | None:
        """Why this file is not (wholly) listed, if it is not."""
        if self.problem is not None:
            return FileProblem(name=self.name, reason=self.problem)
        if self.pending:
            return FileProblem(
                name=self.name,
                reason=f"partial: line {self.lines + 1} is cut off mid-line "
                f"({len(self.pending)} bytes so far); the calls before it are listed",
            )
        if self.header is None:
            return FileProblem(name=self.name, reason="empty: no recording header yet")
        return None


@dataclass(slots=True)
class RunsUpdate:
    """What one :meth:`RunsFolder.refresh` found: the new calls, run by run, in order."""

    calls: list[CallSummary] = field(default_factory=list)
    new_runs: list[str] = field(default_factory=list)
    bytes_read: int = 0


class RunsFolder:
    """The recordings (``*.jsonl``) of one folder, read incrementally (see the module)."""

    def __init__(
        self, folder: str | os.PathLike[str], *, pattern: str = "*.jsonl", skim: bool = False
    ) -> None:
        self.folder = Path(folder)
        self.pattern = pattern
        #: Take a file seen for the first time from its first and last lines (version 2
        #: running totals; see :meth:`RunReader.skim`): listing costs per file, not per
        #: call. Its earlier calls are then not in that refresh's update, and its lines are
        #: checked when the run is opened.
        self.skim = skim
        self._readers: dict[str, RunReader] = {}
        self._unreadable: dict[str, str] = {}

    def refresh(self) -> RunsUpdate:
        """Read what was appended to every file since the last refresh (and new files)."""
        update = RunsUpdate()
        if not self.folder.is_dir():
            raise ConfigError(f"{self.folder}: not a folder")
        for path in sorted(self.folder.glob(self.pattern)):
            name = path.name
            reader = self._readers.get(name)
            if reader is None:
                reader = RunReader(path.stem, str(path))
                self._readers[name] = reader
                update.new_runs.append(path.stem)
            try:
                size = path.stat().st_size
                if size < reader.offset:  # rewritten from the start: read it again
                    reader = RunReader(path.stem, str(path))
                    self._readers[name] = reader
                if size == reader.offset:
                    continue
                if self.skim and reader.offset == 0 and size > SKIM_FROM:
                    with path.open("rb") as f:
                        head = f.read(SKIM_BYTES)
                        f.seek(max(0, size - SKIM_BYTES))
                        tail = f.read(SKIM_BYTES)
                    if reader.skim(head, tail, size):
                        update.bytes_read += len(head) + len(tail)
                        continue
                with path.open("rb") as f:
                    f.seek(reader.offset)
                    data = f.read(min(size - reader.offset, READ_LIMIT))
            except OSError as exc:
                self._unreadable[name] = f"unreadable: {exc.strerror or exc}"
                continue
            self._unreadable.pop(name, None)
            update.bytes_read += len(data)
            update.calls.extend(reader.feed(data))
        return update

    @property
    def runs(self) -> list[RunSummary]:
        """Every run whose header was read, newest start first."""
        out = [s for r in self._readers.values() if (s := r.summary()) is not None]
        return sorted(out, key=lambda s: (s.started or "", s.name), reverse=True)

    @property
    def problems(self) -> list[FileProblem]:
        """Files not (wholly) listed, each with its reason."""
        out = [FileProblem(name=n, reason=r) for n, r in self._unreadable.items()]
        for name, reader in self._readers.items():
            problem = reader.file_problem()
            if problem is not None and name not in self._unreadable:
                out.append(replace(problem, name=name))
        return sorted(out, key=lambda p: p.name)

    def path_of(self, run: str) -> Path:
        """The file of ``run`` (its name without ``.jsonl``)."""
        for name, reader in self._readers.items():
            if reader.name == run:
                return self.folder / name
        raise ConfigError(f"{run}: no such run in {self.folder}")


def read_uploads(files: Sequence[tuple[str, bytes]]) -> dict[str, bytes]:
    """Recordings from uploaded files: ``.jsonl`` files as they are, and the ``.jsonl``
    members of any ``.zip``. Keys are run names (file names without ``.jsonl``)."""
    out: dict[str, bytes] = {}
    for name, data in files:
        if name.lower().endswith(".zip"):
            try:
                with zipfile.ZipFile(io.BytesIO(data)) as archive:
                    for member in archive.infolist():
                        base = member.filename.rsplit("/", 1)[-1]
                        if member.is_dir() or not base.endswith(".jsonl"):
                            continue
                        out[base[: -len(".jsonl")]] = archive.read(member)
            except zipfile.BadZipFile as exc:
                raise TranscriptError(f"not a zip archive ({exc})", source=name) from None
        else:
            out[name[: -len(".jsonl")] if name.endswith(".jsonl") else name] = data
    return out


def summarize_bytes(
    recordings: Mapping[str, bytes],
) -> tuple[list[RunSummary], list[FileProblem], dict[str, list[CallSummary]]]:
    """The runs, problems and calls of recordings held in memory (an upload)."""
    runs: list[RunSummary] = []
    problems: list[FileProblem] = []
    calls: dict[str, list[CallSummary]] = {}
    for name, data in recordings.items():
        reader = RunReader(name)
        calls[name] = reader.feed(data)
        summary = reader.summary()
        problem = reader.file_problem()
        if summary is not None and summary.calls:
            runs.append(summary)
        elif problem is None:
            problem = FileProblem(name=name, reason="no model calls recorded")
        if problem is not None:
            problems.append(problem)
    runs.sort(key=lambda s: (s.started or "", s.name), reverse=True)
    return runs, problems, calls


def run_calls(data: bytes, name: str = "run") -> list[CallSummary]:
    """Every call of one recording (its bytes)."""
    return RunReader(name).feed(data)


class CallReader:
    """Rebuilds the calls of one recording, with the history each saw, from its bytes as
    they arrive (:meth:`feed`); it keeps only the previous call's histories.

    A line not ended by a newline waits for the rest. Raises :class:`TranscriptError`
    naming the line of a record it cannot read."""

    def __init__(self, name: str = "run") -> None:
        self.name = name
        self.lines = 0
        self.pending = b""
        self.header: Mapping[str, Any] | None = None
        self.before: list[Any] = []
        self.after: list[Any] = []
        self.config: Mapping[str, Any] | None = None

    def feed(self, data: bytes) -> list[RecordedCall]:
        lines, self.pending = _complete_lines(self.pending, data)
        out: list[RecordedCall] = []
        for raw in lines:
            self.lines += 1
            if raw.strip():
                call = self._line(raw, f"line {self.lines}")
                if call is not None:
                    out.append(call)
        return out

    def _line(self, raw: bytes, loc: str) -> RecordedCall | None:
        name = self.name
        try:
            record = json.loads(raw)
        except ValueError as exc:
            raise TranscriptError(f"not JSON ({exc})", source=name, location=loc) from None
        if not isinstance(record, dict):
            raise TranscriptError("not a JSON object", source=name, location=loc)
        kind = record.get("type")
        if self.header is None:
            if kind != HEADER:
                raise TranscriptError(
                    "not a compactlens recording (no compactlens.recording header)",
                    source=name,
                    location=loc,
                )
            self.header = record
            return None
        if kind not in (HISTORY, COMPACTION):
            raise TranscriptError(f"unknown record type {kind!r}", source=name, location=loc)
        if isinstance(record.get("config"), dict):
            self.config = record["config"]
        if "appended" in record:
            seen = rebuild(self.before, self.after, record, name, loc)
        else:
            old = record.get("messages" if kind == HISTORY else "before")
            if not isinstance(old, list):
                raise TranscriptError("no history in this record", source=name, location=loc)
            seen = old
        got = rebuild_after(seen, record, name, loc) if kind == COMPACTION else None
        self.before, self.after = seen, (got if got is not None else seen)
        seq = _int(record.get("seq"))
        events = record.get("events")
        answers = record.get("summaries")
        header = self.header
        return RecordedCall(
            run=name,
            seq=seq if seq is not None else 0,
            format=_str(header.get("format")) or "openai-chat",
            framework=_str(header.get("framework")) or "?",
            history=seen,
            after=got,
            status=_str(record.get("status"))
            or ("compacted" if kind == COMPACTION else "unchanged"),
            strategy=_str(record.get("strategy")),
            tokens_before=_int(record.get("tokens_before")),
            tokens_after=_int(record.get("tokens_after")),
            summary=_str(record.get("summary")),
            timestamp=_str(record.get("timestamp")),
            configuration=self.config,
            events=tuple(e for e in events if isinstance(e, dict))
            if isinstance(events, list)
            else (),
            summaries={str(k): str(v) for k, v in answers.items()}
            if isinstance(answers, dict)
            else {},
        )


def iter_calls(data: bytes, name: str = "run") -> Iterator[RecordedCall]:
    """Every call of one recording with the history it saw, in order (complete lines only).

    Raises :class:`TranscriptError` naming the line of a record it cannot read."""
    yield from CallReader(name).feed(data)


def read_call(source: str | os.PathLike[str] | bytes, seq: int, name: str = "") -> RecordedCall:
    """Call ``seq`` of a recording (a path or its bytes) with the exact history it saw."""
    if isinstance(source, bytes):
        data, label = source, name or "run"
    else:
        path = Path(source)
        data, label = path.read_bytes(), name or path.stem
    for call in iter_calls(data, label):
        if call.seq == seq:
            return call
    raise ConfigError(f"{label}: no call {seq} in this recording")


class _RecordedSummary:
    """A summarizer that answers with the summaries the call recorded, by request (a
    replay makes no model call); a request it has no answer for gets ``fallback``."""

    def __init__(self, answers: Mapping[str, str], fallback: str) -> None:
        self.answers = answers
        self.fallback = fallback

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        text = self.answers.get(request.cache_key(), self.fallback)
        return SummaryResponse(text=text, finish_reason=FINISH_STOP, model="recorded")


def compactor_for(
    configuration: Mapping[str, Any], *, summarizer: Summarizer | None = None
) -> Compactor:
    """The compactor a recorded configuration describes (without a recorder)."""
    tokenizer = make_tokenizer(str(configuration.get("tokenizer") or "estimate"))
    profile = _str(configuration.get("profile"))
    shot = configuration.get("one_shot")
    if isinstance(shot, Mapping):
        if summarizer is None:
            raise ConfigError("a compact() configuration needs a summarizer to replay")
        return Compactor.from_one_shot(
            OneShot(
                summarizer=summarizer,
                target_tokens=int(shot["target_tokens"]),
                keep_last_messages=int(shot.get("keep_last_messages", 4)),
                trigger_tokens=_int(shot.get("trigger_tokens")),
            ),
            tokenizer=tokenizer,
        )
    strategy = configuration.get("strategy")
    if not isinstance(strategy, Mapping):
        raise ConfigError("the recording holds no configuration for this call")
    guards = configuration.get("guards")
    return Compactor.from_config(
        _without_summarizer(strategy),
        summarizer=summarizer,
        guards=guards if isinstance(guards, Mapping) else None,
        profile=profile,
        tokenizer=tokenizer,
    )


def _without_summarizer(config: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in config.items() if k != "summarizer"}
    if isinstance(out.get("strategies"), list):
        out["strategies"] = [
            _without_summarizer(s) if isinstance(s, Mapping) else s for s in out["strategies"]
        ]
    return out


def replay_call(call: RecordedCall, *, summarizer: Summarizer | None = None) -> Replay:
    """Run the history ``call`` saw through its recorded configuration again.

    A configuration that summarizes gets ``summarizer``, or by default one that answers
    with the summaries the call recorded (so the replay makes no model call).
    ``reproduced`` is True when the replay's status and messages equal the recording's.
    """
    if call.configuration is None:
        return Replay(
            call=call,
            run=None,
            reproduced=False,
            detail="this recording holds no configuration (written before version 2)",
        )
    fallback = call.summary or next(iter(call.summaries.values()), "")
    chosen = summarizer or _RecordedSummary(call.summaries, fallback)
    try:
        compactor = compactor_for(call.configuration, summarizer=chosen)
        run = compactor.run(call.history, call.format)
    except CompactlensError as exc:
        return Replay(call=call, run=None, reproduced=False, detail=f"replay failed: {exc}")
    got = json.loads(json.dumps(run.messages if run.changed else call.history, default=str))
    want = json.loads(json.dumps(call.sent, default=str))
    if run.status != call.status:
        detail = f"the replay ended {run.status}, the recorded call {call.status}"
    elif got != want:
        first = next(
            (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
            min(len(got), len(want)),
        )
        detail = (
            f"the replay sends {len(got)} messages, the recorded call sent {len(want)}; "
            f"they differ from message {first}"
        )
    else:
        return Replay(
            call=call,
            run=run,
            reproduced=True,
            detail=f"reproduced: {run.status}, the same {len(got)} messages",
        )
    return Replay(call=call, run=run, reproduced=False, detail=detail)


__all__ = [
    "CANNOT_FIT",
    "CallReader",
    "CallSummary",
    "FileProblem",
    "RecordedCall",
    "Replay",
    "RunReader",
    "RunSummary",
    "RunsFolder",
    "RunsUpdate",
    "compactor_for",
    "config_name",
    "iter_calls",
    "read_call",
    "read_uploads",
    "replay_call",
    "run_calls",
    "summarize_bytes",
]
