"""The operator's ``OPENAI_*`` credentials never reach an endpoint the summarizer was not
told to trust (issue 27, High finding 2).

The ``openai`` client reads the organization, the project, the admin key and
``OPENAI_CUSTOM_HEADERS`` from the environment by itself and sends them to whatever
endpoint it calls (an ``Authorization`` line in the custom headers even replaces the key
given). A hosted inspector builds a visitor's summarizer with ``environment=False``; the
real client then talks to a local server that records what it received.
"""

from __future__ import annotations

import asyncio

import pytest
from chat_server import ChatServer

from compactlens import OpenAISummarizer
from compactlens.summarizers import SummaryRequest

OPERATOR_ENV = {
    "OPENAI_API_KEY": "sk-operator-key",
    "OPENAI_ADMIN_KEY": "sk-admin-operator",
    "OPENAI_ORG_ID": "org-operator",
    "OPENAI_PROJECT_ID": "proj-operator",
    "OPENAI_CUSTOM_HEADERS": "Authorization: Bearer sk-operator-header\nX-Operator-Secret: s3cret",
    "OPENAI_WEBHOOK_SECRET": "whsec-operator",
}
SECRETS = ("operator", "s3cret")


def _request() -> SummaryRequest:
    return SummaryRequest(
        messages=(), prompt="Summarize.", transcript_json="[]", max_output_tokens=50
    )


def _headers(server: ChatServer) -> dict[str, str]:
    """The last request's headers, names lower-cased."""
    return {k.lower(): v for k, v in server.requests[-1].headers.items()}


def _leaks(headers: dict[str, str]) -> list[str]:
    return [f"{k}: {v}" for k, v in headers.items() if any(s in v for s in SECRETS)]


@pytest.fixture
def operator_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in OPERATOR_ENV.items():
        monkeypatch.setenv(name, value)


def test_the_attack_reproduces_with_the_environment(
    operator_env: None, chat_server: ChatServer
) -> None:
    """What the finding describes: by default the client sends the operator's values."""
    OpenAISummarizer("m", base_url=chat_server.base_url, api_key="sk-visitor").summarize(_request())
    headers = _headers(chat_server)
    assert _leaks(headers), headers
    assert headers.get("authorization") == "Bearer sk-operator-header"


@pytest.mark.parametrize("asynchronous", [False, True])
def test_no_operator_credential_reaches_a_visitor_endpoint(
    operator_env: None, chat_server: ChatServer, asynchronous: bool
) -> None:
    summarizer = OpenAISummarizer(
        "m", base_url=chat_server.base_url, api_key="sk-visitor", environment=False
    )
    if asynchronous:
        asyncio.run(summarizer.asummarize(_request()))
    else:
        summarizer.summarize(_request())
    headers = _headers(chat_server)
    assert _leaks(headers) == []
    assert headers["authorization"] == "Bearer sk-visitor"
    assert "openai-organization" not in headers
    assert "openai-project" not in headers
    assert "x-operator-secret" not in headers


def test_without_a_key_nothing_from_the_environment_is_sent(
    operator_env: None, chat_server: ChatServer
) -> None:
    OpenAISummarizer("m", base_url=chat_server.base_url, environment=False).summarize(_request())
    headers = _headers(chat_server)
    assert _leaks(headers) == []
    assert headers["authorization"] == "Bearer not-needed"


def test_explicit_values_are_sent_as_given(operator_env: None, chat_server: ChatServer) -> None:
    summarizer = OpenAISummarizer(
        "m",
        base_url=chat_server.base_url,
        api_key="sk-visitor",
        organization="org-visitor",
        project="proj-visitor",
        default_headers={"X-Trace": "t1"},
        environment=False,
    )
    summarizer.summarize(_request())
    headers = _headers(chat_server)
    assert headers["openai-organization"] == "org-visitor"
    assert headers["openai-project"] == "proj-visitor"
    assert headers["x-trace"] == "t1"
    assert _leaks(headers) == []


def test_no_base_url_without_the_environment_means_the_official_endpoint(
    operator_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OPENAI_BASE_URL`` is an operator setting too: it is not followed."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    client = OpenAISummarizer("m", api_key="k", environment=False)._sync_client()
    assert str(client.base_url).rstrip("/") == "https://api.openai.com/v1"
