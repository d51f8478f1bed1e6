"""What this session works on: the transcripts it loaded and the settings it chose.

The sources (each loaded transcript's bytes), the active one, the errors the Load page
shows, the tokenizer, the lab configuration (with the one chosen for each transcript),
and the summarizer and analysis settings, each read from and written to session state.

A session holds at most ``COMPACTLENS_SESSION_TRANSCRIPTS`` transcripts and
``COMPACTLENS_SESSION_MB`` of their bytes (see
:class:`~compactlens_inspector.serving.loader.UploadLimits`); a transcript too large for
the shared caches is kept parsed in the session's own copies (one transcript at a time),
not parsed again on every rerun.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from compactlens import MessageIndex, TranscriptError
from compactlens_inspector.lab.config import (
    TOKENIZERS,
    LabConfig,
    SummarizerSettings,
    nice_budget,
    preset,
    sized,
)
from compactlens_inspector.serving.loader import (
    SESSION_MB_ENV,
    SESSION_TRANSCRIPTS_ENV,
    LoadedTranscript,
    UploadLimits,
    check_size,
    content_hash,
    upload_limits,
)
from compactlens_inspector.serving.shared_cache import SessionCopies
from compactlens_inspector.state.keys import (
    ACTIVE,
    ANALYSIS,
    BUDGET_WIDGETS,
    DEFAULT_PRESET,
    LAB,
    LAB_CHOSEN,
    LOAD_ERRORS,
    SESSION_COPIES,
    SOURCES,
    SUMMARIZER,
    TOKENIZER,
)
from compactlens_inspector.state.products import cached_index, parsed, samples
from compactlens_inspector.state.widgets import forget
from compactlens_inspector.views.analysis import AnalysisSettings


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A transcript the user loaded in this session (bytes kept for re-parsing on demand)."""

    name: str
    digest: str
    origin: str  # "sample", "upload" or "paste"
    data: bytes
    sample: str = ""
    #: The sample the app opened by itself, before any transcript was chosen.
    automatic: bool = False


def origin_words(ref: SourceRef) -> str:
    """Where a transcript came from, for the list of loaded ones: ``uploaded``, ``pasted``,
    ``bundled sample`` or ``bundled sample, opened when the session started``."""
    words = {"sample": "bundled sample", "upload": "uploaded", "paste": "pasted"}
    text = words.get(ref.origin, ref.origin)
    return f"{text}, opened when the session started" if ref.automatic else text


# -- sources -----------------------------------------------------------------------------------


def sources() -> dict[str, SourceRef]:
    value = st.session_state.get(SOURCES)
    if not isinstance(value, dict):
        value = {}
        st.session_state[SOURCES] = value
    return value


def copies() -> SessionCopies:
    """This session's own parsed copies of a transcript too large for the shared caches."""
    value = st.session_state.get(SESSION_COPIES)
    if not isinstance(value, SessionCopies):
        value = SessionCopies()
        st.session_state[SESSION_COPIES] = value
    return value


def check_session(refs: dict[str, SourceRef], name: str, size: int, limits: UploadLimits) -> None:
    """Raise a :class:`TranscriptError` when one more transcript of ``size`` bytes would
    take this session over its limits (the message names the limit and its setting)."""
    if len(refs) >= limits.session_transcripts:
        raise TranscriptError(
            f"this session already holds {len(refs)} transcripts, the limit per session "
            f"(set {SESSION_TRANSCRIPTS_ENV} to change it); remove one on the Load page first",
            source=name,
        )
    held = sum(len(r.data) for r in refs.values())
    if held + size > limits.session_bytes:
        mb = limits.session_bytes / 1048576
        raise TranscriptError(
            f"this session would hold {(held + size) / 1048576:.1f} MB of transcripts; the "
            f"limit is {mb:.0f} MB per session (set {SESSION_MB_ENV} to change it); remove "
            "one on the Load page first",
            source=name,
        )


def add_source(
    name: str, data: bytes, origin: str, sample: str = "", *, automatic: bool = False
) -> LoadedTranscript:
    """Parse and remember a transcript; make it the active one. Raises TranscriptError.
    ``automatic``: the app opened it by itself (no transcript was chosen yet)."""
    limits = upload_limits()
    check_size(name, len(data), limits.max_upload_bytes)
    digest = content_hash(data)
    if digest not in sources():
        check_session(sources(), name, len(data), limits)
    loaded = parsed(digest, name, data, copies())
    refs = dict(sources())
    refs[digest] = SourceRef(name, digest, origin, data, sample, automatic)
    st.session_state[SOURCES] = refs
    activate(digest)
    return loaded


def load_sample(name: str, *, automatic: bool = False) -> LoadedTranscript | None:
    """Load a bundled sample by name (its file stem); None when there is no such sample.
    ``automatic``: the app opens it by itself, no transcript having been chosen."""
    for s in samples():
        if s.name == name:
            path = s.path
            return add_source(path.name, path.read_bytes(), "sample", s.name, automatic=automatic)
    return None


def remove_source(digest: str) -> None:
    refs = dict(sources())
    refs.pop(digest, None)
    st.session_state[SOURCES] = refs
    copies().drop(digest)
    if st.session_state.get(ACTIVE) == digest:
        activate(next(iter(refs), None))


def activate(digest: str | None) -> None:
    """Make ``digest`` the active transcript; the lab configuration follows it.

    The configuration the user chose for that transcript comes back; a transcript
    without one gets the current configuration sized to its own default budget (half
    its tokens, see :func:`default_budget`), so a large upload never opens with the
    previous file's budget. Widgets seeded from the budget are re-seeded.
    """
    before = st.session_state.get(ACTIVE)
    st.session_state[ACTIVE] = digest
    if digest == before or digest is None:
        return
    current = st.session_state.get(LAB)
    if before is None and not _chosen():
        # The session's first transcript: a configuration set before it (a link's) is
        # meant for it.
        if isinstance(current, LabConfig):
            set_lab(current)
        return
    chosen = _chosen().get(digest)
    if chosen is not None:
        st.session_state[LAB] = chosen
    elif isinstance(current, LabConfig):
        st.session_state[LAB] = sized(current, default_budget())
    for prefix in BUDGET_WIDGETS:
        forget(prefix)


def _chosen() -> dict[str, LabConfig]:
    value = st.session_state.get(LAB_CHOSEN)
    return dict(value) if isinstance(value, dict) else {}


def active_ref() -> SourceRef | None:
    digest = st.session_state.get(ACTIVE)
    return sources().get(digest) if isinstance(digest, str) else None


def loaded(ref: SourceRef | None = None) -> LoadedTranscript | None:
    ref = ref or active_ref()
    if ref is None:
        return None
    return parsed(ref.digest, ref.name, ref.data, copies())


def release_closed_uploads() -> int:
    """Drop the uploaded files of sessions the server no longer has; how many sessions.

    Streamlit keeps a closed tab's session for ``server.disconnectedSessionTTL`` seconds
    and then forgets it without shutting it down, so the files it uploaded stayed in the
    upload manager until the server stopped (the multi-user benchmark found them). The
    app keeps its own copy of each upload in session state, so nothing is lost. Does
    nothing outside a running server (AppTest) or if Streamlit's internals differ.
    """
    try:
        from streamlit.runtime import Runtime

        rt = Runtime.instance()
        files = getattr(rt.uploaded_file_mgr, "file_storage", None)
        sessions = getattr(rt, "_session_mgr", None)
        known = getattr(sessions, "get_session_info", None)
        if not isinstance(files, dict) or not callable(known):
            return 0
        gone = [sid for sid in list(files) if known(sid) is None]
        for sid in gone:
            rt.uploaded_file_mgr.remove_session_files(sid)
        return len(gone)
    except Exception:  # no runtime (AppTest, bare mode) or another Streamlit version
        return 0


# -- errors shown on the Load page -------------------------------------------------------------


def record_error(exc: Exception, source: str = "") -> None:
    errors = list(st.session_state.get(LOAD_ERRORS, []))
    if isinstance(exc, TranscriptError):
        errors.append((exc.source, exc.location, exc.message))
    else:
        errors.append((source or "<input>", "", f"{type(exc).__name__}: {exc}"))
    st.session_state[LOAD_ERRORS] = errors[-10:]


def clear_errors() -> None:
    st.session_state[LOAD_ERRORS] = []


def load_errors() -> list[tuple[str, str, str]]:
    return list(st.session_state.get(LOAD_ERRORS, []))


# -- tokenizer, configuration, summarizer ------------------------------------------------------


def tokenizer() -> str:
    value = st.session_state.get(TOKENIZER, "estimate")
    return value if value in TOKENIZERS else "estimate"


def set_tokenizer(name: str) -> None:
    if name in TOKENIZERS:
        st.session_state[TOKENIZER] = name


def index(tok: str | None = None, source: LoadedTranscript | None = None) -> MessageIndex | None:
    """The index of the active transcript for ``tok`` (built once, then cached)."""
    current = source or loaded()
    if current is None:
        return None
    name = tok or tokenizer()
    return cached_index(current.content_hash, name, grouping(), current, copies())


def grouping() -> str:
    """The lab profile's grouping; the default before the lab exists (which needs the
    index for its budget: same tokens under any grouping)."""
    value = st.session_state.get(LAB)
    return value.grouping if isinstance(value, LabConfig) else "compactlens"


def lab() -> LabConfig:
    """The lab configuration (the default preset, sized to the transcript, the first time)."""
    value = st.session_state.get(LAB)
    if isinstance(value, LabConfig):
        return value
    return ensure_lab(loaded())


def set_lab(config: LabConfig) -> None:
    """Set the lab configuration: the user's choice for the active transcript."""
    st.session_state[LAB] = config
    digest = st.session_state.get(ACTIVE)
    if isinstance(digest, str):
        chosen = _chosen()
        chosen[digest] = config
        st.session_state[LAB_CHOSEN] = chosen


def default_budget() -> int:
    """The active transcript's default token budget: half its tokens, rounded."""
    ix = index()
    return nice_budget(ix.total_tokens) if ix is not None else 16000


def budget() -> int:
    """The active transcript's token budget: that of its configuration (the one the user
    chose for it, else the default one sized to it)."""
    cfg = lab()
    return cfg.trigger_tokens or cfg.target_tokens or default_budget()


def ensure_lab(source: LoadedTranscript | None) -> LabConfig:
    """The lab configuration, created from the URL or the default preset the first time."""
    value = st.session_state.get(LAB)
    if isinstance(value, LabConfig):
        return value
    ix = index(source=source) if source is not None else None
    budget = nice_budget(ix.total_tokens) if ix is not None else 16000
    config = preset(DEFAULT_PRESET, budget)
    st.session_state[LAB] = config  # a default, not a choice
    return config


def summarizer_settings() -> SummarizerSettings:
    value = st.session_state.get(SUMMARIZER)
    return value if isinstance(value, SummarizerSettings) else SummarizerSettings()


def set_summarizer(settings: SummarizerSettings) -> None:
    st.session_state[SUMMARIZER] = settings


def analysis_settings() -> AnalysisSettings:
    """Model, (edited) prices, context window and turns ahead of the analysis."""
    value = st.session_state.get(ANALYSIS)
    return value if isinstance(value, AnalysisSettings) else AnalysisSettings()


def set_analysis_settings(settings: AnalysisSettings) -> None:
    st.session_state[ANALYSIS] = settings
