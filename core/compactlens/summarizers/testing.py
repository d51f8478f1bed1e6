"""Deterministic test doubles for the :class:`~compactlens.summarizers.base.Summarizer` protocol."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from compactlens.summarizers.base import FINISH_STOP, SummaryRequest, SummaryResponse, Usage


@dataclass(slots=True, eq=False)
class FakeSummarizer:
    """Returns fixed text (or ``text(request)``), records every request, can fail on demand.

    ``raises`` is raised (the very same object) instead of answering; ``finish_reason``
    and ``has_tool_call`` shape the response; ``usage`` defaults to a usage derived
    from the request size so that tests can see it was reported. ``delay`` (seconds)
    makes ``summarize`` wait, interruptible by :meth:`release`.
    """

    text: str | Callable[[SummaryRequest], str] = "summary"
    finish_reason: str = FINISH_STOP
    has_tool_call: bool = False
    raises: BaseException | None = None
    usage: Usage | None = None
    model: str | None = "fake"
    delay: float = 0.0
    calls: list[SummaryRequest] = field(default_factory=list)
    _release: threading.Event = field(default_factory=threading.Event, repr=False)

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.calls.append(request)
        if self.delay:
            self._release.wait(self.delay)
        if self.raises is not None:
            raise self.raises
        text = self.text(request) if callable(self.text) else self.text
        usage = self.usage
        if usage is None:
            inp = len(request.prompt + request.transcript_json) // 4
            out = len(text) // 4
            usage = Usage(inp, out, inp + out)
        return SummaryResponse(
            text=text,
            usage=usage,
            finish_reason=self.finish_reason,
            has_tool_call=self.has_tool_call,
            model=self.model,
        )

    def release(self) -> None:
        """Wake a delayed ``summarize`` call early."""
        self._release.set()

    @property
    def call_count(self) -> int:
        return len(self.calls)


#: Alias: a summarizer that returns fixed text.
StaticSummarizer = FakeSummarizer


__all__ = ["FakeSummarizer", "StaticSummarizer"]
