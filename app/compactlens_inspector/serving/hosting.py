"""Hosting policy: which endpoints the server's API key may reach, and limits on paid calls.

An operator who runs one inspector for a team configures (environment variables, else
Streamlit secrets; see ``docs/deploy.md``):

* ``COMPACTLENS_ALLOWED_BASE_URLS``: the base URLs the server's key may be sent to
  (comma or whitespace separated; default: the official OpenAI endpoint only);
* ``COMPACTLENS_MODELS``: the models visitors may pick with the server's key (default: any);
* ``COMPACTLENS_VISITOR_ENDPOINTS``: ``on`` (default) lets a visitor use any other
  endpoint with their own key; ``off`` limits everyone to the allowed list;
* ``COMPACTLENS_SUMMARY_RPM`` / ``COMPACTLENS_SUMMARY_MAX_TOKENS``: per browser session, at
  most this many summary requests a minute, and this many tokens per request (the
  estimated input plus the output allowance).

URLs are compared after :func:`normalize_base_url`, and the normalised URL is the one
the client is given, so what was checked is what is called. No Streamlit here: the
session state and the widgets live in ``state`` and ``components/summarizer_settings.py``.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from compactlens import CharEstimator, Summarizer
from compactlens.summarizers import SummaryRequest, SummaryResponse, is_offline

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
DEFAULT_REQUESTS_PER_MINUTE = 10
DEFAULT_MAX_REQUEST_TOKENS = 32_000
#: Sent to an endpoint that gets no key (local servers such as Ollama ignore it).
NO_KEY = "not-needed"

ENV_ALLOWED = "COMPACTLENS_ALLOWED_BASE_URLS"
ENV_MODELS = "COMPACTLENS_MODELS"
ENV_VISITOR = "COMPACTLENS_VISITOR_ENDPOINTS"
ENV_RPM = "COMPACTLENS_SUMMARY_RPM"
ENV_MAX_TOKENS = "COMPACTLENS_SUMMARY_MAX_TOKENS"
SETTINGS = (ENV_ALLOWED, ENV_MODELS, ENV_VISITOR, ENV_RPM, ENV_MAX_TOKENS)

_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST = re.compile(r"^[a-z0-9]([a-z0-9\-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9\-]*[a-z0-9])?)*$")
_BAD_CHARS = re.compile(r"[\s\\\x00-\x1f\x7f%]")


class EndpointError(ValueError):
    """A base URL that cannot be used; the message says why (never with a key in it)."""


class HostingConfigError(ValueError):
    """An operator setting that cannot be read; the message names the setting."""


class SummaryRefused(RuntimeError):
    """A summary request the policy does not send (the message says why)."""


class SummaryLimitReached(SummaryRefused):
    """A summary request refused by the session's limits (the message says which)."""


# -- URLs ----------------------------------------------------------------------------------------


def normalize_base_url(url: str) -> str:
    """``url`` in one canonical spelling, or :class:`EndpointError`.

    Empty means the official endpoint. Scheme and host are lower-cased, a default port
    and a trailing slash are dropped. Refused: schemes other than http(s), user names or
    passwords (``https://api.openai.com@evil.example``), query strings, fragments,
    backslashes, whitespace, percent escapes, ``.``/``..`` path segments and non-ASCII
    or malformed host names.
    """
    text = url.strip()
    if not text:
        return OFFICIAL_BASE_URL
    if _BAD_CHARS.search(text):
        raise EndpointError("a base URL may not contain spaces, backslashes or % escapes")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise EndpointError(f"not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise EndpointError("a base URL starts with https:// (or http://)")
    if "@" in parts.netloc:
        raise EndpointError("a base URL may not contain a user name or password (@)")
    if parts.query or parts.fragment or "?" in text or "#" in text:
        raise EndpointError("a base URL may not have a query (?) or fragment (#)")
    host = (parts.hostname or "").rstrip(".")
    if not _HOST.match(host):
        raise EndpointError("a base URL needs a plain host name (ASCII letters, digits, - and .)")
    segments = [s for s in parts.path.split("/") if s]
    if any(s in (".", "..") for s in segments):
        raise EndpointError("a base URL path may not contain . or .. segments")
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = "/" + "/".join(segments) if segments else ""
    return f"{scheme}://{netloc}{path}"


# -- the operator's policy -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostingPolicy:
    """What the operator allows. ``allowed_base_urls`` are normalised."""

    allowed_base_urls: tuple[str, ...] = (OFFICIAL_BASE_URL,)
    models: tuple[str, ...] = ()
    visitor_endpoints: bool = True
    requests_per_minute: int = DEFAULT_REQUESTS_PER_MINUTE
    max_request_tokens: int = DEFAULT_MAX_REQUEST_TOKENS

    def allows(self, base_url: str) -> bool:
        """Whether the server's key may be sent to ``base_url`` (any spelling)."""
        try:
            return normalize_base_url(base_url) in self.allowed_base_urls
        except EndpointError:
            return False


#: The policy when the operator's settings cannot be read: the server's key goes nowhere.
LOCKED_POLICY = HostingPolicy(allowed_base_urls=(), visitor_endpoints=True)


def _items(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v for v in re.split(r"[,\s]+", value) if v]
    if isinstance(value, Iterable):
        return [str(v).strip() for v in value if str(v).strip()]
    return [str(value)]


def _positive(name: str, value: Any) -> int:
    text = str(value).strip().replace("_", "").replace(",", "")
    if not text.isdigit() or int(text) < 1:
        raise HostingConfigError(f"{name} must be a whole number of at least 1, got {value!r}")
    return int(text)


def _switch(name: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text in ("on", "true", "1", "yes"):
        return True
    if text in ("off", "false", "0", "no"):
        return False
    raise HostingConfigError(f"{name} must be on or off, got {value!r}")


def policy_from_settings(
    env: Mapping[str, str], secrets: Mapping[str, Any] | None = None
) -> HostingPolicy:
    """The policy from environment variables, else Streamlit secrets (same names).

    Raises :class:`HostingConfigError` naming the setting that cannot be read.
    """

    def get(name: str) -> Any:
        if env.get(name):
            return env[name]
        return (secrets or {}).get(name)

    allowed: tuple[str, ...] = (OFFICIAL_BASE_URL,)
    if get(ENV_ALLOWED) is not None:
        urls = []
        for item in _items(get(ENV_ALLOWED)):
            try:
                urls.append(normalize_base_url(item))
            except EndpointError as exc:
                raise HostingConfigError(f"{ENV_ALLOWED}: {item!r}: {exc}") from None
        allowed = tuple(dict.fromkeys(urls))
    models = tuple(_items(get(ENV_MODELS))) if get(ENV_MODELS) is not None else ()
    visitor = get(ENV_VISITOR)
    rpm, cap = get(ENV_RPM), get(ENV_MAX_TOKENS)
    return HostingPolicy(
        allowed_base_urls=allowed,
        models=models,
        visitor_endpoints=True if visitor is None else _switch(ENV_VISITOR, visitor),
        requests_per_minute=DEFAULT_REQUESTS_PER_MINUTE if rpm is None else _positive(ENV_RPM, rpm),
        max_request_tokens=(
            DEFAULT_MAX_REQUEST_TOKENS if cap is None else _positive(ENV_MAX_TOKENS, cap)
        ),
    )


# -- which key goes where ------------------------------------------------------------------------

Owner = Literal["server", "visitor", "none"]


@dataclass(frozen=True, slots=True)
class Access:
    """The endpoint a summary request goes to and the key it carries (hidden from repr).

    ``owner`` says whose key it is; ``problem`` (when not empty) is why no request may
    be sent at all, and then ``api_key`` is empty.
    """

    base_url: str
    owner: Owner
    api_key: str = field(default="", repr=False)
    problem: str = ""


def resolve_access(
    policy: HostingPolicy,
    base_url: str,
    model: str,
    *,
    server_key: str | None,
    visitor_key: str | None,
) -> Access:
    """Decide the key for a request to ``base_url``.

    A visitor's own key goes with their request (to any endpoint the policy permits). The
    server's key goes only to an allowed endpoint, and only with an allowed model. Any
    other endpoint gets no key when the server has none (a local server), and is refused
    while the server has one: the visitor must enter their own.
    """
    try:
        url = normalize_base_url(base_url)
    except EndpointError as exc:
        return Access(base_url="", owner="none", problem=f"Base URL: {exc}.")
    allowed = url in policy.allowed_base_urls
    if not allowed and not policy.visitor_endpoints:
        return Access(url, "none", problem=_only_allowed(policy))
    if visitor_key:
        return Access(url, "visitor", api_key=visitor_key)
    if allowed and server_key:
        if policy.models and model not in policy.models:
            return Access(
                url,
                "none",
                problem=f"With the server's key the model is one of: {', '.join(policy.models)}.",
            )
        return Access(url, "server", api_key=server_key)
    if server_key:
        return Access(
            url,
            "none",
            problem="The server's API key is only sent to the endpoints the operator allows. "
            "Enter your own API key for this endpoint, or choose an allowed one.",
        )
    return Access(url, "none", api_key=NO_KEY)


def _only_allowed(policy: HostingPolicy) -> str:
    listed = ", ".join(policy.allowed_base_urls) or "none"
    return f"This server only calls the endpoints its operator allows: {listed}."


# -- limits --------------------------------------------------------------------------------------


class SummaryLimiter:
    """Per browser session: at most ``requests_per_minute`` requests in any 60 s, and at
    most ``max_request_tokens`` per request (estimated input plus output allowance).

    ``clock`` returns seconds (monotonic); tests inject their own. Thread-safe.
    """

    def __init__(
        self,
        requests_per_minute: int = DEFAULT_REQUESTS_PER_MINUTE,
        max_request_tokens: int = DEFAULT_MAX_REQUEST_TOKENS,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if requests_per_minute < 1 or max_request_tokens < 1:
            raise ValueError("limits must be at least 1")
        self.requests_per_minute = requests_per_minute
        self.max_request_tokens = max_request_tokens
        self._clock = clock
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()
        self.refusals = 0
        self.last_refusal = ""

    def request_tokens(self, request: SummaryRequest) -> int:
        """The estimated size of ``request``: prompt and transcript, plus the output allowance."""
        text = request.prompt + request.user_content
        return CharEstimator().count_tokens(text) + request.max_output_tokens

    def used(self) -> int:
        """Requests sent in the last 60 s."""
        with self._lock:
            self._expire(self._clock())
            return len(self._sent)

    def _expire(self, now: float) -> None:
        while self._sent and now - self._sent[0] >= 60.0:
            self._sent.popleft()

    def admit(self, request: SummaryRequest) -> None:
        """Count ``request`` as sent, or raise :class:`SummaryLimitReached`."""
        tokens = self.request_tokens(request)
        with self._lock:
            now = self._clock()
            self._expire(now)
            if tokens > self.max_request_tokens:
                message = (
                    f"Summary request refused: about {tokens:,} tokens, over the limit of "
                    f"{self.max_request_tokens:,} tokens per request."
                )
            elif len(self._sent) >= self.requests_per_minute:
                wait = max(1, round(60.0 - (now - self._sent[0])))
                n = self.requests_per_minute
                message = (
                    f"Summary limit reached: at most {n} summary request{'s' if n != 1 else ''} "
                    f"a minute in this session. Try again in {wait} s (cached summaries "
                    "still answer)."
                )
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


class LimitedSummarizer:
    """Wraps a (paid) summarizer: each request first passes the session's limiter.

    Put it inside the caching summarizer, so answers from the cache are never counted.
    """

    def __init__(self, inner: Summarizer, limiter: SummaryLimiter) -> None:
        self.inner = inner
        self.limiter = limiter

    @property
    def offline(self) -> bool:
        return is_offline(self.inner)

    @property
    def model(self) -> str | None:
        value: Any = getattr(self.inner, "model", None)
        return value if isinstance(value, str) else None

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.limiter.admit(request)
        return self.inner.summarize(request)


__all__ = [
    "LOCKED_POLICY",
    "NO_KEY",
    "OFFICIAL_BASE_URL",
    "Access",
    "EndpointError",
    "HostingConfigError",
    "HostingPolicy",
    "LimitedSummarizer",
    "RefusingSummarizer",
    "SummaryLimitReached",
    "SummaryLimiter",
    "SummaryRefused",
    "normalize_base_url",
    "policy_from_settings",
    "resolve_access",
]
