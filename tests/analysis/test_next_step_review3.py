"""The run's one next step helps, says what it changes and never loops (review 3 of
issue 25: #3 the SWE-agent raise/lower loop, #4 a larger target that moves the trigger
silently, #5 "set the provider" that changes nothing, #7 runs that lose most facts with
no one-click target, #8 steps that name controls the configuration lacks)."""

from __future__ import annotations

import re
from pathlib import Path

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    Guards,
    MessageIndex,
    analyze,
    compact,
    load_transcript,
    run_strategy,
)
from compactlens.analysis import (
    Fix,
    Verdict,
    advised,
    destructive,
    judge_fixes,
    judge_run,
    listed_fixes,
    reference_pipeline,
    search_fixes,
    strategy_triggers,
    verdict,
)
from compactlens.analysis.retrigger import token_ceiling
from compactlens.engine import Strategy

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"
SWE = "swe_agent__pwn__warmup.json"


def _index(path: Path) -> MessageIndex:
    return MessageIndex.build(load_transcript(path).messages, CharEstimator())


def _advice(
    index: MessageIndex, strategy: Strategy, guards: Guards | None = None
) -> tuple[Verdict, tuple[Fix, ...]]:
    """The run's verdict with its one next step, and the fixes behind it."""
    result = run_strategy(index, strategy, guards=guards)
    current = judge_run(index, result, strategy, guards)
    search = judge_fixes(
        index, search_fixes(index, strategy, guards=guards, summaries=result.summaries)
    )
    judged, found = advised(
        index, strategy, current, search, guards=guards, summaries=result.summaries
    )
    return judged, found.fixes if found is not None else ()


def _trigger(strategy: Strategy) -> int | None:
    ceilings = [c for c in map(token_ceiling, strategy_triggers(strategy)) if c is not None]
    return min(ceilings) if ceilings else None


def _stepped_fix(v: Verdict, fixes: tuple[Fix, ...]) -> Fix | None:
    """The fix the next step applies ("Apply: <its words> (...)", "Apply, at a cost:
    <its words> ..."), or the larger target a choice offers first, if it names one."""
    listed = [f for f in listed_fixes(fixes, v) if not destructive(f)]
    if v.next_step.startswith("Choose: "):
        return next((f for f in listed if f.changes_target), None)
    if not v.next_step.startswith("Apply"):
        return None
    applied = re.sub(r"^Apply(, at a cost \([^()]*\))?: ", "", v.next_step, count=1)
    return next((f for f in listed if applied.startswith(f.plain_summary)), None)


def test_a_larger_target_names_the_trigger_it_moves(corpus_dir: Path) -> None:
    """#4: SWE-agent at 2,100 does not fit; the step raises the target and says where
    the trigger goes, with the numbers its configuration holds."""
    index = _index(corpus_dir / SWE)
    v, fixes = _advice(index, reference_pipeline(2100))
    assert v.level == "no-fit"
    fix = _stepped_fix(v, fixes)
    assert fix is not None and fix.changes_target, v.next_step
    trigger, target = _trigger(fix.strategy), fix.target_tokens
    assert trigger is not None and target is not None and trigger > target
    said = f"raise the target to {target:,} tokens and the trigger to {trigger:,}"
    assert said in v.next_step.lower(), v.next_step  # "Raise" when a choice opens with it
    assert "parameters stay as they are" not in v.next_step


def test_following_the_next_step_never_loops(corpus_dir: Path) -> None:
    """#3: from SWE-agent at 2,100 (does not fit) and at 2,467 (fits, but fires again on
    the next turn), doing what the next step says never comes back to a configuration
    already tried, and ends in a run that fits."""
    index = _index(corpus_dir / SWE)
    for start in (2100, 2467):
        strategy: Strategy = reference_pipeline(start)
        seen: list[tuple[int | None, int | None]] = []
        steps: list[str] = []
        for _ in range(4):
            v, fixes = _advice(index, strategy)
            config = (v.numbers.target_tokens, _trigger(strategy))
            assert config not in seen, (start, seen, steps)
            assert v.next_step not in steps, (start, steps)
            seen.append(config)
            steps.append(v.next_step)
            fix = _stepped_fix(v, fixes)
            if fix is None:
                break
            strategy = fix.strategy
        assert v.level != "no-fit", (start, steps)
        # A step that asks for a lower target is one the stages can reach.
        assert not v.next_step.startswith("Lower the target"), (start, steps)


def test_the_warnings_step_promises_nothing_no_guard_can_do(corpus_dir: Path) -> None:
    """#5: OpenHands pony for Anthropic: the compaction leaves consecutive turns of one
    role. Setting the provider in the guards does not remove those warnings, so the step
    does not ask for it. They lose nothing (the provider joins the turns), so they are a
    note beside the verdict, not a cost that keeps it amber for good (review4 #8)."""
    index = _index(corpus_dir / "original_format" / "openhands_events__ponylang__ponyc-4593.json")
    strategy = reference_pipeline(6900)
    counts = []
    for guards in (None, Guards(provider="anthropic")):
        result = run_strategy(index, strategy, guards=guards)
        report = analyze(index.messages, result, triggers=strategy, providers=("anthropic",))
        v = verdict(result, report, provider="anthropic")
        counts.append(v.numbers.provider_warnings)
        note = next(r for r in v.reasons if r.code == "provider-warnings")
        assert note.level == "safe" and note.text.startswith("Note, not a cost"), note.text
        assert "provider-warnings" not in {r.code for r in v.costs}
        assert "Set the provider" not in v.next_step
        assert v.step_cost != "provider-warnings"
    assert counts[0] == counts[1] and counts[0]  # the guard changes nothing


def test_the_recall_step_names_only_controls_the_configuration_has() -> None:
    """#8: the reference pipeline has no clamp stage; compact() has no stages at all."""
    index = _index(SAMPLES / "coding_agent.json")
    strategy = reference_pipeline(4300)
    result = run_strategy(index, strategy)
    v = judge_run(index, result, strategy)
    assert v.step_cost == "fact-recall", v.next_step
    assert "more recent groups kept verbatim" in v.next_step and "clamp" not in v.next_step
    transcript = load_transcript(SAMPLES / "coding_agent.json")
    res = compact(list(transcript.messages), summarizer=ExtractiveSummarizer(), target_tokens=6000)
    c = verdict(res, analyze(transcript, res))
    assert c.step_cost == "fact-recall", c.next_step
    assert "newest messages" in c.next_step
    assert "stage" not in c.next_step and "fix search" not in c.next_step


def test_a_run_that_loses_most_facts_gets_a_one_click_larger_target(corpus_dir: Path) -> None:
    """#7: OpenHands django at 4,000 fits but keeps under half its facts: the step is the
    one-click target at which the verdict keeps at least the floor, with a concrete N."""
    index = _index(corpus_dir / "openhands_llmc__django__django-11299.json")
    v, fixes = _advice(index, reference_pipeline(4000))
    assert v.level == "costs" and v.step_cost == "fact-recall"
    fix = _stepped_fix(v, fixes)
    assert fix is not None and fix.changes_target, v.next_step
    assert fix.target_tokens is not None and 4000 < fix.target_tokens < index.total_tokens
    # "Apply: raise …" or, beside a costly change that keeps the target, "Choose: … Raise …"
    assert f"raise the target to {fix.target_tokens:,} tokens" in v.next_step.lower()
    assert fix.verdict is not None
    recall = fix.verdict.numbers.fact_recall
    assert recall is not None and recall >= v.recall_floor
