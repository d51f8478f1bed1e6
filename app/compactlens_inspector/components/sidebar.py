"""The sidebar every page shares: the transcript picker (loaded files and bundled
samples), the token counter, and (on every page but the lab, whose builder is in its
body) a one-line summary of the current configuration with a link to the lab."""

from __future__ import annotations

import streamlit as st

from compactlens_inspector import state
from compactlens_inspector.lab.config import PRESETS, TOKENIZERS, LabConfig, config_title
from compactlens_inspector.serving.loader import LoadedTranscript
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.style.widths import shorten, text_px

#: Picker values of bundled samples not loaded yet (a loaded transcript's value is its hash).
SAMPLE_PREFIX = "sample:"
LAB_PAGE = "compactlens_inspector/pages/lab.py"
#: The text width the sidebar's transcript picker shows whole (at 1280 and 1440 px).
PICKER_PX = 190
SAMPLE_SUFFIX = " · sample"
#: The sidebar's configuration line is cut to this many characters (the whole in its help).
SUMMARY_CHARS = 110


def _pick_source() -> None:
    value = st.session_state.get("sidebar_source")
    if not isinstance(value, str):
        return
    if value.startswith(SAMPLE_PREFIX):
        state.load_sample(value.removeprefix(SAMPLE_PREFIX))
    elif value in state.sources():
        state.activate(value)


def _pick_tokenizer() -> None:
    state.set_tokenizer(str(st.session_state.get("sidebar_tokenizer", "estimate")))


def picker_label(name: str) -> str:
    """How the picker shows a loaded file's ``name``: whole when it fits, else without its
    middle (``claude_code_…c91af04.json``)."""
    return shorten(name, PICKER_PX)


def picker_options() -> dict[str, str]:
    """Picker value -> label: every loaded transcript, then each bundled sample not loaded.
    A long file name loses its middle to fit the picker (its start and end tell files
    apart; the picker cut "claude_code__ae4a77f8-aedd-4l" at its end)."""
    refs = state.sources()
    options = {digest: picker_label(ref.name) for digest, ref in refs.items()}
    loaded_samples = {ref.sample for ref in refs.values() if ref.sample}
    for sample in state.samples():
        if sample.name not in loaded_samples:
            # The sample's name (its file's stem), then what it is.
            room = PICKER_PX - text_px(sample.name + SAMPLE_SUFFIX) + text_px(sample.name)
            options[SAMPLE_PREFIX + sample.name] = shorten(sample.name, room) + SAMPLE_SUFFIX
    return options


def source_and_tokenizer() -> LoadedTranscript | None:
    """The transcript picker and the token counter; returns the active transcript."""
    current = state.ensure_source()
    with st.sidebar:
        options = picker_options()
        if options:
            st.session_state["sidebar_source"] = st.session_state.get(state.ACTIVE)
            st.selectbox(
                "Transcript",
                list(options),
                format_func=lambda v: options.get(v, v),
                key="sidebar_source",
                on_change=_pick_source,
                help="Loaded files first, then the bundled samples (loaded when picked).",
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


def config_summary(config: LabConfig) -> None:
    """One line saying which configuration the page shows, and a link to change it."""
    title = config_title(config)
    short = PRESETS.get(config.label, "") or title
    if config.label in PRESETS and config.trigger_tokens is not None:
        short = f"{short} (over {num(config.trigger_tokens)} tokens)"
    if len(short) > SUMMARY_CHARS:
        short = short[: SUMMARY_CHARS - 1].rstrip() + "…"
    with st.sidebar, st.container(key="sidebar_config_summary"):
        st.caption(f"**Strategy:** {md_escape(short)}", help=md_escape(title))
        st.page_link(LAB_PAGE, label="Change it in the Strategy lab", icon=":material/tune:")


def analysis_sidebar() -> tuple[LoadedTranscript | None, LabConfig]:
    """Transcript and counter, then the one-line summary of the configuration."""
    current = source_and_tokenizer()
    config = state.lab()
    if current is not None:
        config_summary(config)
    return current, config
