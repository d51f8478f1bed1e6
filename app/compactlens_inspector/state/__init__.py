"""The inspector's state: what a session keeps, what the server caches, and the URL.

Pages and components call ``state.foo()``; the names come from these modules, each with
one reason to change (lowest first; a module imports only those above it):

* :mod:`~compactlens_inspector.state.keys`: the session-state keys and query parameters;
* :mod:`~compactlens_inspector.state.widgets`: seeding and forgetting widget values;
* :mod:`~compactlens_inspector.state.products`: cached computations shared by every session
  (transcripts, indexes, runs, fixes, analyses, replays, the story), keyed by arguments;
* :mod:`~compactlens_inspector.state.inputs`: the session's transcripts (sources, the active
  one, load errors) and settings (tokenizer, lab configuration, summarizer, analysis);
* :mod:`~compactlens_inspector.state.endpoints`: the API key, the visitor's key, the
  hosting policy and the session's limiter;
* :mod:`~compactlens_inspector.state.results`: the session's run, analysis, fixes and
  replay, from the products under keys made of its inputs;
* :mod:`~compactlens_inspector.state.url`: reading a link once per session and writing
  the current view back.

A test that replaces a function replaces it in the module that calls it (for example
``state.products.run_config``), not here.
"""

from __future__ import annotations

from compactlens_inspector.state.endpoints import (
    access,
    api_key,
    api_key_source,
    hosting_policy,
    limiter,
    set_visitor_key,
    visitor_key,
)
from compactlens_inspector.state.inputs import (
    SourceRef,
    activate,
    active_ref,
    add_source,
    analysis_settings,
    budget,
    clear_errors,
    default_budget,
    ensure_lab,
    index,
    lab,
    load_errors,
    load_sample,
    loaded,
    origin_words,
    record_error,
    release_closed_uploads,
    remove_source,
    set_analysis_settings,
    set_lab,
    set_summarizer,
    set_tokenizer,
    sources,
    summarizer_settings,
    tokenizer,
)
from compactlens_inspector.state.keys import (
    ACTIVE,
    ANALYSIS,
    BUDGET_WIDGETS,
    DEFAULT_PRESET,
    INITIALIZED,
    LAB,
    LAB_CHOSEN,
    LIMIT_NOTICE,
    LIMITER,
    LOAD_ERRORS,
    NONCE,
    PREFERRED_SAMPLES,
    QP_BUDGET,
    QP_CONFIG,
    QP_PRESET,
    QP_SAMPLE,
    QP_SUMMARIZER,
    QP_TOKENIZER,
    SOURCES,
    SUMMARIZER,
    TOKENIZER,
    URL_NOTICE,
    VISITOR_KEY,
    VISITOR_TAG,
)
from compactlens_inspector.state.products import sample_index, samples, shared_cache_stats, story
from compactlens_inspector.state.results import (
    advised_verdict,
    analysis,
    analysis_facts,
    analysis_overview,
    bump_nonce,
    compact_judged_fixes,
    fixes,
    judged_fixes,
    nonce,
    replay,
    run,
    run_verdict,
    summary_notice,
)
from compactlens_inspector.state.url import ensure_source, init_from_url, sync_url, url_notice
from compactlens_inspector.state.widgets import forget, widget

__all__ = [
    "ACTIVE",
    "ANALYSIS",
    "BUDGET_WIDGETS",
    "DEFAULT_PRESET",
    "INITIALIZED",
    "LAB",
    "LAB_CHOSEN",
    "LIMITER",
    "LIMIT_NOTICE",
    "LOAD_ERRORS",
    "NONCE",
    "PREFERRED_SAMPLES",
    "QP_BUDGET",
    "QP_CONFIG",
    "QP_PRESET",
    "QP_SAMPLE",
    "QP_SUMMARIZER",
    "QP_TOKENIZER",
    "SOURCES",
    "SUMMARIZER",
    "TOKENIZER",
    "URL_NOTICE",
    "VISITOR_KEY",
    "VISITOR_TAG",
    "SourceRef",
    "access",
    "activate",
    "active_ref",
    "add_source",
    "advised_verdict",
    "analysis",
    "analysis_facts",
    "analysis_overview",
    "analysis_settings",
    "api_key",
    "api_key_source",
    "budget",
    "bump_nonce",
    "clear_errors",
    "compact_judged_fixes",
    "default_budget",
    "ensure_lab",
    "ensure_source",
    "fixes",
    "forget",
    "hosting_policy",
    "index",
    "init_from_url",
    "judged_fixes",
    "lab",
    "limiter",
    "load_errors",
    "load_sample",
    "loaded",
    "nonce",
    "origin_words",
    "record_error",
    "release_closed_uploads",
    "remove_source",
    "replay",
    "run",
    "run_verdict",
    "sample_index",
    "samples",
    "set_analysis_settings",
    "set_lab",
    "set_summarizer",
    "set_tokenizer",
    "set_visitor_key",
    "shared_cache_stats",
    "sources",
    "story",
    "summarizer_settings",
    "summary_notice",
    "sync_url",
    "tokenizer",
    "url_notice",
    "visitor_key",
    "widget",
]
