"""Cooperative cancellation for compaction.

``compact()``, ``acompact()`` and :class:`~compactlens.session.runtime.CompactionSession`
accept ``cancel=``: a :class:`CancelToken`, a :class:`threading.Event`, an
:class:`asyncio.Event` or anything else with an ``is_set()`` method. When it is
already set, nothing is called and :class:`CompactionCancelled` is raised. When it
becomes set while the summarizer runs:

* ``acompact()`` cancels the in-flight summarizer task (for the OpenAI summarizer
  this closes the HTTP request) and raises :class:`CompactionCancelled`;
* ``compact()`` runs the summarizer in a worker thread, stops waiting for it and
  raises :class:`CompactionCancelled`. A synchronous call cannot be interrupted,
  so the abandoned call finishes in the background (bounded by the summarizer's
  own timeout) and its answer is discarded.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

from compactlens.model.errors import CompactlensError, InputTypeError


class CompactionCancelled(CompactlensError):
    """Compaction was cancelled through its cancel token; no result was produced."""

    def __init__(self, message: str = "compaction was cancelled") -> None:
        super().__init__(message)


@runtime_checkable
class CancelSignal(Protocol):
    """Anything with ``is_set()``: :class:`CancelToken`, ``threading.Event``, ``asyncio.Event``."""

    def is_set(self) -> bool:  # pragma: no cover - protocol
        ...


class CancelToken:
    """A thread-safe, one-way cancel flag."""

    __slots__ = ("_event", "_reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._reason: str | None = None

    def cancel(self, reason: str | None = None) -> None:
        """Request cancellation (idempotent; the first reason is kept)."""
        if not self._event.is_set():
            self._reason = reason
            self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str | None:
        return self._reason

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` seconds pass; True when cancelled."""
        return self._event.wait(timeout)

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled})"


def check_cancel_signal(cancel: Any) -> None:
    """Raise TypeError unless ``cancel`` is None or has a callable ``is_set``."""
    if cancel is not None and not callable(getattr(cancel, "is_set", None)):
        raise InputTypeError(
            f"cancel must have an is_set() method (CancelToken, threading.Event, asyncio.Event), "
            f"got {type(cancel).__name__}"
        )


def is_cancelled(cancel: Any) -> bool:
    """True when ``cancel`` is set (None is never set)."""
    return cancel is not None and bool(cancel.is_set())


def raise_if_cancelled(cancel: Any) -> None:
    """Raise :class:`CompactionCancelled` when ``cancel`` is set."""
    if is_cancelled(cancel):
        reason = getattr(cancel, "reason", None)
        raise CompactionCancelled(
            f"compaction was cancelled: {reason}"
            if isinstance(reason, str) and reason
            else "compaction was cancelled"
        )


__all__ = [
    "CancelSignal",
    "CancelToken",
    "CompactionCancelled",
    "check_cancel_signal",
    "is_cancelled",
    "raise_if_cancelled",
]
