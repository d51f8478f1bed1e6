"""A run that fits but fires again on the next turn: the verdict's next step (a lower
target, or a larger trigger) is a change the fix search re-runs, so the debugger's next
step is a listed fix the user can apply, never advice the search found does not help."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from analysis_helpers import assistant, system, user

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    MessageIndex,
    load_transcript,
    run_strategy,
    strategy_from_config,
)
from compactlens.analysis import (
    apply_step,
    judge_fixes,
    judge_run,
    next_step,
    search_fixes,
    shown_fixes,
    with_raised_target,
)
from compactlens.analysis.postmortem import reference_pipeline
from compactlens.formats import from_caller

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
CLAUDE_CODE_LOG = CORPUS / "claude_code__ae4a77f8-aedd-4bc1-888f-c94edc91af04.json"


def _turns(sizes: list[int]) -> list[dict[str, Any]]:
    out = [system()]
    for k, size in enumerate(sizes):
        out += [user(f"question {k:03d}"), assistant("a" * (4 * size))]
    return out


def _debug(index: MessageIndex, strategy: Any) -> tuple[Any, Any, str]:
    """What a debugger computes (as ``debug()`` does): the run's verdict, its judged
    fixes, and its next step."""
    result = run_strategy(index, strategy)
    found = judge_fixes(index, search_fixes(index, strategy, summaries=result.summaries))
    current = judge_run(index, result, strategy)
    found = with_raised_target(index, strategy, found, current, summaries=result.summaries)
    return current, found, next_step(current, found)


def test_a_lower_target_for_every_stage_is_the_listed_fix_when_it_helps() -> None:
    # Turns of about 100 tokens; compaction above 1,500 down to 1,500: no room for a turn.
    trigger = {"op": "exceed", "metric": "tokens", "n": 1500}
    config = {"type": "truncation", "trigger": trigger, "minimum_preserved": 2}
    index = MessageIndex.build(from_caller(_turns([100] * 20)).messages, CharEstimator())
    strategy = strategy_from_config(config)
    current, found, step = _debug(index, strategy)
    assert current.level == "costs"
    assert "next-compaction" in [r.code for r in current.costs]
    assert current.next_step.startswith("Lower the target to at most")
    shown = shown_fixes(found.fixes, current).fixes
    assert shown, step
    best = shown[0]
    # The change the verdict names, with the triggers kept, and its verdict no longer
    # fires again on the next turn.
    assert best.changes[0].parameter == "stage_targets" and not best.raises_trigger
    turn = current.numbers.turn_tokens
    assert turn is not None and best.target_tokens == 1500 - turn
    assert best.verdict is not None
    assert "next-compaction" not in [r.code for r in best.verdict.costs]
    assert step == apply_step(best.plain_summary, best.verdict)
    # Applying it gives what it promised.
    applied = run_strategy(index, best.strategy, guards=best.guards)
    assert applied.tokens_after == best.tokens_after <= 1500 - turn


@pytest.mark.skipif(
    not CLAUDE_CODE_LOG.is_file(), reason="the shared corpus (../shared/corpus) is absent"
)
def test_on_a_claude_code_log_the_next_step_is_a_listed_fix_not_an_untried_target() -> None:
    # The reference pipeline at 50,000: tool-result collapse alone reaches 49,975 and the
    # later stages fire only above 50,000, so lowering the target alone does not fit.
    index = MessageIndex.build(load_transcript(CLAUDE_CODE_LOG).messages, CharEstimator())
    strategy = reference_pipeline(50_000)
    current, found, step = _debug(index, strategy)
    assert current.level == "costs"
    assert "next-compaction" in [r.code for r in current.costs]
    shown = shown_fixes(found.fixes, current).fixes
    assert shown, step
    assert step.startswith("Apply: ") and "Lower the target" not in step
    best = shown[0]
    assert step == apply_step(best.plain_summary, best.verdict)
    assert best.verdict is not None
    assert "next-compaction" not in [r.code for r in best.verdict.costs]
    assert len(best.verdict.costs) < len(current.costs)
    # The lower target for every stage was re-run (alone, and with a change that cuts
    # more): each one that fits is judged like any fix.
    tried = [f for f in found.fixes if any(c.parameter == "stage_targets" for c in f.changes)]
    assert tried and all(f.verdict is not None for f in tried)


def test_a_summarizing_pipeline_gets_the_same_rule() -> None:
    # Two stages with one trigger: summarization then truncation; whatever the search
    # lists, the step is a listed fix or says the search found none: never the verdict's
    # untried "Lower the target".
    trigger = {"op": "exceed", "metric": "tokens", "n": 1500}
    config = {
        "type": "pipeline",
        "strategies": [
            {"type": "summarization", "trigger": trigger, "minimum_preserved": 4},
            {"type": "truncation", "trigger": trigger, "minimum_preserved": 2},
        ],
    }
    index = MessageIndex.build(from_caller(_turns([100] * 20)).messages, CharEstimator())
    strategy = strategy_from_config(config, summarizer=ExtractiveSummarizer())
    current, found, step = _debug(index, strategy)
    if "next-compaction" not in [r.code for r in current.costs]:
        pytest.skip("this configuration leaves room for the next turn")
    shown = shown_fixes(found.fixes, current).fixes
    if shown:
        assert step.startswith("Apply: ")
    else:
        assert "Lower the target" not in step and "No change the fix search re-ran" in step
