"""Every notebook surface shows the run's one next step, the one ``debug()`` and
``compactlens compact`` give after the fix search, or defers to it (review 4, #3: the
committed ``inspect.ipynb`` printed "Raise the target to at least 23,561 tokens, or
search ..." and ``debug_cannot_fit.ipynb`` "Apply: add a clamp stage first ..." for the
same run)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from compactlens import (
    CharEstimator,
    MessageIndex,
    TruncationStrategy,
    apply_compaction,
    load_transcript,
    tokens_exceed,
)
from compactlens.analysis import advise, analyze, verdict
from compactlens.analysis.verdict import DEFERRED_STEP
from compactlens.notebook import debug

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"


def _stuck() -> tuple[MessageIndex, TruncationStrategy, object]:
    """inspect.ipynb's and debug_cannot_fit.ipynb's run: truncation of cannot_fit_16k at
    16,000, the newest four groups protected."""
    dump = load_transcript(SAMPLES / "cannot_fit_16k.json")
    index = MessageIndex.build(dump.messages, CharEstimator())
    strategy = TruncationStrategy(trigger=tokens_exceed(16000), minimum_preserved=4)
    return index, strategy, apply_compaction(dump.messages, strategy, CharEstimator())


def test_advise_gives_the_step_debug_gives_and_a_raw_verdict_card_defers() -> None:
    index, strategy, stuck = _stuck()
    judged, search = advise(index, stuck, strategy)  # type: ignore[arg-type]
    debugger = debug(stuck, strategy, index)  # type: ignore[arg-type]
    assert judged.next_step == debugger.verdict.next_step
    # The whole-history target (safe) or the clamp that keeps the target at a cost: a
    # choice of two (review 5, N8).
    assert judged.next_step.startswith("Choose: ")
    assert judged.step_final and escape(judged.next_step) in judged._repr_html_()
    assert [f.config for f in search.fixes] == [f.config for f in debugger.search.fixes]
    # The verdict judged without the search has another step; its card does not show it
    # but points to debug().
    raw = verdict(stuck)  # type: ignore[arg-type]
    assert raw.next_step != judged.next_step and not raw.step_final
    card = raw._repr_html_()
    assert escape(raw.next_step) not in card
    assert escape(DEFERRED_STEP) in card


def test_the_report_card_shows_debugs_step_given_the_strategy_else_defers() -> None:
    """``analyze(..., triggers=strategy)`` (the walkthrough's call) keeps the strategy: the
    card shows the step ``debug()`` gives. Given only the triggers there is no strategy
    to search: the card points to ``debug()``, never the verdict's own, other step."""
    transcript = load_transcript(SAMPLES / "coding_agent.json")
    over = tokens_exceed(4000)
    strategy = TruncationStrategy(over, minimum_preserved=2)
    result = apply_compaction(transcript.messages, strategy)
    report = analyze(transcript, result, triggers=strategy)
    own = verdict(result, report)
    assert own.level == "costs"
    step = debug(result, strategy, transcript).verdict.next_step
    assert step != own.next_step
    card = report._repr_html_()
    assert escape(" ".join(step.split())) in card and escape(own.next_step) not in card
    assert escape(DEFERRED_STEP) not in card
    assert report._repr_html_() == card  # computed once, shown alike
    # The one-line text shows no step, so it runs no search.
    quiet = analyze(transcript, result, triggers=strategy)
    assert repr(quiet).startswith("<CompactionReport: Fits, with costs;")
    assert quiet.source is not None and "step" not in quiet.source.memo
    unsearched = analyze(transcript, result, triggers=over)
    card = unsearched._repr_html_()
    assert escape(own.next_step) not in card and escape(step) not in card
    assert escape(DEFERRED_STEP) in card


def test_after_apply_the_debugger_shows_the_step_debug_of_that_run_gives() -> None:
    """The card under Apply showed the fix's verdict with its own step, before the fix
    search; ``debug()`` of the applied run then gave another."""
    index, strategy, stuck = _stuck()
    debugger = debug(stuck, strategy, index)  # type: ignore[arg-type]
    applied = debugger.apply(0)
    fix = debugger.applied_fix
    assert fix is not None
    again = debug(applied, fix.strategy, index)
    # The card shows the step as (label, text): "Next step" and what to do, or "Nothing
    # to change" and why (the top fix may be a larger target that leaves a safe run).
    assert all(escape(part) in debugger.after.value for part in again.verdict.next_step_parts)
    assert escape(DEFERRED_STEP) not in debugger.after.value
