"""A summarizer on the official ``openai`` client (Chat Completions).

Works against any OpenAI-compatible endpoint: OpenAI, Azure OpenAI (pass an
``AzureOpenAI`` client), Ollama (``base_url="http://localhost:11434/v1"``), vLLM and
the llama.cpp server. The ``openai`` package is imported lazily, on first use, so
``compactlens`` works without it. Every client is used with ``max_retries=0``:
exactly one HTTP request per summary, errors propagate as the client raised them
(``openai.APIError`` and its subclasses). An answer whose body is not JSON (malformed,
or another content type) raises ``openai.APIResponseValidationError`` (an
``APIError``, with the HTTP response and body), not ``json.JSONDecodeError``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from compactlens.model.errors import ConfigError, UsageError
from compactlens.summarizers.base import SummaryRequest, SummaryResponse, Usage

DEFAULT_TIMEOUT = 120.0
OFFICIAL_BASE_URL = "https://api.openai.com/v1"
#: The environment variables the ``openai`` client reads on its own and sends to whatever
#: endpoint it calls: credentials when a server holds them. ``environment=False`` ignores
#: every one of them.
CREDENTIAL_SETTINGS = (
    "OPENAI_API_KEY",
    "OPENAI_ADMIN_KEY",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_CUSTOM_HEADERS",
    "OPENAI_WEBHOOK_SECRET",
    "OPENAI_BASE_URL",
)


def _usage(raw: Any) -> Usage | None:
    if raw is None:
        return None
    inp = getattr(raw, "prompt_tokens", None)
    out = getattr(raw, "completion_tokens", None)
    total = getattr(raw, "total_tokens", None)
    if not isinstance(inp, int) or not isinstance(out, int):
        return None
    return Usage(inp, out, total if isinstance(total, int) else inp + out)


def response_from_completion(completion: Any) -> SummaryResponse:
    """Read text, usage, finish reason and tool calls from a Chat Completions answer."""
    usage = _usage(getattr(completion, "usage", None))
    model = getattr(completion, "model", None)
    choices = getattr(completion, "choices", None) or []
    if not choices:
        return SummaryResponse(text="", usage=usage, finish_reason="no-choices", model=model)
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    tool_calls = getattr(message, "tool_calls", None)
    function_call = getattr(message, "function_call", None)
    finish = getattr(choice, "finish_reason", None)
    return SummaryResponse(
        text=content if isinstance(content, str) else "",
        usage=usage,
        finish_reason=finish if isinstance(finish, str) else "unknown",
        has_tool_call=bool(tool_calls) or function_call is not None,
        model=model if isinstance(model, str) else None,
    )


def _invalid_body(raw: Any, detail: str) -> Exception:
    import openai

    response = raw.http_response
    return openai.APIResponseValidationError(
        response,
        response.text[:2000],
        message=f"the server's answer (HTTP {response.status_code}) is not a Chat "
        f"Completions JSON body: {detail}",
    )


def parse_raw_completion(raw: Any) -> Any:
    """The parsed completion of a ``with_raw_response`` answer;
    ``openai.APIResponseValidationError`` when its body is not JSON."""
    try:
        completion = raw.parse()
    except ValueError as exc:  # json.JSONDecodeError from a malformed body
        raise _invalid_body(raw, f"invalid JSON ({exc})") from exc
    if isinstance(completion, str):  # the client returns the text of a non-JSON answer
        content_type = raw.http_response.headers.get("content-type", "none")
        raise _invalid_body(raw, f"content type {content_type}")
    return completion


def _forget_environment(
    client: Any, organization: str | None, project: str | None, headers: dict[str, str] | None
) -> None:
    """Undo what the ``openai`` client read from the environment on its own.

    The client fills the organization, project, admin key and webhook secret from
    ``OPENAI_*`` variables when they are not given, and merges ``OPENAI_CUSTOM_HEADERS``
    (an ``Authorization`` line there even replaces the key) into its headers whatever is
    given. The attributes set here are the ones its request headers are built from;
    ``tests/summarizers`` checks, against a local server, that none of them is sent.
    """
    client.organization = organization
    client.project = project
    client._custom_headers = dict(headers or {})
    if hasattr(client, "_ambient_authorizations"):
        client._ambient_authorizations = frozenset()
    if hasattr(client, "admin_api_key"):
        client.admin_api_key = None
    if hasattr(client, "webhook_secret"):
        client.webhook_secret = None


class OpenAISummarizer:
    """Summarize with a chat model through the official ``openai`` client.

    ``client`` / ``async_client`` may be given (``OpenAI``, ``AzureOpenAI``,
    ``AsyncOpenAI``...); they are used through ``with_options(max_retries=0,
    timeout=...)``. Otherwise clients are built from ``base_url`` and ``api_key``
    (default: ``OPENAI_API_KEY``; with a ``base_url`` and no key, a placeholder key is
    sent, which local servers such as Ollama ignore). ``max_tokens_param`` names
    the output cap sent: ``max_tokens`` (widest support) or ``max_completion_tokens``
    (required by OpenAI reasoning models). Reports usage and the finish reason.

    ``organization``, ``project`` and ``default_headers`` are sent as given. With
    ``environment=False`` the clients this summarizer builds take nothing from the
    environment: not the key, base URL, organization, project, admin key or the custom
    headers the ``openai`` client otherwise reads from ``OPENAI_*`` variables
    (:data:`CREDENTIAL_SETTINGS`), so a server's credentials never reach an endpoint its
    operator did not choose (a hosted inspector builds visitors' summarizers this way).

    ``http_client`` (an ``httpx.Client``) is given to the synchronous client this
    summarizer builds, for example one whose transport refuses some addresses; such a
    summarizer has no asynchronous client of its own (``asummarize`` needs
    ``async_client`` then).
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        async_client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        temperature: float | None = None,
        max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
        extra_body: dict[str, Any] | None = None,
        organization: str | None = None,
        project: str | None = None,
        default_headers: Mapping[str, str] | None = None,
        environment: bool = True,
        http_client: Any = None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ConfigError("model must be a non-empty string")
        if not timeout > 0:
            raise ConfigError("timeout must be positive")
        if max_tokens_param not in ("max_tokens", "max_completion_tokens"):
            raise ConfigError("max_tokens_param must be 'max_tokens' or 'max_completion_tokens'")
        self.model = model
        self.base_url = base_url
        self.timeout = float(timeout)
        self.temperature = temperature
        self.max_tokens_param = max_tokens_param
        self.extra_body = dict(extra_body) if extra_body else None
        self._api_key = api_key
        self.organization = organization
        self.project = project
        self._headers = dict(default_headers) if default_headers else None
        self.environment = environment
        self._http_client = http_client
        self._client = client.with_options(max_retries=0, timeout=self.timeout) if client else None
        self._async_client = (
            async_client.with_options(max_retries=0, timeout=self.timeout) if async_client else None
        )

    def __repr__(self) -> str:
        return f"OpenAISummarizer(model={self.model!r}, base_url={self.base_url!r})"

    def _key(self) -> str | None:
        key = self._api_key
        if key is None and self.environment:
            key = os.environ.get("OPENAI_API_KEY")
        if key is None and (self.base_url or not self.environment):
            key = "not-needed"
        return key

    def _build(self, cls: Any, http_client: Any = None) -> Any:
        """A client of ``cls`` (``openai.OpenAI`` or ``AsyncOpenAI``) with this summarizer's
        values; with ``environment=False``, none read from the environment."""
        base_url = self.base_url
        if base_url is None and not self.environment:
            base_url = OFFICIAL_BASE_URL
        client = cls(
            api_key=self._key(),
            base_url=base_url,
            organization=self.organization,
            project=self.project,
            default_headers=self._headers,
            timeout=self.timeout,
            max_retries=0,
            http_client=http_client,
        )
        if not self.environment:
            _forget_environment(client, self.organization, self.project, self._headers)
        return client

    def _sync_client(self) -> Any:
        if self._client is None:
            import openai

            self._client = self._build(openai.OpenAI, self._http_client)
        return self._client

    def _async(self) -> Any:
        if self._async_client is None:
            if self._http_client is not None:
                raise UsageError("a summarizer given an http_client needs an async_client")
            import openai

            self._async_client = self._build(openai.AsyncOpenAI)
        return self._async_client

    def request_kwargs(self, request: SummaryRequest) -> dict[str, Any]:
        """The exact ``chat.completions.create`` arguments for ``request``."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.prompt},
                {"role": "user", "content": request.user_content},
            ],
            self.max_tokens_param: request.max_output_tokens,
        }
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.extra_body:
            kwargs["extra_body"] = dict(self.extra_body)
        return kwargs

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        completions = self._sync_client().chat.completions
        raw = completions.with_raw_response.create(**self.request_kwargs(request))
        return response_from_completion(parse_raw_completion(raw))

    async def asummarize(self, request: SummaryRequest) -> SummaryResponse:
        completions = self._async().chat.completions
        raw = await completions.with_raw_response.create(**self.request_kwargs(request))
        return response_from_completion(parse_raw_completion(raw))

    def close(self) -> None:
        """Close the synchronous client built by this summarizer (if any)."""
        if self._client is not None:
            self._client.close()


__all__ = [
    "CREDENTIAL_SETTINGS",
    "OFFICIAL_BASE_URL",
    "OpenAISummarizer",
    "response_from_completion",
]
