"""The debugger's fix section as plain data: which section a verdict gets, which fixes
are listed for it, and how hidden fixes are counted in words."""

from __future__ import annotations

from dataclasses import replace

from apptest_helpers import coding_agent

from compactlens import MessageIndex, run_strategy, strategy_from_config
from compactlens.analysis import analyze, judge_fixes, search_fixes, strategy_triggers, verdict
from compactlens.formats import from_caller
from compactlens_inspector.views.fixes import (
    NOT_JUDGED,
    destructive,
    fix_rows,
    hidden_note,
    no_improvement,
    section,
)


def _judged(budget: int, keep: int) -> tuple[object, object]:
    index = MessageIndex.build(from_caller(coding_agent()).messages)
    config = {
        "type": "truncation",
        "trigger": {"op": "exceed", "metric": "tokens", "n": budget},
        "minimum_preserved": keep,
    }
    strategy = strategy_from_config(config)
    result = run_strategy(index, strategy)
    report = analyze(index.messages, result, triggers=strategy_triggers(strategy))
    found = judge_fixes(index, search_fixes(index, strategy))
    return verdict(result, report), found


def test_a_safe_run_lists_no_fix() -> None:
    current, found = _judged(50_000, 2)
    assert current.level == "safe" and section(current) == "nothing"
    assert fix_rows(found.fixes, current) == []


def test_a_run_that_fits_with_costs_lists_only_improvements() -> None:
    current, found = _judged(3000, 2)
    assert current.level == "costs" and section(current) == "improvements"
    for row in fix_rows(found.fixes, current):
        assert row.fix.verdict is not None
        assert len(row.fix.verdict.costs) < len(current.costs)


def test_a_run_that_does_not_fit_lists_fixes_with_one_primary_choice() -> None:
    current, found = _judged(1000, 40)
    assert current.level == "no-fit" and section(current) == "fixes"
    rows = fix_rows(found.fixes, current)
    assert [r.rank for r in rows] == list(range(1, len(rows) + 1))
    assert sum(r.primary for r in rows) == 1
    # A fix marked costly or destructive is never the primary choice; the one that loses
    # most facts is offered only as a choice beside the larger target.
    assert all(not r.primary for r in rows if destructive(r.fix))
    assert all(r.rank == 1 for r in rows if r.choice)
    last = rows[-1]
    assert last.raises_target and last.title.startswith("Raise the target ")
    assert "the trigger" in last.title  # the trigger moves with it, and the title says so
    assert all("=" not in r.title and "_" not in r.title for r in rows)  # no code names


def test_hidden_fixes_are_counted_in_words() -> None:
    assert hidden_note(0) == ""
    assert hidden_note(1).startswith("1 destructive fix is hidden (it drops")
    assert hidden_note(3).startswith("3 destructive fixes are hidden (they drop")


def test_unjudged_fixes_are_listed_with_their_own_tokens_when_the_run_does_not_fit() -> None:
    current, found = _judged(1000, 40)
    unjudged = [replace(f, verdict=None) for f in found.fixes]
    rows = fix_rows(unjudged, current)
    assert rows and all(r.headline == NOT_JUDGED for r in rows)
    assert all(r.summary.startswith(f"{r.fix.tokens_after:,} tokens") for r in rows)


def test_a_run_with_costs_and_no_better_change_points_to_the_verdicts_next_step() -> None:
    current, _found = _judged(3000, 2)
    text = no_improvement(current)
    assert current.next_step in text and "nothing here would improve" not in text
