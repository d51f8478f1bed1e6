"""The sidebar shared by the analysis pages: transcript, token counter, strategy builder."""

from __future__ import annotations

import streamlit as st

from compactlens_inspector import state
from compactlens_inspector.config import TOKENIZERS, LabConfig
from compactlens_inspector.loader import LoadedTranscript


def _pick_source() -> None:
    digest = st.session_state.get("sidebar_source")
    if isinstance(digest, str) and digest in state.sources():
        state.activate(digest)


def _pick_tokenizer() -> None:
    state.set_tokenizer(str(st.session_state.get("sidebar_tokenizer", "estimate")))


def source_and_tokenizer() -> LoadedTranscript | None:
    """The transcript picker and the token counter; returns the active transcript."""
    current = state.ensure_source()
    with st.sidebar:
        refs = state.sources()
        if refs:
            st.session_state["sidebar_source"] = st.session_state.get(state.ACTIVE)
            st.selectbox(
                "Transcript",
                list(refs),
                format_func=lambda d: refs[d].name,
                key="sidebar_source",
                on_change=_pick_source,
            )
        st.session_state["sidebar_tokenizer"] = state.tokenizer()
        st.selectbox(
            "Token counter",
            list(TOKENIZERS),
            format_func=lambda k: TOKENIZERS[k],
            key="sidebar_tokenizer",
            on_change=_pick_tokenizer,
            help="Indexes are built once per transcript and counter, then cached.",
        )
    return current


def analysis_sidebar() -> tuple[LoadedTranscript | None, LabConfig]:
    """Transcript, counter and the strategy builder (the lab, diff, timeline... pages)."""
    from compactlens_inspector.components.strategy_builder import strategy_builder

    current = source_and_tokenizer()
    config = strategy_builder() if current is not None else state.lab()
    return current, config
