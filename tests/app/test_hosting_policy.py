"""The hosting policy without Streamlit: URL normalisation, the operator's settings, which
key goes to which endpoint, and the per-session limits (with an injected clock)."""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactlens.model import Message, TextPart
from compactlens.summarizers import (
    CachingSummarizer,
    FakeSummarizer,
    SummaryRequest,
    build_summary_request,
)
from compactlens_inspector.serving.egress import PrivateHosts
from compactlens_inspector.serving.hosting import (
    NO_KEY,
    OFFICIAL_BASE_URL,
    EndpointError,
    HostingConfigError,
    HostingPolicy,
    normalize_base_url,
    policy_from_settings,
    resolve_access,
)
from compactlens_inspector.serving.limits import (
    LimitedSummarizer,
    SummaryLimiter,
    SummaryLimitReached,
)

SERVER_KEY = "sk-server-0123456789abcdef"
VISITOR_KEY = "sk-visitor-fedcba9876543210"


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("", OFFICIAL_BASE_URL),
        ("https://api.openai.com/v1", OFFICIAL_BASE_URL),
        ("HTTPS://API.OpenAI.com/v1/", OFFICIAL_BASE_URL),
        ("https://api.openai.com:443/v1", OFFICIAL_BASE_URL),
        ("https://api.openai.com./v1//", OFFICIAL_BASE_URL),
        ("  https://api.openai.com/v1  ", OFFICIAL_BASE_URL),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"),
        ("http://localhost:80", "http://localhost"),
        ("https://api.openai.com", "https://api.openai.com"),
    ],
)
def test_spellings_of_one_endpoint_normalise_alike(spelling: str, expected: str) -> None:
    assert normalize_base_url(spelling) == expected


@pytest.mark.parametrize(
    "url",
    [
        "https://api.openai.com@evil.example/v1",
        "https://api.openai.com:443@evil.example/v1",
        "https://user:pass@api.openai.com/v1",
        "https://evil.example#@api.openai.com/v1",
        "https://evil.example?@api.openai.com/v1",
        "https://api.openai.com\\@evil.example/v1",
        "https://api.openai.com%40evil.example/v1",
        "https://api.openai.com/v1/../../evil",
        "ftp://api.openai.com/v1",
        "javascript:alert(1)",
        "api.openai.com/v1",
        "https://api.openai.com:99999/v1",
        "https://xn--80ak6aa92e.com/v1 x",
        "https://аpi.openai.com/v1",  # a Cyrillic "а"
        "https:///v1",
    ],
)
def test_tricky_urls_are_refused(url: str) -> None:
    with pytest.raises(EndpointError):
        normalize_base_url(url)
    assert not HostingPolicy().allows(url)


def _numeric_not_dotted_quad(host: str) -> bool:
    """A host whose last label is a number (``2130706433``, ``127.1``, ``0x7f``) is an
    IPv4 address in some spelling: only the dotted-quad one is accepted."""
    last = host.rsplit(".", 1)[-1]
    # A hex number is "0x" and hex digits; "0xg" is a name (hypothesis found it).
    if not (last.isdigit() or re.fullmatch(r"0x[0-9a-f]*", last)):
        return False
    try:
        return str(ipaddress.IPv4Address(host)) != host
    except ValueError:
        return True


_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)


@given(
    scheme=st.sampled_from(["http", "https", "HTTPS"]),
    labels=st.lists(_LABEL, min_size=1, max_size=3),
    port=st.one_of(st.none(), st.integers(1, 65535)),
    path=st.lists(st.from_regex(r"[A-Za-z0-9_-]{1,6}", fullmatch=True), max_size=3),
    slash=st.booleans(),
    userinfo=st.sampled_from(["", "api.openai.com@", "u:p@"]),
)
def test_normalising_is_idempotent_and_never_keeps_userinfo(
    scheme: str, labels: list[str], port: int | None, path: list[str], slash: bool, userinfo: str
) -> None:
    host = ".".join(labels)
    url = f"{scheme}://{userinfo}{host}{f':{port}' if port else ''}/{'/'.join(path)}"
    url += "/" if slash else ""
    if userinfo or _numeric_not_dotted_quad(host):
        with pytest.raises(EndpointError):
            normalize_base_url(url)
        return
    once = normalize_base_url(url)
    assert normalize_base_url(once) == once
    assert "@" not in once
    assert once.split("/")[2].split(":")[0] == host


def test_policy_defaults_env_and_secrets() -> None:
    assert policy_from_settings({}) == HostingPolicy()
    env = {
        "COMPACTLENS_ALLOWED_BASE_URLS": "https://api.openai.com/v1/, http://127.0.0.1:8000/v1",
        "COMPACTLENS_MODELS": "gpt-4o-mini gpt-4.1-mini",
        "COMPACTLENS_SUMMARY_RPM": "3",
    }
    secrets = {"COMPACTLENS_SUMMARY_MAX_TOKENS": 5000, "COMPACTLENS_SUMMARY_RPM": 99}
    policy = policy_from_settings(env, secrets)
    assert policy.allowed_base_urls == (OFFICIAL_BASE_URL, "http://127.0.0.1:8000/v1")
    assert policy.models == ("gpt-4o-mini", "gpt-4.1-mini")
    assert policy.requests_per_minute == 3  # the environment wins over secrets
    assert policy.max_request_tokens == 5000
    assert policy.allows("HTTP://127.0.0.1:8000/v1/")
    listed = policy_from_settings({}, {"COMPACTLENS_ALLOWED_BASE_URLS": ["http://a.example"]})
    assert listed.allowed_base_urls == ("http://a.example",)
    off = policy_from_settings({"COMPACTLENS_VISITOR_ENDPOINTS": "off"})
    assert not off.visitor_endpoints


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("COMPACTLENS_ALLOWED_BASE_URLS", "https://api.openai.com@evil.example"),
        ("COMPACTLENS_SUMMARY_RPM", "0"),
        ("COMPACTLENS_SUMMARY_MAX_TOKENS", "lots"),
        ("COMPACTLENS_VISITOR_ENDPOINTS", "maybe"),
    ],
)
def test_a_bad_setting_is_named(name: str, value: str) -> None:
    with pytest.raises(HostingConfigError, match=name):
        policy_from_settings({name: value})


def test_the_server_key_goes_only_to_allowed_endpoints() -> None:
    policy = HostingPolicy(
        allowed_base_urls=("http://127.0.0.1:9000/v1",),
        models=("m",),
        visitor_endpoints=True,  # the default is off (issue 27, finding 8)
        private_hosts=PrivateHosts.parse(["127.0.0.1"]),  # these tests' servers are local
    )

    def decide(url: str, model: str = "m", visitor: str | None = None) -> tuple[str, str, bool]:
        acc = resolve_access(policy, url, model, server_key=SERVER_KEY, visitor_key=visitor)
        return acc.owner, acc.api_key, bool(acc.problem)

    assert decide("http://127.0.0.1:9000/v1/") == ("server", SERVER_KEY, False)
    assert decide("http://127.0.0.1:9001/v1") == ("none", "", True)
    assert decide("http://127.0.0.1:9000@127.0.0.1:9001/v1") == ("none", "", True)
    assert decide("") == ("none", "", True)  # the official endpoint is not in this list
    assert decide("http://127.0.0.1:9000/v1", model="other") == ("none", "", True)
    # The visitor's own key goes with their request, to their endpoint, with any model.
    assert decide("http://127.0.0.1:9001/v1", "other", VISITOR_KEY) == (
        "visitor",
        VISITOR_KEY,
        False,
    )
    # Without a server key nothing can leak: another endpoint gets a placeholder.
    acc = resolve_access(policy, "http://127.0.0.1:9001/v1", "x", server_key=None, visitor_key="")
    assert (acc.owner, acc.api_key, acc.problem) == ("none", NO_KEY, "")
    locked = HostingPolicy(visitor_endpoints=False)
    acc = resolve_access(locked, "http://127.0.0.1:9001", "x", server_key=None, visitor_key="k")
    assert acc.problem and not acc.api_key
    used = resolve_access(
        policy, "http://127.0.0.1:9000/v1", "m", server_key=SERVER_KEY, visitor_key=""
    )
    assert SERVER_KEY not in repr(used)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _request(i: int, words: int = 5) -> SummaryRequest:
    msgs = [Message(role="user", parts=(TextPart(f"request {i} " + "word " * words),))]
    return build_summary_request(msgs, max_output_tokens=100)


def test_requests_per_minute_with_an_injected_clock() -> None:
    clock = Clock()
    limiter = SummaryLimiter(2, 100_000, clock=clock)
    limiter.admit(_request(1))
    clock.now += 30
    limiter.admit(_request(2))
    with pytest.raises(SummaryLimitReached, match=r"at most 2 summary requests a minute.*in 30 s"):
        limiter.admit(_request(3))
    assert (limiter.used(), limiter.refusals) == (2, 1)
    clock.now += 30  # the first request is a minute old
    limiter.admit(_request(3))
    with pytest.raises(SummaryLimitReached):
        limiter.admit(_request(4))
    clock.now += 60
    assert limiter.used() == 0


def test_token_cap_per_request() -> None:
    limiter = SummaryLimiter(10, 5_000, clock=Clock())
    small, big = _request(1), _request(2, words=2_000)
    assert limiter.request_tokens(small) <= 5_000 < limiter.request_tokens(big)
    limiter.admit(small)
    with pytest.raises(SummaryLimitReached, match="over the limit of 5,000 tokens per request"):
        limiter.admit(big)
    assert limiter.used() == 1  # a refused request is not counted as sent


def test_the_cache_answers_repeats_without_counting() -> None:
    inner = FakeSummarizer()
    limiter = SummaryLimiter(1, 100_000, clock=Clock())
    summarizer = CachingSummarizer(LimitedSummarizer(inner, limiter))
    first = summarizer.summarize(_request(1))
    again = summarizer.summarize(_request(1))
    assert again.cached and again.text == first.text
    with pytest.raises(SummaryLimitReached):
        summarizer.summarize(_request(2))
    assert len(inner.calls) == 1


def test_a_summarizer_label_never_shows_a_password_in_the_url() -> None:
    from compactlens_inspector.lab.config import SummarizerSettings

    label = SummarizerSettings(
        kind="openai", base_url="https://user:s3cret@llm.example:8443/v1", model="m"
    ).label
    assert "s3cret" not in label and "user" not in label
    assert "https://llm.example:8443/v1" in label
    broken = SummarizerSettings(kind="openai", base_url="https://llm.example:99999/v1").label
    assert "an invalid URL" in broken
