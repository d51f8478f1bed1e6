"""Write what an integration saw as a compactlens recording (JSON lines, one file per run).

Every model call adds one line: the history as the framework handed it over, or, when it
was compacted, the history before and after with the run's numbers and stage events.
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

    def _write(self, record: dict[str, Any]) -> None:
        """Append ``record``; a failure is logged and counted, never raised."""
        try:
            self._append(record)
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

    def _append(self, record: dict[str, Any]) -> None:
        with self._lock:
            line = _dumps({**record, "seq": self._seq})
            if not self.path.exists():
                self.folder.mkdir(parents=True, exist_ok=True)
                head = {
                    "type": HEADER,
                    "version": VERSION,
                    "format": self.format,
                    "framework": self.framework,
                    "started": _now(),
                }
                line = json.dumps(head) + "\n" + line
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line + "\n")
                f.flush()
            self._seq += 1

    def record(self, before: Sequence[Any], run: CompactorRun) -> None:
        """One model call: ``before`` is what the framework handed over (JSON wire items
        of ``format``); ``run`` what the compactor made of it."""
        if not run.changed:
            self._write({"type": HISTORY, "messages": list(before), "status": run.status})
            return
        self._write(
            {
                "type": COMPACTION,
                "status": run.status,
                "strategy": run.strategy,
                "trigger": run.trigger,
                "tokens_before": run.tokens_before,
                "tokens_after": run.tokens_after,
                "summarized": run.summarized,
                "summary": run.summary,
                "timestamp": _now(),
                "before": list(before),
                "after": list(run.messages),
                "events": [dict(e) for e in run.events],
            }
        )


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
