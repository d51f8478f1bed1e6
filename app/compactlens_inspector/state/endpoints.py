"""Which endpoint gets which API key: the server's key, the visitor's own key, the
operator's hosting policy, this session's limiter and the server's budget (one per
process, shared by every session, kept by ``st.cache_resource``).

The API key is read at use, never stored in state, never shown. The policy itself (which
base URLs the server's key may reach, the limits on paid calls) is plain logic in
:mod:`compactlens_inspector.serving.hosting`; this module connects it to the session.
"""

from __future__ import annotations

import os
import secrets as _tokens
from typing import Any

import streamlit as st

from compactlens_inspector.lab.config import SummarizerSettings
from compactlens_inspector.serving.hosting import (
    LOCKED_POLICY,
    Access,
    HostingConfigError,
    HostingPolicy,
    policy_from_settings,
    resolve_access,
)
from compactlens_inspector.serving.limits import ServerBudget, SummaryLimiter
from compactlens_inspector.serving.preflight import streamlit_secrets
from compactlens_inspector.state.inputs import summarizer_settings
from compactlens_inspector.state.keys import LIMITER, VISITOR_KEY, VISITOR_TAG

# -- API key: read at use, never stored in state, never shown ----------------------------------


def api_key() -> str | None:
    """``OPENAI_API_KEY`` from the environment, else from Streamlit secrets."""
    key = os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    try:
        value = st.secrets.get("OPENAI_API_KEY")
    except Exception:  # no secrets file
        return None
    return str(value) if value else None


def api_key_source() -> str:
    """Where the key would come from (for display), never the key itself."""
    if os.environ.get("OPENAI_API_KEY"):
        return "environment (OPENAI_API_KEY)"
    try:
        if st.secrets.get("OPENAI_API_KEY"):
            return "Streamlit secrets"
    except Exception:
        pass
    return "not set"


# -- hosting: which endpoint gets which key, and the session's limits --------------------------


def _secret_settings() -> dict[str, Any]:
    """The hosting settings in Streamlit's secrets; none when there are no secrets or
    they cannot be read (``make serve`` refuses to start then:
    :mod:`~compactlens_inspector.serving.preflight`)."""
    return streamlit_secrets()[0]


def hosting_policy() -> tuple[HostingPolicy, str]:
    """The operator's policy and, when a setting cannot be read, why (then the server's
    key goes to no endpoint at all)."""
    try:
        return policy_from_settings(os.environ, _secret_settings()), ""
    except HostingConfigError as exc:
        return LOCKED_POLICY, f"{exc}. The server's API key is not used until this is fixed."


def visitor_key() -> str:
    value = st.session_state.get(VISITOR_KEY)
    return value if isinstance(value, str) else ""


def set_visitor_key(key: str) -> None:
    """Keep the visitor's own key in this session only (empty: forget it, deleted from the
    session state at once: a value set to "" stays in Streamlit's previous-run state)."""
    if not key.strip():
        st.session_state.pop(VISITOR_KEY, None)
        return
    st.session_state[VISITOR_KEY] = key.strip()
    if key.strip() and not st.session_state.get(VISITOR_TAG):
        st.session_state[VISITOR_TAG] = _tokens.token_hex(8)


def access(settings: SummarizerSettings | None = None) -> Access | None:
    """The endpoint and key a summary request of ``settings`` would use (None: offline)."""
    summ = settings or summarizer_settings()
    if summ.kind != "openai":
        return None
    policy, _ = hosting_policy()
    return resolve_access(
        policy, summ.base_url, summ.model, server_key=api_key(), visitor_key=visitor_key()
    )


@st.cache_resource(show_spinner=False, max_entries=4)
def _server_budget(requests_per_minute: int, tokens_per_minute: int) -> ServerBudget:
    """The budget every session of this server process shares (one per pair of limits)."""
    return ServerBudget(requests_per_minute, tokens_per_minute)


def server_budget() -> ServerBudget:
    """This server's budget for the operator's current limits."""
    policy, _ = hosting_policy()
    return _server_budget(policy.server_requests_per_minute, policy.server_tokens_per_minute)


def limiter() -> SummaryLimiter:
    """This session's limiter (a new one when the operator's limits changed), holding the
    server's budget."""
    policy, _ = hosting_policy()
    budget = server_budget()
    value = st.session_state.get(LIMITER)
    if (
        isinstance(value, SummaryLimiter)
        and value.requests_per_minute == policy.requests_per_minute
        and value.max_request_tokens == policy.max_request_tokens
        and value.budget is budget
    ):
        return value
    value = SummaryLimiter(policy.requests_per_minute, policy.max_request_tokens, budget=budget)
    st.session_state[LIMITER] = value
    return value


def summarizer_cache_key(settings: SummarizerSettings, acc: Access | None) -> str:
    """Settings plus whose key pays: runs with the server's key are shared between
    sessions, runs with a visitor's key only within theirs (a random tag, not the key)."""
    if acc is None:
        return settings.key()
    if acc.problem:
        return settings.key() + "|refused"
    if acc.owner == "visitor":
        return settings.key() + "|visitor:" + str(st.session_state.get(VISITOR_TAG, ""))
    return settings.key() + "|" + acc.owner
