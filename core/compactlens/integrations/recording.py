"""Write what an integration saw as a compactlens recording (JSON lines, one file per run).

Every model call adds one line (format version 2): the messages appended since the
previous call (``keep`` leading messages of the previous call's history, ``base``
``before`` or ``after`` it was compacted, then ``appended``), the run's numbers (status,
tokens before and after, strategy, time) and, on the first call and whenever it changes,
the configuration in force (so a call can be replayed), and the run's running ``totals``
(calls, compactions, cannot-fits, largest history, tokens saved: a listing reads the last
line only). A call whose history was changed
also holds the history the model got (``after_parts``: runs of the history it saw and
the items it added, such as a summary), the summary, the summarizer's answers by request
(``summaries``, so a replay needs no model) and the stage events. A
10,000-call run therefore stores each message about once, not once per call.
Each line is written whole and flushed, so a run that fails part-way leaves a file that
still loads (``compactlens.load_transcript(path)``, format ``compactlens-recording``).
The layout is described in :mod:`compactlens.formats.recording`.

Recording never breaks the agent: a value JSON cannot hold (NaN, infinity, an object of
another kind) is written as ``null`` or its text, and a write that fails (disk full, a
folder that vanished) is logged on the ``compactlens.integrations`` logger and counted in
``Recorder.failures``; the model call goes on. The framework name becomes part of a file
name, so it is checked when the recorder is made.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import math
import os
import re
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compactlens.formats.recording import COMPACTION, HEADER, HISTORY, VERSION
from compactlens.integrations.outcome import CompactorRun
from compactlens.model.errors import ConfigError

_log = logging.getLogger("compactlens.integrations")
#: The run's running totals every call line carries (``totals``).
TOTALS = ("calls", "compactions", "cannot_fits", "largest", "saved")
#: The fields of a call line written after its numbers (a listing reads up to them).
BULKY = ("summary", "summaries", "events")
#: A framework name is part of a file name: letters, digits, ``.``, ``_`` and ``-`` only.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


class Recorder:
    """Appends one line per model call to ``<folder>/<framework>-<time>-<id>.jsonl``.

    ``format`` names the wire format of the histories (``langchain``, ``pydantic-ai``,
    ``openai-responses``, ``agent-framework``...). The file is created at the first call.
    Thread-safe; one recorder is one run.
    """

    def __init__(self, folder: str | os.PathLike[str], *, framework: str, format: str) -> None:
        if not isinstance(framework, str) or not _NAME.fullmatch(framework):
            raise ConfigError(
                f"framework: {framework!r} cannot name a recording file (use 1 to 64 "
                "letters, digits, '.', '_' or '-', starting with a letter or digit)"
            )
        self.folder = Path(folder)
        self.framework = framework
        self.format = format
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S")
        self.path = self.folder / f"{framework}-{stamp}-{uuid.uuid4().hex[:8]}.jsonl"
        self._seq = 0
        self._lock = threading.Lock()
        #: Calls whose line could not be written (each one was logged).
        self.failures = 0
        #: The configuration in force (see :meth:`configure`); written with the next call.
        self.configuration: dict[str, Any] | None = None
        self._written_config: dict[str, Any] | None = None
        # The previous call's history and what the model got, one JSON text per item.
        self._before: list[str] = []
        self._after: list[str] = []
        self._totals: dict[str, int] = dict.fromkeys(TOTALS, 0)

    def configure(self, configuration: dict[str, Any]) -> None:
        """Set the configuration in force: ``strategy`` (a strategy configuration) or
        ``one_shot`` (``target_tokens``, ``keep_last_messages``, ``trigger_tokens``), with
        ``profile``, ``guards`` and ``tokenizer``. The next call's line carries it."""
        with self._lock:
            self.configuration = dict(configuration)

    def _write(self, record: dict[str, Any], before: Sequence[Any], after: Sequence[Any]) -> None:
        """Append ``record``; a failure is logged and counted, never raised."""
        try:
            self._append(record, before, after)
        except (OSError, ValueError, TypeError, RecursionError) as exc:
            with self._lock:
                self.failures += 1
                failures = self.failures
            _log.warning(
                "compactlens could not record a model call to %s (%s: %s); the agent goes "
                "on, %d call(s) not recorded so far",
                self.path,
                type(exc).__name__,
                exc,
                failures,
            )

    def _append(self, record: dict[str, Any], before: Sequence[Any], after: Sequence[Any]) -> None:
        with self._lock:
            seen = [_dumps_item(item) for item in before]
            sent = [_dumps_item(item) for item in after] if record["type"] == COMPACTION else seen
            base, keep = _shared(seen, self._before, self._after)
            started = None if self.path.exists() else _now()  # the run starts before its call
            bulky = {k: record.pop(k) for k in BULKY if k in record}
            head: dict[str, Any] = {**record, "seq": self._seq, "timestamp": _now()}
            if self.configuration is not None and self.configuration != self._written_config:
                head["config"] = self.configuration
            # The bulky fields go last, so a reader listing calls can stop before them.
            totals = _totals(self._totals, record)
            head.update(base=base, keep=keep, messages_seen=len(seen), totals=totals, **bulky)
            tail = ', "appended": [' + ",".join(seen[keep:]) + "]"
            if record["type"] == COMPACTION:
                tail += ', "after_parts": [' + ",".join(_parts(sent, seen)) + "]"
            line = _dumps(head)[:-1] + tail + "}"
            if started is not None:
                self.folder.mkdir(parents=True, exist_ok=True)
                header = {
                    "type": HEADER,
                    "version": VERSION,
                    "format": self.format,
                    "framework": self.framework,
                    "started": started,
                }
                line = json.dumps(header) + "\n" + line
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line + "\n")
                f.flush()
            self._seq += 1
            self._before, self._after = seen, sent
            self._totals = totals
            self._written_config = self.configuration

    def record(self, before: Sequence[Any], run: CompactorRun) -> None:
        """One model call: ``before`` is what the framework handed over (JSON wire items
        of ``format``); ``run`` what the compactor made of it."""
        numbers: dict[str, Any] = {
            "status": run.status,
            "strategy": run.strategy,
            "trigger": run.trigger,
            "tokens_before": run.tokens_before,
            "tokens_after": run.tokens_after,
        }
        if not run.changed:
            self._write({"type": HISTORY, **numbers}, before, ())
            return
        self._write(
            {
                "type": COMPACTION,
                **numbers,
                "summarized": run.summarized,
                "summary": run.summary,
                "summaries": _summaries(run),
                "events": [dict(e) for e in run.events],
            },
            before,
            run.messages,
        )


def _totals(before: dict[str, int], record: dict[str, Any]) -> dict[str, int]:
    """The run's totals with this call: a reader listing the run reads only its last line."""
    tokens_before, tokens_after = record.get("tokens_before"), record.get("tokens_after")
    compacted = record["type"] == COMPACTION
    out = dict(before)
    out["calls"] += 1
    out["compactions"] += compacted
    out["cannot_fits"] += record.get("status") == "cannot-fit"
    if isinstance(tokens_before, int):
        out["largest"] = max(out["largest"], tokens_before)
        if compacted and isinstance(tokens_after, int) and tokens_before > tokens_after:
            out["saved"] += tokens_before - tokens_after
    return out


def _summaries(run: CompactorRun) -> dict[str, str]:
    """The summarizer's answers of the call by request key (a replay answers with them)."""
    found = getattr(run.result, "summaries", None) or {}
    return {str(key): str(getattr(answer, "text", "")) for key, answer in found.items()}


def _shared(seen: Sequence[str], before: Sequence[str], after: Sequence[str]) -> tuple[str, int]:
    """Which previous history ``seen`` extends (``before`` or ``after`` it was compacted)
    and how many of its leading messages it keeps."""
    best = ("before", _common(seen, before))
    if after is not before:
        kept = _common(seen, after)
        if kept > best[1]:
            best = ("after", kept)
    return best


def _parts(sent: Sequence[str], seen: Sequence[str]) -> list[str]:
    """What the model got as runs of the history the call saw (``{"from": i, "to": j}``)
    and the items it did not see (``{"item": ...}``), each as JSON text."""
    where: dict[str, list[int]] = {}
    for i, text in enumerate(seen):
        where.setdefault(text, []).append(i)
    out: list[str] = []
    run: list[int] = []  # [from, to) of the current run
    at = 0
    for text in sent:
        found = next((i for i in where.get(text, ()) if i >= at), None)
        if found is not None and run and found == run[1]:
            run[1] += 1
        elif found is not None:
            if run:
                out.append(f'{{"from": {run[0]}, "to": {run[1]}}}')
            run = [found, found + 1]
        else:
            if run:
                out.append(f'{{"from": {run[0]}, "to": {run[1]}}}')
                run = []
            out.append('{"item": ' + text + "}")
        if found is not None:
            at = found + 1
    if run:
        out.append(f'{{"from": {run[0]}, "to": {run[1]}}}')
    return out


def _common(a: Sequence[str], b: Sequence[str]) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _dumps_item(item: Any) -> str:
    try:
        return json.dumps(item, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError):
        return json.dumps(_plain(item), ensure_ascii=False, allow_nan=False)


def _dumps(record: dict[str, Any]) -> str:
    """One JSON line; values JSON cannot hold become ``null`` (non-finite numbers) or their
    text (objects of other kinds), so one odd value never costs the whole call."""
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError):
        return json.dumps(_plain(record), ensure_ascii=False, allow_nan=False)


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str | int | bool):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


__all__ = ["Recorder"]
