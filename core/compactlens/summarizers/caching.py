"""Cache summaries by the SHA-256 of their exact request, so a preview and a real run agree."""

from __future__ import annotations

import dataclasses
from collections.abc import MutableMapping
from typing import Any

from compactlens.model.errors import InputTypeError
from compactlens.summarizers.base import (
    FINISH_STOP,
    Summarizer,
    SummaryRequest,
    SummaryResponse,
    is_offline,
    summarize_async,
)


class CachingSummarizer:
    """Wraps a summarizer; answers a request seen before from the cache.

    The key is :meth:`SummaryRequest.cache_key` (SHA-256 of prompt, transcript JSON,
    output allowance and instructions). Only complete answers are cached (finish
    reason ``stop``, no tool call, non-blank text), so a failed call is tried again.
    A replayed answer has ``cached=True`` and the original call's usage. ``cache``
    may be any mutable mapping (each instance gets its own dict by default).
    """

    def __init__(
        self,
        inner: Summarizer,
        cache: MutableMapping[str, SummaryResponse] | None = None,
    ) -> None:
        if not callable(getattr(inner, "summarize", None)):
            raise InputTypeError(f"inner must be a summarizer, got {type(inner).__name__}")
        self.inner = inner
        self.cache: MutableMapping[str, SummaryResponse] = {} if cache is None else cache
        self.hits = 0
        self.misses = 0

    @property
    def offline(self) -> bool:
        """Offline when the wrapped summarizer is (see :func:`is_offline`)."""
        return is_offline(self.inner)

    @property
    def model(self) -> str | None:
        value: Any = getattr(self.inner, "model", None)
        return value if isinstance(value, str) else None

    def _lookup(self, request: SummaryRequest) -> tuple[str, SummaryResponse | None]:
        key = request.cache_key()
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            return key, dataclasses.replace(hit, cached=True)
        self.misses += 1
        return key, None

    def _store(self, key: str, response: SummaryResponse) -> None:
        if (
            isinstance(response, SummaryResponse)
            and response.finish_reason == FINISH_STOP
            and not response.has_tool_call
            and response.text.strip()
        ):
            self.cache[key] = dataclasses.replace(response, cached=False)

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        key, hit = self._lookup(request)
        if hit is not None:
            return hit
        response = self.inner.summarize(request)
        self._store(key, response)
        return response

    async def asummarize(self, request: SummaryRequest) -> SummaryResponse:
        key, hit = self._lookup(request)
        if hit is not None:
            return hit
        response = await summarize_async(self.inner, request)
        self._store(key, response)
        return response

    def peek(self, request: SummaryRequest) -> SummaryResponse | None:
        """The cached answer for ``request``, without calling anything or counting a hit."""
        return self.cache.get(request.cache_key())


__all__ = ["CachingSummarizer"]
