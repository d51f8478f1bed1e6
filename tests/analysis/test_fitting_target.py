"""The debugger's "target that fits" is the target its one-click larger target sets.

Review 3 (#3, #4): on the SWE-agent warm-up log at 2,100 tokens the debugger card read
"Smallest target that fits 2,467" beside the fix "raise the target to 2,713 tokens and the
trigger to 3,649": 2,467 is what the parameters reach with the trigger where it is, not a
target the one-click fix sets. The card now shows the fix's own numbers, on every surface
that uses the library (the notebook's ``debug()`` here, the inspector's debugger card)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compactlens import CharEstimator, MessageIndex, load_transcript, run_strategy
from compactlens import strategy_from_config as from_config
from compactlens.analysis import advised, fitting_target, judge_fixes, judge_run, search_fixes
from compactlens.analysis.fixes import token_trigger
from compactlens.notebook import debug
from compactlens.summarizers import ExtractiveSummarizer

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
SWE_LOG = CORPUS / "swe_agent__pwn__warmup.json"


def _stage(kind: str, budget: int, **params: object) -> dict[str, object]:
    trigger = {"op": "exceed", "metric": "tokens", "n": budget}
    return {"type": kind, "trigger": trigger, **params}


def _swe_config(budget: int) -> dict[str, object]:
    """The inspector's reference pipeline with every stage at ``budget`` (review 3)."""
    return {
        "type": "pipeline",
        "strategies": [
            _stage(
                "tool_result_collapse",
                budget,
                keep_last_tool_call_groups=1,
                minimum_preserved=2,
                formatter="results",
            ),
            _stage(
                "summarization",
                budget,
                minimum_preserved=4,
                max_input_tokens=8000,
                max_summary_tokens=2048,
            ),
            _stage("sliding_window", budget, minimum_preserved=1, preserve_system=True),
            _stage(
                "truncation",
                budget,
                minimum_preserved=2,
                preserve_system=True,
                preserve_first_user_group=False,
            ),
        ],
    }


@pytest.fixture(scope="module")
def swe() -> tuple[MessageIndex, object]:
    if not SWE_LOG.exists():
        pytest.skip(f"the shared corpus is not at {CORPUS}")
    index = MessageIndex.build(load_transcript(SWE_LOG).messages, CharEstimator())
    strategy = from_config(_swe_config(2100), summarizer=ExtractiveSummarizer())
    return index, strategy


def test_the_target_that_fits_is_the_one_the_one_click_fix_sets(swe) -> None:
    index, strategy = swe
    result = run_strategy(index, strategy)
    assert result.status == "cannot-fit"
    found = judge_fixes(index, search_fixes(index, strategy, summaries=result.summaries))
    current, search = advised(
        index, strategy, judge_run(index, result, strategy), found, summaries=result.summaries
    )
    fitting = fitting_target(current, search)
    assert fitting is not None and search is not None
    raise_fix = next(f for f in search.fixes if f.plain_summary.startswith("raise the target"))
    # The number on the card is the target the fix applies, with the trigger it applies.
    assert fitting.target == raise_fix.target_tokens
    assert fitting.trigger == token_trigger(raise_fix.strategy)
    assert fitting.tokens_after == raise_fix.tokens_after <= fitting.target
    # The next step names that fix, with the same two numbers.
    assert f"{fitting.target:,} tokens" in current.next_step
    if fitting.trigger is not None and fitting.trigger != fitting.target:
        assert f"trigger to {fitting.trigger:,}" in current.next_step
        assert f"trigger {fitting.trigger:,}" in fitting.short
    # What the parameters reach with the triggers as they are is said apart, never as
    # the target that fits.
    assert fitting.reached == result.tokens_after
    if fitting.reached != fitting.target:
        assert f"reach {fitting.reached:,} tokens at best" in fitting.words


def test_the_notebook_debugger_card_shows_the_fix_numbers(swe) -> None:
    index, strategy = swe
    result = run_strategy(index, strategy)
    d = debug(result, strategy, index)
    fitting = fitting_target(d.verdict, d.search)
    assert fitting is not None
    card = re.sub(r"<[^>]+>", " ", d.before.value)
    card = re.sub(r"\s+", " ", card)
    assert f"target that fits {fitting.short}" in card
    # The engine's best is labelled as what it is, never as a target that fits.
    assert "smallest target that fits" not in card
    assert f"best the parameters reach {result.tokens_after:,} tokens" in card
    raise_fix = next(f for f in d.fixes if f.plain_summary.startswith("raise the target"))
    assert raise_fix.target_tokens == fitting.target
