"""The URL: a link reproduces a view (sample, tokenizer, configuration, summarizer kind).

:func:`ensure_source` is where a page starts: it reads the link once per session
(:func:`init_from_url`) and loads a transcript when none is active; the pages write the
current view back (:func:`sync_url`). The API key never goes into a URL.
"""

from __future__ import annotations

import streamlit as st

from compactlens import TranscriptError
from compactlens_inspector.lab.config import (
    PRESETS,
    TOKENIZERS,
    LabConfig,
    decode_config,
    encode_config,
    nice_budget,
    preset,
)
from compactlens_inspector.serving.loader import LoadedTranscript
from compactlens_inspector.state.inputs import (
    active_ref,
    ensure_lab,
    index,
    lab,
    load_sample,
    loaded,
    record_error,
    release_closed_uploads,
    set_lab,
    set_tokenizer,
    summarizer_settings,
    tokenizer,
)
from compactlens_inspector.state.keys import (
    INITIALIZED,
    LAB,
    PREFERRED_SAMPLES,
    QP_BUDGET,
    QP_CONFIG,
    QP_PRESET,
    QP_SAMPLE,
    QP_SUMMARIZER,
    QP_TOKENIZER,
    URL_NOTICE,
)
from compactlens_inspector.state.products import samples


def ensure_source() -> LoadedTranscript | None:
    """The active transcript; loads the sample named in the URL (or the first one) if none."""
    release_closed_uploads()
    init_from_url()
    current = loaded()
    if current is not None:
        return current
    names = [s.name for s in samples()]
    wanted = st.query_params.get(QP_SAMPLE)
    candidates = [wanted] if wanted in names else []
    candidates += [n for n in PREFERRED_SAMPLES if n in names] + names
    for name in candidates:
        if name is None:
            continue
        try:
            result = load_sample(name, automatic=name != wanted)
        except TranscriptError as exc:
            record_error(exc)
            continue
        if result is not None:
            ensure_lab(result)
            return result
    return None


def init_from_url() -> None:
    """Read the query parameters once per session: sample, tokenizer, configuration."""
    if st.session_state.get(INITIALIZED):
        return
    st.session_state[INITIALIZED] = True
    qp = st.query_params
    tok = qp.get(QP_TOKENIZER)
    if tok in TOKENIZERS:
        set_tokenizer(tok)
    sample = qp.get(QP_SAMPLE)
    if sample:
        try:
            if load_sample(sample) is None:
                st.session_state[URL_NOTICE] = (
                    f"The link names a sample that does not exist: {sample}"
                )
        except TranscriptError as exc:
            record_error(exc)
    cfg = qp.get(QP_CONFIG)
    name = qp.get(QP_PRESET)
    if cfg:
        try:
            set_lab(decode_config(cfg))
        except ValueError as exc:
            st.session_state[URL_NOTICE] = str(exc)
    elif name:
        if name in PRESETS:
            budget_raw = qp.get(QP_BUDGET)
            if budget_raw and budget_raw.isdigit():
                budget = int(budget_raw)
            else:
                ix = index()
                budget = nice_budget(ix.total_tokens) if ix is not None else 8000
            set_lab(preset(name, budget))
        else:
            st.session_state[URL_NOTICE] = f"The link names a preset that does not exist: {name}"
    if qp.get(QP_SUMMARIZER) == "openai" and summarizer_settings().kind != "openai":
        # A link never starts paid model calls by itself: the user selects the endpoint.
        st.session_state[URL_NOTICE] = (
            "This link was made with an OpenAI-compatible summarizer. The extractive "
            "(offline) summarizer is used until you select the endpoint under Summarizer."
        )


def sync_url() -> None:
    """Write the current view into the query parameters (never the API key)."""
    wanted: dict[str, str] = {}
    ref = active_ref()
    if ref is not None and ref.origin == "sample" and ref.sample:
        wanted[QP_SAMPLE] = ref.sample
    if tokenizer() != "estimate":
        wanted[QP_TOKENIZER] = tokenizer()
    if isinstance(st.session_state.get(LAB), LabConfig):
        wanted[QP_CONFIG] = encode_config(lab())
    if summarizer_settings().kind != "extractive":
        wanted[QP_SUMMARIZER] = summarizer_settings().kind
    qp = st.query_params
    for key in (QP_SAMPLE, QP_TOKENIZER, QP_CONFIG, QP_SUMMARIZER, QP_PRESET, QP_BUDGET):
        if key in wanted:
            if qp.get(key) != wanted[key]:
                qp[key] = wanted[key]
        elif key in qp:
            del qp[key]


def url_notice() -> str | None:
    value = st.session_state.pop(URL_NOTICE, None)
    return str(value) if value else None
