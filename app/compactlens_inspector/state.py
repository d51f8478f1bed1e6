"""App state in one place: session keys, cached loaders, indexes, runs and the URL.

Caching (process-wide, in :mod:`compactlens_inspector.serving.shared_cache` caches bounded by
bytes and entries, or ``st.cache_resource``: the values are immutable, so sessions share
them without copies):

* a transcript is parsed once per content hash;
* its :class:`MessageIndex` is built once per (content hash, tokenizer);
* a run is planned once per (content hash, tokenizer, configuration, summarizer);
* summaries are cached by the SHA-256 of their exact request, so a preview, a sweep
  and an export agree and a model is never asked twice for the same summary.

Changing a parameter therefore never re-reads or re-tokenizes anything.
"""

from __future__ import annotations

import logging
import os
import secrets as _tokens
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import streamlit as st
from streamlit.runtime import Runtime

from compactlens import MessageIndex, TranscriptError
from compactlens.analysis import AnalysisOverview, CompactionReport, Fact, FactReport, FixSearch
from compactlens.summarizers import SummaryResponse
from compactlens_inspector.lab.config import (
    PRESETS,
    TOKENIZERS,
    LabConfig,
    SummarizerSettings,
    decode_config,
    encode_config,
    nice_budget,
    preset,
    sized,
)
from compactlens_inspector.lab.replay import ReplayStep, replay_session
from compactlens_inspector.lab.runs import (
    RunOutcome,
    build_index,
    find_fixes,
    make_summarizer,
    run_config,
)
from compactlens_inspector.serving.hosting import (
    LOCKED_POLICY,
    Access,
    HostingConfigError,
    HostingPolicy,
    SummaryLimiter,
    policy_from_settings,
    resolve_access,
)
from compactlens_inspector.serving.loader import (
    LoadedTranscript,
    Sample,
    check_size,
    content_hash,
    list_samples,
    parse_transcript,
    samples_dir,
)
from compactlens_inspector.serving.preflight import streamlit_secrets
from compactlens_inspector.serving.shared_cache import (
    DEFAULT_CACHE_MB,
    CacheView,
    SharedCaches,
    approx_bytes,
    cache_budget_mb,
    settle_collector,
)
from compactlens_inspector.views.analysis import AnalysisSettings, run_facts, run_overview
from compactlens_inspector.views.story import CANNOT_FIT_SAMPLE, STORY_SAMPLE, Story, build_story

# -- session-state keys (the only ones the app stores outside widgets) -------------------------
SOURCES = "cl_sources"
ACTIVE = "cl_active"
TOKENIZER = "cl_tokenizer"
LAB = "cl_lab"
SUMMARIZER = "cl_summarizer"
LOAD_ERRORS = "cl_load_errors"
NONCE = "cl_nonce"
INITIALIZED = "cl_initialized"
URL_NOTICE = "cl_url_notice"
ANALYSIS = "cl_analysis"
LAB_CHOSEN = "cl_lab_chosen"  # content hash -> the configuration the user chose for it
VISITOR_KEY = "cl_visitor_key"  # the visitor's own API key: this session only, never shown
VISITOR_TAG = "cl_visitor_tag"  # a random tag (not derived from the key) for its caches
LIMITER = "cl_limiter"  # this session's SummaryLimiter
LIMIT_NOTICE = "cl_limit_notice"  # why this rerun's run was cut short by the limits

#: Widgets seeded from the configuration's budget: re-seeded when the transcript changes.
BUDGET_WIDGETS = ("sb_", "landing_budget", "compare_budget")

#: Query parameters that make a link reproduce a view.
QP_SAMPLE = "sample"
QP_TOKENIZER = "tok"
QP_CONFIG = "cfg"
QP_PRESET = "preset"
QP_BUDGET = "budget"
QP_SUMMARIZER = "summ"

DEFAULT_PRESET = "reference"
PREFERRED_SAMPLES = ("coding_agent", "demo", "support_agent")


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A transcript the user loaded in this session (bytes kept for re-parsing on demand)."""

    name: str
    digest: str
    origin: str  # "sample", "upload" or "paste"
    data: bytes
    sample: str = ""


# -- cached computations -----------------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def _shared() -> SharedCaches:
    """The process-wide caches of transcripts, indexes, runs and analyses, bounded by
    bytes (``COMPACTLENS_CACHE_MB``) and entries; one per server."""
    try:
        budget = cache_budget_mb(os.environ)
    except ValueError as exc:
        logging.getLogger(__name__).warning("%s; using %d MB", exc, DEFAULT_CACHE_MB)
        budget = DEFAULT_CACHE_MB
    # A server, not AppTest (which installs a stand-in Runtime): tune the collector.
    if Runtime.exists() and type(Runtime.instance()) is Runtime:
        settle_collector()
    return SharedCaches.sized(budget)


def shared_cache_stats() -> dict[str, dict[str, int]]:
    """Entries, estimated bytes and budget of each shared cache (for the benchmark)."""
    return _shared().stats()


def _parsed(digest: str, name: str, data: bytes) -> LoadedTranscript:
    return _shared().transcripts.get((digest, name), lambda: parse_transcript(data, name))


def _index(digest: str, tokenizer: str, grouping: str, loaded: LoadedTranscript) -> MessageIndex:
    def size(ix: MessageIndex) -> int:
        return approx_bytes(ix, shared=(loaded, ix.tokenizer, *loaded.messages))

    # An index keeps the collapsed lines its plans build (``MessageIndex.lines``, up to
    # the transcript's size): measured again when they grew, so the budget holds.
    return _shared().indexes.get(
        (digest, tokenizer, grouping),
        lambda: build_index(loaded.messages, tokenizer, grouping),
        size,
        stamp=lambda ix: ix.lines.chars,
    )


def _summary_cache(summarizer_key: str) -> MutableMapping[str, SummaryResponse]:
    """Summaries by request hash, per summarizer settings (content-addressed, so
    shareable); all summarizers share one byte budget, oldest summaries out first."""
    return CacheView(_shared().summaries, summarizer_key)


def _run(
    digest: str,
    tokenizer: str,
    config_key: str,
    summarizer_key: str,
    nonce: int,
    explain: bool,
    format_name: str,
    index: MessageIndex,
    config: LabConfig,
    settings: SummarizerSettings,
    acc: Access | None,
    limits: SummaryLimiter | None,
) -> RunOutcome:
    """A run, once per (content hash, tokenizer, configuration, summarizer key, nonce,
    explain, format) for the whole server."""

    def make() -> RunOutcome:
        return _plan(index, config, settings, acc, limits, summarizer_key, explain, format_name)

    def size(outcome: RunOutcome) -> int:
        # The collapsed lines the index keeps are counted with the index (see _index).
        lines = index.lines.messages()
        return approx_bytes(outcome, shared=(index, index.tokenizer, *index.messages, *lines))

    key = (digest, tokenizer, config_key, summarizer_key, nonce, explain, format_name)
    return _shared().runs.get(key, make, size)


def _plan(
    index: MessageIndex,
    config: LabConfig,
    settings: SummarizerSettings,
    acc: Access | None,
    limits: SummaryLimiter | None,
    summarizer_key: str,
    explain: bool,
    format_name: str,
) -> RunOutcome:
    key = acc.api_key if acc is not None else ""
    summarizer = make_summarizer(
        settings, access=acc, limiter=limits, cache=_summary_cache(summarizer_key)
    )
    refusals = limits.refusals if limits is not None else 0
    outcome = run_config(
        index,
        config,
        summarizer,
        secrets=(key,) if key else (),
        explain=explain,
        format_name=format_name,
    )
    if limits is not None and limits.refusals > refusals:
        raise _Limited(outcome)  # not cached: the next rerun after the limit asks again
    return outcome


class _Limited(Exception):
    """A run the session's limits cut short: returned to this session, never cached."""

    def __init__(self, outcome: RunOutcome) -> None:
        super().__init__("summary limit reached")
        self.outcome = outcome


@st.cache_resource(max_entries=32, show_spinner=False)
def _fixes(
    run_key: tuple[Any, ...], include_destructive: bool, _index: MessageIndex, _outcome: RunOutcome
) -> FixSearch | None:
    return find_fixes(_index, _outcome, include_destructive=include_destructive)


def _analysis_part(
    key: tuple[Any, ...], make: Callable[[], Any], index: MessageIndex, outcome: RunOutcome
) -> Any:
    """One part of a run's analysis (the overview or fact survival), made once per key in
    the shared analyses cache."""

    def size(value: Any) -> int:
        return approx_bytes(value, shared=(outcome, index, index.tokenizer, *index.messages))

    return _shared().analyses.get(key, make, size)


@st.cache_resource(max_entries=4, show_spinner=False)
def _fact_cache(digest: str) -> dict[int, list[Fact]]:
    """Each message's facts, per transcript: analyses of other configurations reuse them
    (facts depend only on the message, not on the tokenizer or the configuration)."""
    return {}


@st.cache_resource(max_entries=16, show_spinner=False)
def _replay(
    digest: str,
    tokenizer: str,
    config_key: str,
    steps: int,
    _index: MessageIndex,
    _config: LabConfig,
) -> list[ReplayStep]:
    summarizer = make_summarizer(SummarizerSettings(), cache=_summary_cache("replay"))
    return replay_session(_index, _config, summarizer, max_steps=steps)


def replay(steps: int) -> list[ReplayStep]:
    """The lab configuration replayed turn by turn (extractive summarizer), cached."""
    current = loaded()
    ix = index()
    if current is None or ix is None:
        return []
    cfg = lab()
    return _replay(current.content_hash, tokenizer(), cfg.key(), steps, ix, cfg)


@st.cache_data(ttl=60, show_spinner=False)
def _samples(folder: str) -> list[Sample]:
    return list_samples(Path(folder))


def samples() -> list[Sample]:
    """The bundled samples (the folder is read again at most once a minute)."""
    return _samples(str(samples_dir()))


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
    """Keep the visitor's own key in this session only (empty: forget it)."""
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


def limiter() -> SummaryLimiter:
    """This session's limiter (a new one when the operator's limits changed)."""
    policy, _ = hosting_policy()
    value = st.session_state.get(LIMITER)
    if (
        isinstance(value, SummaryLimiter)
        and value.requests_per_minute == policy.requests_per_minute
        and value.max_request_tokens == policy.max_request_tokens
    ):
        return value
    value = SummaryLimiter(policy.requests_per_minute, policy.max_request_tokens)
    st.session_state[LIMITER] = value
    return value


def _summarizer_cache_key(settings: SummarizerSettings, acc: Access | None) -> str:
    """Settings plus whose key pays: runs with the server's key are shared between
    sessions, runs with a visitor's key only within theirs (a random tag, not the key)."""
    if acc is None:
        return settings.key()
    if acc.problem:
        return settings.key() + "|refused"
    if acc.owner == "visitor":
        return settings.key() + "|visitor:" + str(st.session_state.get(VISITOR_TAG, ""))
    return settings.key() + "|" + acc.owner


# -- sources -----------------------------------------------------------------------------------


def sources() -> dict[str, SourceRef]:
    value = st.session_state.get(SOURCES)
    if not isinstance(value, dict):
        value = {}
        st.session_state[SOURCES] = value
    return value


def add_source(name: str, data: bytes, origin: str, sample: str = "") -> LoadedTranscript:
    """Parse and remember a transcript; make it the active one. Raises TranscriptError."""
    check_size(name, len(data))
    digest = content_hash(data)
    loaded = _parsed(digest, name, data)
    refs = dict(sources())
    refs[digest] = SourceRef(name, digest, origin, data, sample)
    st.session_state[SOURCES] = refs
    activate(digest)
    return loaded


def load_sample(name: str) -> LoadedTranscript | None:
    """Load a bundled sample by name (its file stem); None when there is no such sample."""
    for s in samples():
        if s.name == name:
            return add_source(s.path.name, s.path.read_bytes(), "sample", s.name)
    return None


def remove_source(digest: str) -> None:
    refs = dict(sources())
    refs.pop(digest, None)
    st.session_state[SOURCES] = refs
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
    return _parsed(ref.digest, ref.name, ref.data)


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
            result = load_sample(name)
        except TranscriptError as exc:
            record_error(exc)
            continue
        if result is not None:
            ensure_lab(result)
            return result
    return None


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
    return _index(current.content_hash, name, _grouping(), current)


def _grouping() -> str:
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


def _analysis_run(
    outcome: RunOutcome | None,
) -> tuple[tuple[Any, ...], MessageIndex, RunOutcome] | None:
    """The key of a run's analysis (content hash, counter, configuration, summarizer,
    nonce), its index and the run (default: the lab's); None without a result."""
    current = loaded()
    if current is None:
        return None
    out = outcome or run()
    if out is None or out.result is None:
        return None
    name = tokenizer()
    key = (
        current.content_hash,
        name,
        out.config.key(),
        _summarizer_cache_key(summarizer_settings(), access()),
        nonce(),
    )
    return key, _index(current.content_hash, name, _grouping(), current), out


def analysis_overview(
    outcome: RunOutcome | None = None, settings: AnalysisSettings | None = None
) -> AnalysisOverview | None:
    """The quick part of the (cached) analysis of ``outcome`` (default: the lab's run):
    tokens, prompt cache, re-trigger and protocol, without fact survival."""
    found = _analysis_run(outcome)
    if found is None:
        return None
    key, index, out = found
    chosen = settings or analysis_settings()
    return cast(
        "AnalysisOverview | None",
        _analysis_part(
            ("overview", *key, chosen.key()),
            lambda: run_overview(index, out, chosen),
            index,
            out,
        ),
    )


def analysis_facts(outcome: RunOutcome | None = None) -> FactReport | None:
    """Fact survival of ``outcome`` (default: the lab's run), cached; the slow part of the
    analysis, independent of its settings."""
    found = _analysis_run(outcome)
    if found is None:
        return None
    key, index, out = found
    digest = key[0]
    return cast(
        "FactReport | None",
        _analysis_part(
            ("facts", *key), lambda: run_facts(index, out, _fact_cache(digest)), index, out
        ),
    )


def analysis(
    outcome: RunOutcome | None = None, settings: AnalysisSettings | None = None
) -> CompactionReport | None:
    """The (cached) analysis of ``outcome`` (default: the lab's run) over the active
    transcript: :func:`analysis_overview` completed with :func:`analysis_facts`, each once
    per (content hash, counter, configuration, summarizer[, settings])."""
    overview = analysis_overview(outcome, settings)
    facts = analysis_facts(outcome) if overview is not None else None
    return overview.with_facts(facts) if overview is not None and facts is not None else None


def nonce() -> int:
    return int(st.session_state.get(NONCE, 0))


def bump_nonce() -> None:
    """Force the next run to be planned again (for example after a failed model call)."""
    st.session_state[NONCE] = nonce() + 1


def run(
    config: LabConfig | None = None,
    *,
    tok: str | None = None,
    explain: bool = False,
    settings: SummarizerSettings | None = None,
) -> RunOutcome | None:
    """The (cached) run of ``config`` (default: the lab's) over the active transcript.

    ``explain`` asks for the full cannot-fit explanation (re-run suggestions); it is a
    separate cached run, so the live preview never pays for it.
    """
    current = loaded()
    if current is None:
        return None
    name = tok or tokenizer()
    cfg = config or lab()
    ix = _index(current.content_hash, name, cfg.grouping, current)
    summ = settings or summarizer_settings()
    acc = access(summ)
    try:
        return _run(
            current.content_hash,
            name,
            cfg.key(),
            _summarizer_cache_key(summ, acc),
            nonce(),
            explain,
            current.format,
            ix,
            cfg,
            summ,
            acc,
            limiter() if acc is not None and not acc.problem else None,
        )
    except _Limited as limited:
        st.session_state[LIMIT_NOTICE] = limiter().last_refusal
        return limited.outcome


def summary_notice() -> str:
    """Why summaries were not asked for in this rerun (a refused endpoint or a limit), or ""."""
    acc = access()
    if acc is not None and acc.problem:
        return acc.problem
    value = st.session_state.pop(LIMIT_NOTICE, "")
    return value if isinstance(value, str) else ""


def fixes(*, include_destructive: bool = False) -> FixSearch | None:
    """The ranked fixes of the lab's run over the active transcript (cached; no model call:
    summaries are replayed)."""
    current = loaded()
    outcome = run()
    ix = index()
    if current is None or outcome is None or ix is None:
        return None
    summ = _summarizer_cache_key(summarizer_settings(), access())
    key = (current.content_hash, tokenizer(), lab().key(), summ, nonce())
    return _fixes(key, include_destructive, ix, outcome)


# -- the URL -----------------------------------------------------------------------------------


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


def widget(key: str, value: Any) -> None:
    """Seed a widget's session-state value from the store when the widget is new.

    Widgets lose their state when a page does not render them; the store keeps the
    value and this puts it back, so a widget can have a stable ``key`` and no
    ``value=`` argument.
    """
    if key not in st.session_state:
        st.session_state[key] = value


def forget(prefix: str) -> None:
    """Drop every widget value whose key starts with ``prefix`` (to re-seed from the store)."""
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix)]:
        del st.session_state[key]


# -- story mode --------------------------------------------------------------------------------


def sample_index(name: str) -> tuple[MessageIndex, str, str] | None:
    """A bundled sample's index (estimate), format and content hash, without making it
    the active transcript (the story mode reads its samples this way). None: no such
    sample."""
    for s in samples():
        if s.name == name:
            data = s.path.read_bytes()
            loaded = _parsed(content_hash(data), s.path.name, data)
            ix = _index(loaded.content_hash, "estimate", "compactlens", loaded)
            return ix, loaded.format, loaded.content_hash
    return None


@st.cache_resource(max_entries=4, show_spinner=False)
def _story(
    key: str, _index: MessageIndex, _format: str, _cf: MessageIndex | None, _cf_format: str
) -> Story:
    return build_story(_index, _format, _cf, _cf_format)


def story() -> Story | None:
    """The story mode's numbers, computed once per server (offline). None without samples."""
    main = sample_index(STORY_SAMPLE)
    if main is None:
        return None
    cf = sample_index(CANNOT_FIT_SAMPLE)
    key = f"{main[2]}:{cf[2] if cf else ''}"
    return _story(key, main[0], main[1], cf[0] if cf else None, cf[1] if cf else "")
