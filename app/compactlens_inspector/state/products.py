"""Cached products: what the inspector computes once and every session shares.

Caching (process-wide, in :mod:`compactlens_inspector.serving.shared_cache` caches bounded
by bytes and entries, or ``st.cache_resource``: the values are immutable, so sessions
share them without copies):

* a transcript is parsed once per content hash;
* its :class:`MessageIndex` is built once per (content hash, tokenizer);
* a run is planned once per (content hash, tokenizer, configuration, summarizer);
* summaries are cached by the SHA-256 of their exact request, so a preview, a sweep
  and an export agree and a model is never asked twice for the same summary.

Changing a parameter therefore never re-reads or re-tokenizes anything. Every function
here is keyed by its arguments and reads no session state: the session's choices make the
keys in :mod:`~compactlens_inspector.state.inputs` and
:mod:`~compactlens_inspector.state.results`.

A transcript or index too large for its shared cache is kept in the session's own
:class:`~compactlens_inspector.serving.shared_cache.SessionCopies` (passed in by the
caller), so it is not parsed again on every rerun either.

What is cached holds results, never a client: a run's summarizer (which holds a visitor's
API key) is cut from the run once it is planned (:class:`Detachable`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.runtime import Runtime

from compactlens import MessageIndex, Summarizer
from compactlens.analysis import Fact, FixSearch
from compactlens.summarizers import SummaryRequest, SummaryResponse, is_offline
from compactlens_inspector.lab.config import LabConfig, SummarizerSettings
from compactlens_inspector.lab.replay import ReplayStep, replay_session
from compactlens_inspector.lab.runs import (
    RunOutcome,
    build_index,
    find_fixes,
    make_summarizer,
    run_config,
)
from compactlens_inspector.serving.hosting import Access
from compactlens_inspector.serving.limits import RefusingSummarizer, SummaryLimiter
from compactlens_inspector.serving.loader import (
    LoadedTranscript,
    Sample,
    content_hash,
    list_samples,
    parse_transcript,
    samples_dir,
)
from compactlens_inspector.serving.shared_cache import (
    DEFAULT_CACHE_MB,
    CacheView,
    SessionCopies,
    SharedCaches,
    approx_bytes,
    cache_budget_mb,
    settle_collector,
)
from compactlens_inspector.views.analysis import AnalysisSettings
from compactlens_inspector.views.story import CANNOT_FIT_SAMPLE, STORY_SAMPLE, Story, build_story


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


def transcript_bytes(loaded: LoadedTranscript) -> int:
    """What a parsed transcript takes: the larger of its sampled size and its size counted
    at the source (bytes and messages, :func:`~compactlens_inspector.serving.loader.footprint`),
    which a crafted file cannot hide from."""
    return max(approx_bytes(loaded), loaded.footprint)


def parsed(
    digest: str, name: str, data: bytes, spill: SessionCopies | None = None
) -> LoadedTranscript:
    """The transcript ``data`` parsed, once per (content hash, name); one too large for the
    shared cache is kept in ``spill`` (the session's copies)."""
    return _shared().transcripts.get(
        (digest, name), lambda: parse_transcript(data, name), transcript_bytes, spill=spill
    )


def cached_index(
    digest: str,
    tokenizer: str,
    grouping: str,
    loaded: LoadedTranscript,
    spill: SessionCopies | None = None,
) -> MessageIndex:
    """The index of ``loaded``, once per (content hash, tokenizer, grouping); one too large
    for the shared cache is kept in ``spill``."""

    def size(ix: MessageIndex) -> int:
        return approx_bytes(ix, shared=(loaded, ix.tokenizer, *loaded.messages))

    # An index keeps the collapsed lines its plans build (``MessageIndex.lines``, up to
    # the transcript's size): measured again when they grew, so the budget holds.
    return _shared().indexes.get(
        (digest, tokenizer, grouping),
        lambda: build_index(loaded.messages, tokenizer, grouping),
        size,
        stamp=lambda ix: ix.lines.chars,
        spill=spill,
    )


def _summary_cache(summarizer_key: str) -> MutableMapping[str, SummaryResponse]:
    """Summaries by request hash, per summarizer settings (content-addressed, so
    shareable); all summarizers share one byte budget, oldest summaries out first."""
    return CacheView(_shared().summaries, summarizer_key)


def planned_run(
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
    explain, format) for the whole server. Raises :class:`Limited` when the session's
    limits cut it short."""

    def make() -> RunOutcome:
        return _plan(index, config, settings, acc, limits, summarizer_key, explain, format_name)

    def size(outcome: RunOutcome) -> int:
        # The collapsed lines the index keeps are counted with the index (see cached_index).
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
    summarizer = Detachable(
        make_summarizer(settings, access=acc, limiter=limits, cache=_summary_cache(summarizer_key))
    )
    refusals = limits.refusals if limits is not None else 0
    try:
        outcome = run_config(
            index,
            config,
            summarizer,
            secrets=(key,) if key else (),
            explain=explain,
            format_name=format_name,
        )
    finally:
        summarizer.detach()  # the run keeps its strategy, never the client and its key
    if limits is not None and limits.refusals > refusals:
        raise Limited(outcome)  # not cached: the next rerun after the limit asks again
    return outcome


class Detachable:
    """A summarizer that can be cut from its client once a run is planned.

    A run keeps its strategy (fixes replay its summaries, keyed by the summarizer object
    the strategy holds), and the strategy keeps its summarizer: without this, every cached
    run held the OpenAI client and the visitor's key after *Forget my key* and after the
    session. :meth:`detach` replaces the client with one that refuses, so the strategy
    keeps the same summarizer object (replays still match) and nothing reaches the key.
    """

    def __init__(self, inner: Summarizer) -> None:
        self._inner: Summarizer = inner
        self._offline = is_offline(inner)

    @property
    def offline(self) -> bool:
        return self._offline

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        return self._inner.summarize(request)

    def detach(self) -> None:
        if not self._offline:
            self._inner = RefusingSummarizer("this run's summaries are replayed, never asked for")


class Limited(Exception):
    """A run the session's limits cut short: returned to this session, never cached."""

    def __init__(self, outcome: RunOutcome) -> None:
        super().__init__("summary limit reached")
        self.outcome = outcome


@st.cache_resource(max_entries=32, show_spinner=False)
def fix_search(
    run_key: tuple[Any, ...],
    include_destructive: bool,
    _index: MessageIndex,
    _outcome: RunOutcome,
    context_window: int | None = None,
) -> FixSearch | None:
    """The ranked fixes of a run, once per (run key, include_destructive, context
    window: the Analysis page's, past which no fix raises the target)."""
    return find_fixes(
        _index, _outcome, include_destructive=include_destructive, context_window=context_window
    )


def analysis_part(
    key: tuple[Any, ...], make: Callable[[], Any], index: MessageIndex, outcome: RunOutcome
) -> Any:
    """One part of a run's analysis (the overview or fact survival), made once per key in
    the shared analyses cache."""

    def size(value: Any) -> int:
        return approx_bytes(value, shared=(outcome, index, index.tokenizer, *index.messages))

    return _shared().analyses.get(key, make, size)


@st.cache_resource(max_entries=4, show_spinner=False)
def fact_cache(digest: str) -> dict[int, list[Fact]]:
    """Each message's facts, per transcript: analyses of other configurations reuse them
    (facts depend only on the message, not on the tokenizer or the configuration)."""
    return {}


@st.cache_resource(max_entries=16, show_spinner=False)
def replayed(
    digest: str,
    tokenizer: str,
    config_key: str,
    steps: int,
    _index: MessageIndex,
    _config: LabConfig,
) -> list[ReplayStep]:
    """A configuration replayed turn by turn (extractive summarizer), once per key."""
    summarizer = make_summarizer(SummarizerSettings(), cache=_summary_cache("replay"))
    return replay_session(_index, _config, summarizer, max_steps=steps)


@st.cache_data(ttl=60, show_spinner=False)
def _samples(folder: str) -> list[Sample]:
    return list_samples(Path(folder))


def samples() -> list[Sample]:
    """The bundled samples (the folder is read again at most once a minute)."""
    return _samples(str(samples_dir()))


# -- story mode --------------------------------------------------------------------------------


def sample_index(name: str) -> tuple[MessageIndex, str, str] | None:
    """A bundled sample's index (estimate), format and content hash, without making it
    the active transcript (the story mode reads its samples this way). None: no such
    sample."""
    for s in samples():
        if s.name == name:
            data = s.path.read_bytes()
            loaded = parsed(content_hash(data), s.path.name, data)
            ix = cached_index(loaded.content_hash, "estimate", "compactlens", loaded)
            return ix, loaded.format, loaded.content_hash
    return None


@st.cache_resource(max_entries=4, show_spinner=False)
def _story(
    key: str,
    _index: MessageIndex,
    _format: str,
    _cf: MessageIndex | None,
    _cf_format: str,
    _settings: AnalysisSettings | None = None,
) -> Story:
    return build_story(_index, _format, _cf, _cf_format, _settings)


def story(settings: AnalysisSettings | None = None) -> Story | None:
    """The story mode's numbers, computed once per server and analysis ``settings`` (the
    Analysis page's, so the story judges its context window too; offline). None without
    samples."""
    main = sample_index(STORY_SAMPLE)
    if main is None:
        return None
    cf = sample_index(CANNOT_FIT_SAMPLE)
    key = f"{main[2]}:{cf[2] if cf else ''}:{settings.key() if settings else ''}"
    return _story(key, main[0], main[1], cf[0] if cf else None, cf[1] if cf else "", settings)
