"""Issue 27, finding 7: paid calls are limited for the whole server, not per browser session.

A reload (a fresh session) used to get a fresh allowance, any model could be used with the
server's key, and a request's size was estimated as characters / 4, which under-counts
Chinese text 2.6x and rare CJK characters 16x. Here: sessions share one server budget
(``COMPACTLENS_SERVER_RPM`` / ``COMPACTLENS_SERVER_TPM``), the server's key goes only
with a short list of cheap models unless the operator lists others, and requests are
counted exactly (o200k_base) or by UTF-8 bytes, never under.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from apptest_helpers import no_exceptions, plain, texts
from test_hosting import SERVER_KEY, _lab
from test_security_summarizer import _chat_server_module

from compactlens import CharEstimator, TiktokenTokenizer
from compactlens.model import Message, TextPart
from compactlens.summarizers import FakeSummarizer, SummaryRequest, build_summary_request
from compactlens_inspector.serving.hosting import (
    DEFAULT_MODELS,
    SETTINGS,
    HostingConfigError,
    policy_from_settings,
)
from compactlens_inspector.serving.limits import (
    LimitedSummarizer,
    ServerBudget,
    SummaryLimiter,
    SummaryLimitReached,
    TokenCounter,
)
from compactlens_inspector.serving.preflight import settings_problems
from compactlens_inspector.state.endpoints import _server_budget


@pytest.fixture
def server() -> Iterator[Any]:
    with _chat_server_module().ChatServer() as srv:
        yield srv


def _operator(monkeypatch: pytest.MonkeyPatch, server: Any, **settings: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("COMPACTLENS_ALLOWED_BASE_URLS", server.base_url)
    for name, value in settings.items():
        monkeypatch.setenv(f"COMPACTLENS_{name}", value)


# -- across sessions -----------------------------------------------------------------------------


def test_new_sessions_share_the_server_budget(app, server, monkeypatch) -> None:
    """Four visitors (four fresh sessions, as after a reload), each asking for a summary
    no other asked for: the server sends two, the limit, and says which limit stopped
    the others."""
    models = ["model-1", "model-2", "model-3", "model-4"]
    _operator(monkeypatch, server, SERVER_RPM="2", MODELS=" ".join(models))
    sessions = [_lab(app, server.base_url, model=m) for m in models]
    assert len(server.requests) == 2
    refused = [plain(texts(at)) for at in sessions[2:]]
    for body in refused:
        assert "Server limit reached: at most 2 summary requests a minute for everyone" in body
        assert "(COMPACTLENS_SERVER_RPM)" in body
    # The per-session limit (10 a minute) was never the reason.
    assert all("in this session (COMPACTLENS_SUMMARY_RPM)" not in b for b in refused)
    # A session that was refused is not given a cached refusal: still refused, still 2 sent.
    sessions[3].run()
    assert len(server.requests) == 2


def test_the_server_budget_counts_tokens_too(app, server, monkeypatch) -> None:
    """The tokens-a-minute limit holds across sessions as well: the first request fits,
    the second session's does not."""
    _operator(monkeypatch, server, MODELS="model-1 model-2")
    first = _lab(app, server.base_url, model="model-1")
    assert len(server.requests) == 1
    sent = _server_budget(30, 250_000).used()[1]
    assert sent > 0
    monkeypatch.setenv("COMPACTLENS_SERVER_TPM", str(sent + sent // 2))
    monkeypatch.setenv("COMPACTLENS_SUMMARY_MAX_TOKENS", str(sent + sent // 2))
    _server_budget(30, sent + sent // 2).admit(sent)  # as if that request had been sent
    second = _lab(app, server.base_url, model="model-2")
    assert len(server.requests) == 1
    body = plain(texts(second))
    assert "Server limit reached: at most" in body and "(COMPACTLENS_SERVER_TPM)" in body
    no_exceptions(first)


def test_the_server_budget_is_thread_safe() -> None:
    budget = ServerBudget(25, 10_000_000)
    admitted: list[int] = []

    def visitor() -> None:
        for _ in range(10):
            try:
                budget.admit(100)
                admitted.append(1)
            except SummaryLimitReached:
                pass

    threads = [threading.Thread(target=visitor) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(admitted) == 25 and budget.used() == (25, 2_500)


def test_the_server_budget_frees_up_after_a_minute() -> None:
    now = [1000.0]
    budget = ServerBudget(10, 1_000, clock=lambda: now[0])
    budget.admit(600)
    with pytest.raises(SummaryLimitReached, match=r"1,000 tokens a minute.*SERVER_TPM.*in 60 s"):
        budget.admit(500)
    now[0] += 59
    with pytest.raises(SummaryLimitReached):
        budget.admit(500)
    now[0] += 1
    budget.admit(500)
    assert budget.used() == (1, 500)


def test_server_limits_are_settings() -> None:
    policy = policy_from_settings(
        {"COMPACTLENS_SERVER_RPM": "5"}, {"COMPACTLENS_SERVER_TPM": 90_000}
    )
    assert (policy.server_requests_per_minute, policy.server_tokens_per_minute) == (5, 90_000)
    defaults = policy_from_settings({})
    assert (defaults.server_requests_per_minute, defaults.server_tokens_per_minute) == (
        30,
        250_000,
    )
    with pytest.raises(HostingConfigError, match="COMPACTLENS_SERVER_RPM"):
        policy_from_settings({"COMPACTLENS_SERVER_RPM": "0"})
    with pytest.raises(HostingConfigError, match=r"COMPACTLENS_SUMMARY_MAX_TOKENS .* more than"):
        policy_from_settings({"COMPACTLENS_SERVER_TPM": "1000"})
    # make serve's preflight reads them the same way (environment, then secrets).
    problems = settings_problems(
        {"COMPACTLENS_SERVER_RPM": "lots"},
        {"COMPACTLENS_SERVER_TPM": 0, "COMPACTLENS_ALLOWED_PRIVATE_HOSTS": ["no such host!"]},
    )
    assert len(problems) == 1 and "COMPACTLENS_SERVER_RPM" in problems[0]
    assert "COMPACTLENS_SERVER_TPM" in settings_problems({}, {"COMPACTLENS_SERVER_TPM": 0})[0]
    assert (
        "COMPACTLENS_ALLOWED_PRIVATE_HOSTS"
        in settings_problems({"COMPACTLENS_ALLOWED_PRIVATE_HOSTS": "no_such host!"}, {})[0]
    )
    assert {"COMPACTLENS_SERVER_RPM", "COMPACTLENS_SERVER_TPM"} <= set(SETTINGS)
    assert "COMPACTLENS_ALLOWED_PRIVATE_HOSTS" in SETTINGS  # read from secrets too


# -- models ----------------------------------------------------------------------------------------


def test_the_server_key_goes_only_with_a_cheap_model_by_default(app, server, monkeypatch) -> None:
    _operator(monkeypatch, server)
    at = _lab(app, server.base_url, model="gpt-4.5-preview")
    # Only the app's default model (gpt-4o-mini, on the list) was asked before the visitor
    # typed theirs; the expensive one never reached the endpoint.
    assert [r.body["model"] for r in server.requests] == ["gpt-4o-mini"]
    body = plain(texts(at))
    assert "With the server's key the model is one of: gpt-4o-mini" in body
    assert "(COMPACTLENS_MODELS)" in body
    at.text_input(key="sb_model").set_value("gpt-4.1-nano").run()
    no_exceptions(at)
    assert [r.body["model"] for r in server.requests] == ["gpt-4o-mini", "gpt-4.1-nano"]


def test_the_model_list_is_the_operators() -> None:
    assert policy_from_settings({}).models == DEFAULT_MODELS
    assert "gpt-4o-mini" in DEFAULT_MODELS and "gpt-4o" not in DEFAULT_MODELS
    assert policy_from_settings({"COMPACTLENS_MODELS": "llama3 qwen"}).models == ("llama3", "qwen")
    assert policy_from_settings({"COMPACTLENS_MODELS": "*"}).models == ()  # any


# -- counting ------------------------------------------------------------------------------------


def _request(text: str, output: int = 100) -> SummaryRequest:
    msgs = [Message(role="user", parts=(TextPart(text),))]
    return build_summary_request(msgs, max_output_tokens=output)


def _chars_over_4(request: SummaryRequest) -> int:
    """The old count (characters / 4), which the cap used to trust."""
    text = request.prompt + request.user_content
    return CharEstimator().count_tokens(text) + request.max_output_tokens


def _exact(request: SummaryRequest) -> int:
    o200k = TiktokenTokenizer("o200k_base")
    return o200k.count_tokens(request.prompt) + o200k.count_tokens(request.user_content)


CHINESE = "我们今天讨论的是上下文压缩，以及如何在不丢失重要信息的情况下减少令牌数量。"
RARE_CJK = "".join(chr(0x20000 + (i * 7919) % 0xA6DF) for i in range(2_000))


@pytest.mark.parametrize(
    ("text", "model"),
    [
        (CHINESE * 220, "gpt-4o-mini"),  # counted exactly
        (CHINESE * 220, "local-llama"),  # counted in bytes
        (RARE_CJK, "gpt-4o-mini"),
        (RARE_CJK, "local-llama"),
    ],
)
def test_cjk_text_under_the_cap_by_chars_but_over_it_in_tokens_is_refused(
    text: str, model: str
) -> None:
    cap = 5_000
    request = _request(text)
    assert _chars_over_4(request) < cap < _exact(request) + request.max_output_tokens
    inner = FakeSummarizer(model=model)
    limited = LimitedSummarizer(inner, SummaryLimiter(10, cap))
    with pytest.raises(SummaryLimitReached, match=r"over the limit of 5,000 tokens per request"):
        limited.summarize(request)
    assert inner.calls == []


def test_the_count_is_never_under_the_exact_one() -> None:
    """Bytes are at least the o200k count (one token per byte at most): measured on
    English, Chinese, rare CJK, emoji sequences, combining marks and control characters."""
    counter = TokenCounter()
    texts_ = [
        "The quick brown fox. " * 200,
        CHINESE * 50,
        RARE_CJK,
        "👩‍👩‍👧‍👦🏳️‍🌈🧑🏽‍🚀" * 100,
        "a\u0301\u0302\u0303\u0304" * 500,
        "".join(chr(i % 31 + 1) for i in range(3_000)),
    ]
    for text in texts_:
        request = _request(text, output=1)
        exact = _exact(request)
        assert counter.count(request, "local-model") >= exact
        assert counter.count(request, "gpt-4o-mini") >= exact
