"""This session's results: the run of a configuration over the active transcript, its
analysis, its verdict, its fixes and its replay.

Each is a cached product (:mod:`~compactlens_inspector.state.products`) under a key made of
the session's choices (:mod:`~compactlens_inspector.state.inputs`) and of whose API key
pays (:mod:`~compactlens_inspector.state.endpoints`), so two sessions with the same
choices share one computation.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import streamlit as st

from compactlens import MessageIndex
from compactlens.analysis import (
    AnalysisOverview,
    CompactionReport,
    FactReport,
    Fix,
    FixSearch,
    Verdict,
    advised,
    next_step,
)
from compactlens_inspector.lab import compact_fixes
from compactlens_inspector.lab.compact_fixes import CompactFix
from compactlens_inspector.lab.config import LabConfig, SummarizerSettings
from compactlens_inspector.lab.replay import ReplayStep
from compactlens_inspector.lab.runs import RunOutcome, fix_config
from compactlens_inspector.state.endpoints import access, limiter, summarizer_cache_key
from compactlens_inspector.state.inputs import (
    analysis_settings,
    copies,
    grouping,
    index,
    lab,
    loaded,
    summarizer_settings,
    tokenizer,
)
from compactlens_inspector.state.keys import COMPACT_FIXES, JUDGED_FIXES, LIMIT_NOTICE, NONCE
from compactlens_inspector.state.products import (
    Limited,
    analysis_part,
    cached_index,
    fact_cache,
    fix_search,
    planned_run,
    replayed,
)
from compactlens_inspector.views.analysis import (
    AnalysisSettings,
    judge,
    run_facts,
    run_overview,
)


def replay(steps: int) -> list[ReplayStep]:
    """The lab configuration replayed turn by turn (extractive summarizer), cached."""
    current = loaded()
    ix = index()
    if current is None or ix is None:
        return []
    cfg = lab()
    return replayed(current.content_hash, tokenizer(), cfg.key(), steps, ix, cfg)


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
        summarizer_cache_key(summarizer_settings(), access()),
        nonce(),
    )
    return key, cached_index(current.content_hash, name, grouping(), current, copies()), out


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
        analysis_part(
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
        analysis_part(
            ("facts", *key), lambda: run_facts(index, out, fact_cache(digest)), index, out
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


def run_verdict(outcome: RunOutcome | None = None, *, measured: bool = True) -> Verdict | None:
    """The verdict of ``outcome`` (default: the lab's run), judged with :func:`analysis`
    (the report the Lab's analysis card shows, with the configuration's triggers) by
    :func:`~compactlens_inspector.views.analysis.judge`; None for a configuration error.

    ``measured=False`` judges the run without a report (a long transcript not analyzed
    live): its checks read "not measured" and the level is never safe.
    """
    out = outcome or run()
    if out is None or out.result is None:
        return None
    return judge(out, analysis(out) if measured else None)


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
    ix = cached_index(current.content_hash, name, cfg.grouping, current, copies())
    summ = settings or summarizer_settings()
    acc = access(summ)
    try:
        return planned_run(
            current.content_hash,
            name,
            cfg.key(),
            summarizer_cache_key(summ, acc),
            nonce(),
            explain,
            current.format,
            ix,
            cfg,
            summ,
            acc,
            limiter() if acc is not None and not acc.problem else None,
        )
    except Limited as limited:
        st.session_state[LIMIT_NOTICE] = limiter().last_refusal
        return limited.outcome


def summary_notice() -> str:
    """Why summaries were not asked for in this rerun (a refused endpoint or a limit), or ""."""
    acc = access()
    if acc is not None and acc.problem:
        return acc.problem
    value = st.session_state.pop(LIMIT_NOTICE, "")
    return value if isinstance(value, str) else ""


def advised_verdict(
    outcome: RunOutcome | None = None, *, measured: bool = True, include_destructive: bool = False
) -> Verdict | None:
    """The verdict of the lab's run (``outcome``: that run, as the pages hold it) with the
    run's one next step: the library's :func:`~compactlens.analysis.next_step` over
    :func:`judged_fixes`, the step the debugger, the command line and the notebook give.
    ``measured``: as :func:`run_verdict`; a bar that judges without the analysis keeps
    its own step when its level differs from the analyzed one (compact() mode and runs
    that fit and are safe keep the verdict's own step)."""
    shown = run_verdict(outcome, measured=measured)
    current = run_verdict(outcome) if measured is False else shown
    if shown is None or current is None or not current.level == shown.level != "safe":
        return shown
    if lab().mode == "compact":
        judged = compact_judged_fixes()
        if judged is None:  # a model summarizer: the fixes are not judged
            return shown
        ranked, tried = judged
        return replace(shown, next_step=compact_fixes.next_step(current, ranked, tried))
    found = judged_fixes(include_destructive=include_destructive)
    step = next_step(current, found, include_destructive=include_destructive)
    return replace(shown, next_step=step)


def judged_fixes(*, include_destructive: bool = False) -> FixSearch | None:
    """:func:`_judged_fixes`, once per run key in this session (the larger target it may
    add is found by re-running the configuration, which no other cache holds)."""
    current = loaded()
    summ = summarizer_cache_key(summarizer_settings(), access())
    digest = current.content_hash if current is not None else ""
    # The Analysis page's settings too: each fix is judged with them (its context window).
    key = (
        digest,
        tokenizer(),
        lab().key(),
        summ,
        nonce(),
        include_destructive,
        analysis_settings().key(),
    )
    cached = st.session_state.get(JUDGED_FIXES)
    if isinstance(cached, tuple) and len(cached) == 2 and cached[0] == key:
        return cast(FixSearch | None, cached[1])
    found = _judged_fixes(include_destructive=include_destructive)
    st.session_state[JUDGED_FIXES] = (key, found)
    return found


def _judged_fixes(*, include_destructive: bool = False) -> FixSearch | None:
    """:func:`fixes`, each with the verdict of the lab configuration it gives once applied
    (:func:`run_verdict` of that run, the verdict the page shows after Apply; cached),
    completed as the library's :func:`compactlens.analysis.advised` completes them (the
    fix that only raises the target when its rule offers it).
    With a model summarizer the fixes are not judged (each run would call the model)."""
    found = fixes(include_destructive=include_destructive)
    if found is None or summarizer_settings().kind != "extractive":
        # Judging runs each fix; with a model summarizer that would be a paid call per fix.
        return found
    config = lab()

    def judged_fix(fix: Fix) -> Fix:
        v = run_verdict(run(fix_config(fix, config)))
        return replace(fix, verdict=v) if v is not None else fix

    search = replace(found, fixes=tuple(judged_fix(f) for f in found.fixes))
    outcome, current, ix = run(), run_verdict(), index()
    if outcome is None or outcome.strategy is None or outcome.result is None:
        return search
    if current is None or ix is None:
        return search
    # The fixes behind the run's one next step, as debug() and the command line find them
    # (advised(): the one-click larger target beside a change that loses most facts, or
    # alone; the larger target and trigger when a lower target cannot be reached).
    return advised(
        ix,
        outcome.strategy,
        current,
        search,
        guards=outcome.guards,
        summaries=outcome.result.summaries,
        include_destructive=include_destructive,
        judge=judged_fix,
    )[1]


def compact_judged_fixes() -> tuple[list[CompactFix], int] | None:
    """compact() mode's fixes of the lab's run (:mod:`~compactlens_inspector.lab.compact_fixes`),
    each with the verdict of the configuration it gives (:func:`run_verdict` of that run:
    the verdict the page shows once it is applied), those that improve on the run ranked by
    it, and how many changes were re-run; once per run key in this session. None when the
    summarizer is a model (each judged fix would call it) or there is no run."""
    current = loaded()
    config = lab()
    if current is None or config.mode != "compact" or summarizer_settings().kind != "extractive":
        return None
    summ = summarizer_cache_key(summarizer_settings(), access())
    settings = analysis_settings().key()  # each fix is judged with them (the context window)
    key = (current.content_hash, tokenizer(), config.key(), summ, nonce(), settings)
    cached = st.session_state.get(COMPACT_FIXES)
    if isinstance(cached, tuple) and len(cached) == 2 and cached[0] == key:
        return cast(tuple[list[CompactFix], int], cached[1])
    found = _compact_judged_fixes()
    st.session_state[COMPACT_FIXES] = (key, found)
    return found


def _compact_judged_fixes() -> tuple[list[CompactFix], int] | None:
    # The explained run holds the smaller "newest messages kept" that fits (re-run).
    outcome, ix = run(explain=True), index()
    if outcome is None or outcome.result is None or ix is None:
        return None
    current = run_verdict(outcome)
    if current is None:
        return None
    return compact_fixes.search(outcome, ix, current, lambda cfg: run_verdict(run(cfg)))


def fixes(*, include_destructive: bool = False) -> FixSearch | None:
    """The ranked fixes of the lab's run over the active transcript (cached; no model call:
    summaries are replayed)."""
    current = loaded()
    outcome = run()
    ix = index()
    if current is None or outcome is None or ix is None:
        return None
    summ = summarizer_cache_key(summarizer_settings(), access())
    key = (current.content_hash, tokenizer(), lab().key(), summ, nonce())
    window = analysis_settings().context_window
    return fix_search(key, include_destructive, ix, outcome, window)
