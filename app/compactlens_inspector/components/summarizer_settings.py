"""The summarizer settings in the sidebar: offline extractive, or an OpenAI-compatible
endpoint under the operator's hosting policy (which endpoints the server's key may reach,
the visitor's own key for any other, the session's limits on paid calls)."""

from __future__ import annotations

import streamlit as st

from compactlens_inspector import state
from compactlens_inspector.lab.config import EXTRACTIVE_LABEL, SummarizerSettings
from compactlens_inspector.serving.hosting import OFFICIAL_BASE_URL, HostingPolicy
from compactlens_inspector.style.numbers import num

SUMMARIZER_LABELS = {"extractive": EXTRACTIVE_LABEL, "openai": "OpenAI-compatible endpoint"}


def _forget_key() -> None:
    state.set_visitor_key("")


def _keep_key() -> None:
    """Move what was typed into the session's store and empty the field: the key is sent
    to the server once and never back to the browser."""
    typed = st.session_state.get("sb_api_key")
    if isinstance(typed, str) and typed.strip():
        state.set_visitor_key(typed)
    st.session_state["sb_api_key"] = ""


def _base_url(policy: HostingPolicy, current: str) -> str:
    allowed = ", ".join(f"`{u}`" for u in policy.allowed_base_urls) or "none"
    state.widget("sb_base_url", current)
    if not policy.visitor_endpoints:
        choices = list(policy.allowed_base_urls) or [OFFICIAL_BASE_URL]
        if st.session_state["sb_base_url"] not in choices:
            st.session_state["sb_base_url"] = choices[0]
        return str(st.selectbox("Base URL", choices, key="sb_base_url"))
    base = st.text_input(
        "Base URL", key="sb_base_url", placeholder=f"{OFFICIAL_BASE_URL} (default)"
    )
    st.caption(
        f"The server's API key is only sent to: {allowed}. Other endpoints need your key, "
        "and must be reachable at a public address."
    )
    return base.strip()


def _key_field() -> None:
    has_key = bool(state.visitor_key())
    st.text_input(
        "Replace your API key" if has_key else "Your API key (optional)",
        key="sb_api_key",
        type="password",
        autocomplete="off",
        on_change=_keep_key,
        help="Kept in this browser session only: never shown, logged, exported, "
        "put in the URL or shared with other sessions.",
    )
    if has_key:
        st.caption("Your API key is set for this session only.")
        st.button("Forget my key", key="sb_forget_key", on_click=_forget_key)


def _status(policy: HostingPolicy, problem: str) -> None:
    acc = state.access()
    if problem:
        st.error(problem)
    if acc is not None and acc.problem:
        st.error(acc.problem)
    elif acc is not None:
        whose = {
            "server": f"the server's ({state.api_key_source()})",
            "visitor": "yours (this session only)",
            "none": "none (this endpoint gets no key)",
        }[acc.owner]
        st.caption(f"Key in use: {whose}, sent only to `{acc.base_url}`.")
    if policy.models:
        st.caption("Models with the server's key: " + ", ".join(f"`{m}`" for m in policy.models))
    lim = state.limiter()
    line = (
        f"Limits: {num(lim.requests_per_minute)} summary requests a minute in this session "
        f"({num(lim.used())} used), {num(lim.max_request_tokens)} tokens per request"
    )
    if lim.budget is not None:
        calls, tokens = lim.budget.used()
        line += (
            f"; for the whole server {num(lim.budget.requests_per_minute)} requests and "
            f"{num(lim.budget.tokens_per_minute)} tokens a minute ({num(calls)} and "
            f"{num(tokens)} used)"
        )
    st.caption(line + ". Cached summaries are free.")


def summarizer_settings() -> SummarizerSettings:
    """Render the summarizer settings and return them (the key is never part of them)."""
    current = state.summarizer_settings()
    policy, problem = state.hosting_policy()
    with st.expander("Summarizer", expanded=False):
        state.widget("sb_summarizer", current.kind)
        kind = st.radio(
            "Summarizer",
            list(SUMMARIZER_LABELS),
            format_func=lambda k: SUMMARIZER_LABELS[k],
            key="sb_summarizer",
            help="The extractive summarizer quotes the conversation offline; no key needed.",
        )
        if kind != "openai":
            st.caption("Offline and deterministic: no model, no network, no key.")
            return SummarizerSettings()
        base = _base_url(policy, current.base_url)
        state.widget("sb_model", current.model)
        model = st.text_input("Model", key="sb_model")
        _key_field()
        settings = SummarizerSettings("openai", base, model.strip() or "gpt-4o-mini")
        if settings != current:
            state.set_summarizer(settings)
        _status(policy, problem)
        st.button(
            "Ask the model again",
            key="sb_rerun",
            on_click=state.bump_nonce,
            help="Runs are cached; this plans them again (cached summaries are reused).",
        )
        return settings
