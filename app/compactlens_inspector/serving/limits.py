"""Limits on paid calls: per browser session, per request, and for the whole server.

* :class:`TokenCounter` counts a request so that it is never under-counted;
* :class:`SummaryLimiter` (one per browser session): requests a minute and tokens per
  request (``COMPACTLENS_SUMMARY_RPM``, ``COMPACTLENS_SUMMARY_MAX_TOKENS``);
* :class:`ServerBudget` (one per server process, shared by every session): requests and
  tokens a minute (``COMPACTLENS_SERVER_RPM``, ``COMPACTLENS_SERVER_TPM``), so that a
  reload or a new browser gets no fresh allowance;
* the summarizer wrappers that apply them (:class:`LimitedSummarizer`), stand in for a
  refused endpoint (:class:`RefusingSummarizer`), and make every failure of a visitor's
  endpoint read alike (:class:`UniformFailures`).

Every refusal names its limit and its setting. No Streamlit here; the settings are read
by :mod:`~compactlens_inspector.serving.hosting`.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from compactlens import Summarizer
from compactlens.summarizers import SummaryRequest, SummaryResponse, is_offline

DEFAULT_REQUESTS_PER_MINUTE = 10
DEFAULT_MAX_REQUEST_TOKENS = 32_000
DEFAULT_SERVER_RPM = 30
DEFAULT_SERVER_TPM = 250_000
ENV_RPM = "COMPACTLENS_SUMMARY_RPM"
ENV_MAX_TOKENS = "COMPACTLENS_SUMMARY_MAX_TOKENS"
ENV_SERVER_RPM = "COMPACTLENS_SERVER_RPM"
ENV_SERVER_TPM = "COMPACTLENS_SERVER_TPM"
#: Visitors see this whatever went wrong with their endpoint; the cause goes to the log.
ENDPOINT_FAILED = (
    "The endpoint did not answer with a summary. This server does not say why; its "
    "operator's log has the cause."
)
LOG = logging.getLogger("compactlens_inspector.endpoints")


class SummaryRefused(RuntimeError):
    """A summary request the policy does not send (the message says why)."""


class SummaryLimitReached(SummaryRefused):
    """A summary request refused by a limit (the message names it and its setting)."""


class EndpointFailed(SummaryRefused):
    """A visitor's endpoint failed; the message is :data:`ENDPOINT_FAILED`, always."""


_O200K_MODELS = re.compile(r"^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4)([-.:].*)?$")
#: Added to every request's count: the chat format's own tokens around two messages.
REQUEST_OVERHEAD = 16


class TokenCounter:
    """Counts a summary request so that it is never under-counted.

    For a model on OpenAI's ``o200k_base`` encoding (gpt-4o, gpt-4.1, gpt-5, o-series),
    the exact count with that tokenizer (offline, built once, on first use); for any
    other model, the UTF-8 bytes of the text: a byte-level tokenizer (tiktoken, or
    SentencePiece with byte fallback) makes at most one token per byte. Characters / 4
    under-counted Chinese text 2.6x and rare CJK characters 16x; bytes were at least the
    o200k count on every text measured (``docs/deploy.md``). Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokenizer: Any = None
        self._failed = False

    def _o200k(self) -> Any:
        with self._lock:
            if self._tokenizer is None and not self._failed:
                try:
                    from compactlens import TiktokenTokenizer

                    self._tokenizer = TiktokenTokenizer("o200k_base")
                except Exception:  # no encoding installed: bytes, which over-count
                    LOG.warning("o200k_base is not available; counting bytes", exc_info=True)
                    self._failed = True
            return self._tokenizer

    def count(self, request: SummaryRequest, model: str | None = None) -> int:
        """Input tokens (prompt and transcript) plus the output allowance."""
        texts = (request.prompt, request.user_content)
        tokenizer = self._o200k() if model and _O200K_MODELS.match(model) else None
        if tokenizer is not None:
            tokens = sum(tokenizer.count_tokens(t) for t in texts)
        else:
            tokens = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
        return tokens + REQUEST_OVERHEAD + request.max_output_tokens


def _per_minute(n: int, what: str) -> str:
    return f"{n:,} {what}{'s' if n != 1 else ''} a minute"


class ServerBudget:
    """For the whole server process, across sessions: at most ``requests_per_minute``
    summary requests and ``tokens_per_minute`` tokens (as counted by ``counter``) in any
    60 s. One per process (``state.endpoints`` keeps it in ``st.cache_resource``).
    Thread-safe; ``clock`` returns seconds (monotonic)."""

    def __init__(
        self,
        requests_per_minute: int = DEFAULT_SERVER_RPM,
        tokens_per_minute: int = DEFAULT_SERVER_TPM,
        *,
        clock: Callable[[], float] = time.monotonic,
        counter: TokenCounter | None = None,
    ) -> None:
        if requests_per_minute < 1 or tokens_per_minute < 1:
            raise ValueError("limits must be at least 1")
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.counter = counter or TokenCounter()
        self._clock = clock
        self._sent: deque[tuple[float, int]] = deque()
        self._tokens = 0
        self._lock = threading.Lock()

    def _expire(self, now: float) -> None:
        while self._sent and now - self._sent[0][0] >= 60.0:
            self._tokens -= self._sent.popleft()[1]

    def used(self) -> tuple[int, int]:
        """Requests and tokens sent in the last 60 s."""
        with self._lock:
            self._expire(self._clock())
            return len(self._sent), self._tokens

    def admit(self, tokens: int) -> None:
        """Count a request of ``tokens`` as sent, or raise :class:`SummaryLimitReached`."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            if len(self._sent) >= self.requests_per_minute:
                limit = _per_minute(self.requests_per_minute, "summary request")
                setting = ENV_SERVER_RPM
            elif self._tokens + tokens > self.tokens_per_minute:
                limit = _per_minute(self.tokens_per_minute, "token")
                setting = ENV_SERVER_TPM
            else:
                self._sent.append((now, tokens))
                self._tokens += tokens
                return
            wait = max(1, round(60.0 - (now - self._sent[0][0]))) if self._sent else 60
        raise SummaryLimitReached(
            f"Server limit reached: at most {limit} for everyone using this server "
            f"({setting}). Try again in {wait} s (cached summaries still answer)."
        )


class SummaryLimiter:
    """Per browser session: at most ``requests_per_minute`` requests in any 60 s, and at
    most ``max_request_tokens`` per request (counted by :class:`TokenCounter`); with a
    ``budget``, each request must also fit the server-wide :class:`ServerBudget`.

    ``clock`` returns seconds (monotonic); tests inject their own. Thread-safe.
    """

    def __init__(
        self,
        requests_per_minute: int = DEFAULT_REQUESTS_PER_MINUTE,
        max_request_tokens: int = DEFAULT_MAX_REQUEST_TOKENS,
        *,
        clock: Callable[[], float] = time.monotonic,
        budget: ServerBudget | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        if requests_per_minute < 1 or max_request_tokens < 1:
            raise ValueError("limits must be at least 1")
        self.requests_per_minute = requests_per_minute
        self.max_request_tokens = max_request_tokens
        self.budget = budget
        self.counter = counter or (budget.counter if budget else TokenCounter())
        self._clock = clock
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()
        self.refusals = 0
        self.last_refusal = ""

    def request_tokens(self, request: SummaryRequest, model: str | None = None) -> int:
        """The counted size of ``request``: prompt and transcript, plus the output allowance."""
        return self.counter.count(request, model)

    def used(self) -> int:
        """Requests sent in the last 60 s."""
        with self._lock:
            self._expire(self._clock())
            return len(self._sent)

    def _expire(self, now: float) -> None:
        while self._sent and now - self._sent[0] >= 60.0:
            self._sent.popleft()

    def _refusal(self, tokens: int, now: float) -> str:
        if tokens > self.max_request_tokens:
            return (
                f"Summary request refused: {tokens:,} tokens (counted), over the limit of "
                f"{self.max_request_tokens:,} tokens per request ({ENV_MAX_TOKENS})."
            )
        if len(self._sent) >= self.requests_per_minute:
            wait = max(1, round(60.0 - (now - self._sent[0])))
            n = self.requests_per_minute
            return (
                f"Summary limit reached: at most {n} summary request{'s' if n != 1 else ''} "
                f"a minute in this session ({ENV_RPM}). Try again in {wait} s (cached "
                "summaries still answer)."
            )
        return ""

    def admit(self, request: SummaryRequest, model: str | None = None) -> None:
        """Count ``request`` as sent, or raise :class:`SummaryLimitReached`."""
        tokens = self.request_tokens(request, model)
        with self._lock:
            now = self._clock()
            self._expire(now)
            message = self._refusal(tokens, now)
            if not message:
                try:
                    if self.budget is not None:
                        self.budget.admit(tokens)
                except SummaryLimitReached as exc:
                    message = str(exc)
                else:
                    self._sent.append(now)
                    return
            self.refusals += 1
            self.last_refusal = message
        raise SummaryLimitReached(message)


class RefusingSummarizer:
    """Stands in for an endpoint the policy refuses: every request raises, nothing is sent."""

    offline = False

    def __init__(self, problem: str) -> None:
        self.problem = problem

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        raise SummaryRefused(self.problem)


class _Wrapper:
    inner: Summarizer

    @property
    def offline(self) -> bool:
        return is_offline(self.inner)

    @property
    def model(self) -> str | None:
        value: Any = getattr(self.inner, "model", None)
        return value if isinstance(value, str) else None


class LimitedSummarizer(_Wrapper):
    """Wraps a (paid) summarizer: each request first passes the session's limiter (and
    through it the server's budget).

    Put it inside the caching summarizer, so answers from the cache are never counted.
    """

    def __init__(self, inner: Summarizer, limiter: SummaryLimiter) -> None:
        self.inner = inner
        self.limiter = limiter

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.limiter.admit(request, self.model)
        return self.inner.summarize(request)


class UniformFailures(_Wrapper):
    """Wraps the summarizer of a visitor's endpoint: whatever fails (refused address,
    connection, timeout, HTTP status, body) raises :class:`EndpointFailed` with the one
    message :data:`ENDPOINT_FAILED`, so the endpoint's answers tell a visitor nothing
    about the server's network; the cause goes to the operator's log."""

    def __init__(self, inner: Summarizer, base_url: str) -> None:
        self.inner = inner
        self.base_url = base_url

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        try:
            return self.inner.summarize(request)
        except Exception as exc:
            LOG.warning(
                "visitor endpoint %s failed: %s: %s", self.base_url, type(exc).__name__, exc
            )
            raise EndpointFailed(ENDPOINT_FAILED) from None


__all__ = [
    "DEFAULT_MAX_REQUEST_TOKENS",
    "DEFAULT_REQUESTS_PER_MINUTE",
    "DEFAULT_SERVER_RPM",
    "DEFAULT_SERVER_TPM",
    "ENDPOINT_FAILED",
    "EndpointFailed",
    "LimitedSummarizer",
    "RefusingSummarizer",
    "ServerBudget",
    "SummaryLimitReached",
    "SummaryLimiter",
    "SummaryRefused",
    "TokenCounter",
    "UniformFailures",
]
