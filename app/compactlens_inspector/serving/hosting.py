"""Hosting policy: which endpoints the server's API key may reach, and limits on paid calls.

An operator who runs one inspector for a team configures (environment variables, else
Streamlit secrets; see ``docs/deploy.md``):

* ``COMPACTLENS_ALLOWED_BASE_URLS``: the base URLs the server's key may be sent to
  (comma or whitespace separated; default: the official OpenAI endpoint only);
* ``COMPACTLENS_MODELS``: the models visitors may pick with the server's key (default:
  :data:`DEFAULT_MODELS`, a few cheap ones; ``*`` allows any);
* ``COMPACTLENS_VISITOR_ENDPOINTS``: ``off`` (default) limits everyone to the allowed
  list; ``on`` lets a visitor name another endpoint, which the server then reaches only
  at public addresses (:mod:`~compactlens_inspector.serving.egress`) unless the host is in
* ``COMPACTLENS_ALLOWED_PRIVATE_HOSTS`` (host names, addresses or networks);
* ``COMPACTLENS_SUMMARY_RPM`` / ``COMPACTLENS_SUMMARY_MAX_TOKENS``: per browser session, at
  most this many summary requests a minute, and this many tokens per request (input plus
  the output allowance, counted conservatively: ``limits.TokenCounter``);
* ``COMPACTLENS_SERVER_RPM`` / ``COMPACTLENS_SERVER_TPM``: for the whole server process,
  across every session, at most this many summary requests and tokens a minute
  (``limits.ServerBudget``).

The limits themselves live in :mod:`~compactlens_inspector.serving.limits` (import them
from there). URLs are compared after :func:`normalize_base_url`, and the normalised URL is the one
the client is given, so what was checked is what is called. No Streamlit here: the
session state and the widgets live in ``state`` and ``components/summarizer_settings.py``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from compactlens.summarizers import OFFICIAL_BASE_URL
from compactlens_inspector.serving.egress import PrivateHosts, literal_address
from compactlens_inspector.serving.limits import (
    DEFAULT_MAX_REQUEST_TOKENS,
    DEFAULT_REQUESTS_PER_MINUTE,
    DEFAULT_SERVER_RPM,
    DEFAULT_SERVER_TPM,
    ENV_MAX_TOKENS,
    ENV_RPM,
    ENV_SERVER_RPM,
    ENV_SERVER_TPM,
)

#: The models the server's key may be used with unless the operator lists others.
DEFAULT_MODELS = ("gpt-4o-mini", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-5-mini", "gpt-5-nano")
#: Sent to an endpoint that gets no key (local servers such as Ollama ignore it).
NO_KEY = "not-needed"

ENV_ALLOWED = "COMPACTLENS_ALLOWED_BASE_URLS"
ENV_MODELS = "COMPACTLENS_MODELS"
ENV_VISITOR = "COMPACTLENS_VISITOR_ENDPOINTS"
ENV_PRIVATE = "COMPACTLENS_ALLOWED_PRIVATE_HOSTS"
SETTINGS = (
    ENV_ALLOWED,
    ENV_MODELS,
    ENV_VISITOR,
    ENV_RPM,
    ENV_MAX_TOKENS,
    ENV_SERVER_RPM,
    ENV_SERVER_TPM,
    ENV_PRIVATE,
)

_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST = re.compile(r"^[a-z0-9]([a-z0-9\-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9\-]*[a-z0-9])?)*$")
_BAD_CHARS = re.compile(r"[\s\\\x00-\x1f\x7f%]")
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")


class EndpointError(ValueError):
    """A base URL that cannot be used; the message says why (never with a key in it)."""


class HostingConfigError(ValueError):
    """An operator setting that cannot be read; the message names the setting."""


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
    if _NUMERIC_LABEL.match(host.rsplit(".", 1)[-1]) and not _dotted_quad(host):
        raise EndpointError("a numeric host must be written as four decimal numbers (1.2.3.4)")
    segments = [s for s in parts.path.split("/") if s]
    if any(s in (".", "..") for s in segments):
        raise EndpointError("a base URL path may not contain . or .. segments")
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = "/" + "/".join(segments) if segments else ""
    return f"{scheme}://{netloc}{path}"


def _dotted_quad(host: str) -> bool:
    try:
        return str(ipaddress.IPv4Address(host)) == host
    except ValueError:
        return False


# -- the operator's policy -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostingPolicy:
    """What the operator allows. ``allowed_base_urls`` are normalised; empty ``models``
    means any model (``COMPACTLENS_MODELS=*``)."""

    allowed_base_urls: tuple[str, ...] = (OFFICIAL_BASE_URL,)
    models: tuple[str, ...] = DEFAULT_MODELS
    visitor_endpoints: bool = False
    requests_per_minute: int = DEFAULT_REQUESTS_PER_MINUTE
    max_request_tokens: int = DEFAULT_MAX_REQUEST_TOKENS
    server_requests_per_minute: int = DEFAULT_SERVER_RPM
    server_tokens_per_minute: int = DEFAULT_SERVER_TPM
    private_hosts: PrivateHosts = field(default_factory=PrivateHosts)

    def allows(self, base_url: str) -> bool:
        """Whether the server's key may be sent to ``base_url`` (any spelling)."""
        try:
            return normalize_base_url(base_url) in self.allowed_base_urls
        except EndpointError:
            return False


#: The policy when the operator's settings cannot be read: the server's key goes nowhere
#: and visitors name no endpoint.
LOCKED_POLICY = HostingPolicy(allowed_base_urls=(), visitor_endpoints=False)


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


def _base_urls(items: list[str]) -> tuple[str, ...]:
    urls = []
    for item in items:
        try:
            urls.append(normalize_base_url(item))
        except EndpointError as exc:
            raise HostingConfigError(f"{ENV_ALLOWED}: {item!r}: {exc}") from None
    return tuple(dict.fromkeys(urls))


def _models(items: list[str]) -> tuple[str, ...]:
    return () if "*" in items else tuple(dict.fromkeys(items))


def _private_hosts(items: list[str]) -> PrivateHosts:
    try:
        return PrivateHosts.parse(items)
    except ValueError as exc:
        raise HostingConfigError(f"{ENV_PRIVATE}: {exc}") from None


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

    def number(name: str, default: int) -> int:
        value = get(name)
        return default if value is None else _positive(name, value)

    def listed(name: str, read: Callable[[list[str]], Any], default: Any) -> Any:
        value = get(name)
        return default if value is None else read(_items(value))

    visitor = get(ENV_VISITOR)
    policy = HostingPolicy(
        allowed_base_urls=listed(ENV_ALLOWED, _base_urls, (OFFICIAL_BASE_URL,)),
        models=listed(ENV_MODELS, _models, DEFAULT_MODELS),
        visitor_endpoints=False if visitor is None else _switch(ENV_VISITOR, visitor),
        requests_per_minute=number(ENV_RPM, DEFAULT_REQUESTS_PER_MINUTE),
        max_request_tokens=number(ENV_MAX_TOKENS, DEFAULT_MAX_REQUEST_TOKENS),
        server_requests_per_minute=number(ENV_SERVER_RPM, DEFAULT_SERVER_RPM),
        server_tokens_per_minute=number(ENV_SERVER_TPM, DEFAULT_SERVER_TPM),
        private_hosts=listed(ENV_PRIVATE, _private_hosts, PrivateHosts()),
    )
    if policy.max_request_tokens > policy.server_tokens_per_minute:
        raise HostingConfigError(
            f"{ENV_MAX_TOKENS} ({policy.max_request_tokens:,}) is more than {ENV_SERVER_TPM} "
            f"({policy.server_tokens_per_minute:,}): no request that large could ever be sent"
        )
    return policy


# -- which key goes where ------------------------------------------------------------------------

Owner = Literal["server", "visitor", "none"]


@dataclass(frozen=True, slots=True)
class Access:
    """The endpoint a summary request goes to and the key it carries (hidden from repr).

    ``owner`` says whose key it is; ``problem`` (when not empty) is why no request may
    be sent at all, and then ``api_key`` is empty. ``guard`` is set for an endpoint a
    visitor named (not one the operator allows): the server reaches it only at public
    addresses or the private hosts listed, and its failures all read alike.
    """

    base_url: str
    owner: Owner
    api_key: str = field(default="", repr=False)
    problem: str = ""
    guard: PrivateHosts | None = None


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
    while the server has one: the visitor must enter their own. A visitor's endpoint
    written as a non-public address is refused here (a host name is checked when the
    server connects).
    """
    try:
        url = normalize_base_url(base_url)
    except EndpointError as exc:
        return Access(base_url="", owner="none", problem=f"Base URL: {exc}.")
    allowed = url in policy.allowed_base_urls
    if not allowed and not policy.visitor_endpoints:
        return Access(url, "none", problem=_only_allowed(policy))
    guard = None if allowed else policy.private_hosts
    if guard is not None and (problem := _private_literal(url, guard)):
        return Access(url, "none", problem=problem)
    if visitor_key:
        return Access(url, "visitor", api_key=visitor_key, guard=guard)
    if allowed and server_key:
        if policy.models and model not in policy.models:
            listed = ", ".join(policy.models)
            return Access(
                url,
                "none",
                problem=f"With the server's key the model is one of: {listed} ({ENV_MODELS}).",
            )
        return Access(url, "server", api_key=server_key)
    if server_key:
        return Access(
            url,
            "none",
            problem="The server's API key is only sent to the endpoints the operator allows. "
            "Enter your own API key for this endpoint, or choose an allowed one.",
        )
    return Access(url, "none", api_key=NO_KEY, guard=guard)


def _only_allowed(policy: HostingPolicy) -> str:
    listed = ", ".join(policy.allowed_base_urls) or "none"
    return f"This server only calls the endpoints its operator allows: {listed}."


def _private_literal(url: str, guard: PrivateHosts) -> str:
    host = (urlsplit(url).hostname or "").rstrip(".")
    address = literal_address(host)
    if address is None or guard.allows(host, address):
        return ""
    return (
        f"This server does not call private, loopback or link-local addresses such as "
        f"{address} for visitors (the operator can list hosts in {ENV_PRIVATE})."
    )


__all__ = [
    "DEFAULT_MODELS",
    "LOCKED_POLICY",
    "NO_KEY",
    "OFFICIAL_BASE_URL",
    "Access",
    "EndpointError",
    "HostingConfigError",
    "HostingPolicy",
    "normalize_base_url",
    "policy_from_settings",
    "resolve_access",
]
