"""The debugger's advice helps: the one rule for destructive fixes, the choice beside a
larger target, changes that use the room under the target, and the next step about the
most important cost (issue 25; review N1, #4, #9/N7, N6, N12)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactlens import (
    CharEstimator,
    MessageIndex,
    TruncationStrategy,
    apply_compaction,
    load_transcript,
    run_strategy,
    tokens_exceed,
)
from compactlens.analysis import (
    DEFAULT_MIN_RECALL,
    SUMMARIES,
    budget_breakdown,
    destructive,
    fix_mark,
    fix_recall,
    judge_fixes,
    judge_run,
    keeps_conversation,
    next_step,
    reference_pipeline,
    search_fixes,
    shown_fixes,
)
from compactlens.analysis.fix_verdicts import cost_words
from compactlens.analysis.fixes import joined_changes
from compactlens.analysis.verdict import COST_ORDER, Reason, _next_step
from compactlens.engine import ClampStrategy, Guards, PipelineStrategy, tokens_at_most
from compactlens.notebook import debug

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"


def _index(name: str) -> tuple[list, MessageIndex]:  # type: ignore[type-arg]
    messages = list(load_transcript(SAMPLES / name).messages)
    return messages, MessageIndex.build(messages, CharEstimator())


def test_a_run_far_under_its_target_is_told_to_use_the_room_and_the_search_does() -> None:
    """coding_agent under the reference pipeline at 4,300 keeps 2,336 tokens and 67% of the
    facts: "raise the target" cannot help it; keeping more groups verbatim can."""
    _messages, index = _index("coding_agent.json")
    strategy = reference_pipeline(4300)
    guards = Guards(provider="openai-chat")  # the sample's API, as the inspector runs it
    result = run_strategy(index, strategy, guards=guards)
    current = judge_run(index, result, strategy, guards)
    assert current.level == "costs" and result.tokens_after < 0.9 * 4300
    assert "fact-recall" in {r.code for r in current.costs}
    # The verdict's own step names the room, not a larger target.
    room = 4300 - result.tokens_after
    assert f"{room:,} tokens of room" in current.next_step
    assert "raise the target" not in current.next_step
    # The debugger finds a change that keeps more and still fits, and says to apply it.
    debugger = debug(result, strategy, index, guards=guards)
    top = debugger.fixes[0]
    assert debugger.verdict.next_step.startswith(f"Apply: {top.plain_summary}")
    assert not top.changes_target and top.fits and top.tokens_after <= 4300
    before = current.numbers.fact_recall
    assert before is not None and fix_recall(top) >= before + 0.1
    assert top.tokens_after > result.tokens_after  # it uses the room


def test_a_stage_of_the_run_is_loosened_when_it_cut_far_more_than_the_target_needs() -> None:
    """cannot_fit_16k at 12,000 after a clamp at 1,500 tokens: 2,053 tokens, 12% recall.
    Loosening that clamp keeps far more and still fits."""
    _messages, index = _index("cannot_fit_16k.json")
    over, most = tokens_exceed(12_000), tokens_at_most(12_000)
    clamp = ClampStrategy(max_tokens=1500, trigger=over, target=most)
    strategy = PipelineStrategy(clamp, TruncationStrategy(trigger=over, minimum_preserved=4))
    result = run_strategy(index, strategy)
    assert result.status == "compacted" and result.tokens_after < 0.5 * 12_000
    debugger = debug(result, strategy, index)
    loosened = [
        f
        for f in debugger.fixes
        if any(c.parameter.endswith("max_tokens") and c.value > 1500 for c in f.changes)
    ]
    assert loosened, [f.plain_summary for f in debugger.fixes]
    best = loosened[0]
    assert best.fits and best.tokens_after <= 12_000
    assert fix_recall(best) > (debugger.verdict.numbers.fact_recall or 0) + 0.3
    assert "No single change" not in debugger.verdict.next_step


def test_the_next_step_is_about_the_most_important_cost() -> None:
    """A run that loses most facts and draws provider warnings is told to keep facts
    first (review N6): the order is COST_ORDER."""
    _messages, index = _index("coding_agent.json")
    strategy = reference_pipeline(4300)
    result = run_strategy(index, strategy)
    v = judge_run(index, result, strategy)
    warn = Reason(code="provider-warnings", level="costs", text="warnings")
    recall = next(r for r in v.reasons if r.code == "fact-recall")
    assert recall.level == "costs"
    for reasons in ((warn, recall), (recall, warn)):
        step = _next_step("costs", reasons, v.numbers, None)
        assert step.startswith("Keep more of the history word for word"), step
    assert COST_ORDER.index("fact-recall") < COST_ORDER.index("provider-warnings")
    assert COST_ORDER.index("latest-request") < COST_ORDER.index("fact-recall")


def test_when_only_a_change_losing_most_facts_keeps_the_target_it_is_a_choice() -> None:
    """Never an ordinary fix 1: the costly change is offered beside a one-click larger
    target, with its cost in the next step (issue 25, "never 'no fix'")."""
    _messages, index = _index("coding_agent.json")
    strategy = TruncationStrategy(trigger=tokens_exceed(1000), minimum_preserved=40)
    result = run_strategy(index, strategy)
    debugger = debug(result, strategy, index)
    shown = debugger.shown
    assert debugger.verdict.level == "no-fit"
    if shown.costly_choice is not None:
        # The two choices: the larger target first when its verdict is safe (one click to
        # green, review 4 #7), else the costly change first.
        raised = next(f for f in debugger.fixes if f.changes_target)
        first = raised if raised.verdict is not None and raised.verdict.level == "safe" else None
        assert debugger.fixes[0] is (first or shown.costly_choice)
        assert debugger.fixes[1] is (shown.costly_choice if first else raised)
        step = debugger.verdict.next_step
        assert step.startswith("Choose: ") and "Raise the target " in step
        # The larger target's words are the fix's own: they name the trigger it moves.
        words = raised.plain_summary
        assert f"{words[:1].upper()}{words[1:]}, or keep within the target " in step
        assert "nothing else changes" not in step  # it moves the target and the trigger
        assert "the trigger" in words and "parameters stay as they are" not in step
        costly = shown.costly_choice
        assert costly.verdict is not None
        assert f"{fix_recall(costly):.0%} fact recall" in cost_words(costly.verdict)
        said = f"at a cost ({cost_words(costly.verdict)}): {costly.plain_summary}, giving "
        assert said in step, step
    else:
        assert debugger.fixes, "never 'no fix': at least the larger target"
    assert all(fix_mark(f) for f in debugger.fixes if destructive(f))


def test_a_stage_is_named_once_in_a_fix_title() -> None:
    said = [
        "Tool-result collapse: set “newest tool calls kept verbatim” to 0",
        "Tool-result collapse: set “collapsed line” to tool names only",
    ]
    assert joined_changes(said) == (
        "Tool-result collapse: set “newest tool calls kept verbatim” to 0 and "
        "“collapsed line” to tool names only"
    )
    assert joined_changes(["Truncation: set a to 1", "Sliding window: set b to 2"]) == (
        "Truncation: set a to 1; Sliding window: set b to 2"
    )
    assert joined_changes(["add a clamp stage first (cut: 5)", "add a clamp stage first (x)"]) == (
        "add a clamp stage first (cut: 5); add a clamp stage first (x)"
    )


_CF_MESSAGES, _CF_INDEX = _index("cannot_fit_16k.json")
_CA_MESSAGES, _CA_INDEX = _index("coding_agent.json")


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    sample=st.sampled_from(["cannot_fit_16k", "coding_agent"]),
    share=st.floats(min_value=0.1, max_value=0.9),
    keep=st.integers(min_value=1, max_value=12),
)
def test_no_surface_lists_a_destructive_fix_as_an_ordinary_one(
    sample: str, share: float, keep: int
) -> None:
    """For any truncation budget and protection: every listed fix is either not
    destructive or the one costly choice (which keeps the conversation and the target);
    the next step never applies a destructive fix; every costly fix is marked."""
    index = _CF_INDEX if sample == "cannot_fit_16k" else _CA_INDEX
    budget = max(100, int(index.total_tokens * share))
    strategy = TruncationStrategy(trigger=tokens_exceed(budget), minimum_preserved=keep)
    result = apply_compaction(list(index.messages), strategy, CharEstimator())
    current = judge_run(index, result, strategy)
    found = judge_fixes(index, search_fixes(index, strategy, summaries=result.summaries))
    shown = shown_fixes(found.fixes, current)
    for fix in shown.fixes:
        if fix is shown.costly_choice:
            assert keeps_conversation(fix) and not fix.changes_target
            assert fix_recall(fix) < DEFAULT_MIN_RECALL and fix_mark(fix) == "costly"
        elif not fix.changes_target:
            assert not destructive(fix), fix.plain_summary
    step = next_step(current, found)
    if step.startswith("Apply: "):
        applied = next(f for f in shown.fixes if step.startswith(f"Apply: {f.plain_summary}"))
        assert not destructive(applied)
    # Every fix with a cost in its verdict carries a mark (the system prompt's too).
    for fix in shown.fixes:
        if fix.verdict is not None and fix.verdict.level != "safe":
            assert fix_mark(fix) in ("costly", "destructive")
    assert replace(current, next_step=step).next_step_parts[1]


def test_the_compactions_own_summary_is_not_counted_as_fixed_and_a_shorter_one_is_tried() -> None:
    """coding_agent under the reference pipeline at 2,000: the summary the compaction wrote
    (1,856 tokens) is most of what is left; it is a setting, so the waterfall says it can
    be shortened and the search tries a lower summary length cap, which fits."""
    _messages, index = _index("coding_agent.json")
    strategy = reference_pipeline(2000)
    guards = Guards(provider="openai-chat")
    result = run_strategy(index, strategy, guards=guards)
    assert result.status == "cannot-fit"
    parts = {p.label: p for p in budget_breakdown(result, index)}
    assert parts[SUMMARIES].tokens > 0 and "shortens them" in parts[SUMMARIES].detail
    found = search_fixes(index, strategy, guards=guards, summaries=result.summaries)
    shorter = [
        f for f in found.fixes if any(c.parameter.endswith("max_summary_tokens") for c in f.changes)
    ]
    assert shorter and all(f.fits and f.tokens_after <= 2000 for f in shorter)
    assert all("summary length cap" in f.plain_summary for f in shorter)  # words, not code
