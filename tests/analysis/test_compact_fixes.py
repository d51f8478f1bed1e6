"""The library's ``compact()`` fix search (:mod:`compactlens.analysis.compact_fixes`),
judged through the caller's judge: what it tries, what it lists and the step it gives.

The inspector and ``compactlens report`` give the same step from it
(``tests/app/test_compact_fix_agreement.py``, ``test_verdict_everywhere``); these tests
hold its own promises on a bundled transcript judged with the library's
:func:`~compactlens.analysis.verdict`."""

from __future__ import annotations

import functools
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from compactlens import ExtractiveSummarizer, MessageIndex
from compactlens.analysis import (
    CompactFix,
    Verdict,
    analyze,
    apply_step,
    compact_candidates,
    compact_next_step,
    search_compact_fixes,
    verdict,
    verdict_improves,
)
from compactlens.compact import compact_over_index
from compactlens.engine import Suggestion
from compactlens.engine.triggers import tokens_exceed
from compactlens.model.tokens import make_tokenizer
from compactlens.transcript import load_transcript

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"
#: coding_agent with compact() at 300 tokens, the trigger at the target: cannot fit.
BASE = CompactFix(target_tokens=300, keep_last_messages=4, trigger_tokens=300)


@functools.cache
def _index() -> MessageIndex:
    messages = load_transcript(SAMPLES / "coding_agent.json").messages
    return MessageIndex.build(messages, make_tokenizer("estimate"))


def _run(fix: CompactFix, explain: bool = False) -> object:
    return compact_over_index(
        _index(),
        target_tokens=fix.target_tokens,
        keep_last_messages=fix.keep_last_messages,
        summarizer=ExtractiveSummarizer(),
        trigger_tokens=fix.trigger_tokens,
        find_fixes=explain,
    ).result


def _judge(fix: CompactFix) -> Verdict | None:
    result = _run(fix)
    if result is None:
        return None
    triggers = tokens_exceed(fix.trigger_tokens) if fix.trigger_tokens is not None else None
    kw = {"triggers": triggers} if triggers is not None else {}
    report = analyze(_index().messages, result, tokenizer=_index().tokenizer, **kw)
    return verdict(result, report)


def test_the_search_lists_judged_improvements_and_its_step_applies_the_first() -> None:
    current = _judge(BASE)
    assert current is not None and current.level == "no-fit"
    seen: list[CompactFix] = []

    def judge(fix: CompactFix) -> Verdict | None:
        seen.append(fix)
        return _judge(fix)

    ranked, tried = search_compact_fixes(_index(), _run(BASE, True), BASE, current, judge)
    assert tried == len(seen) > 0  # every change it counts was judged, once
    assert len({f.key for f in seen}) == len(seen) and BASE.key not in {f.key for f in seen}
    assert ranked, "a run that cannot fit has a fix"
    for fix in ranked:
        assert fix.verdict is not None and verdict_improves(fix.verdict, current)
        assert fix.verdict == _judge(fix)  # the verdict shown is the applied run's
    levels = [f.verdict.level for f in ranked if f.verdict is not None]
    assert levels == sorted(levels, key=lambda level: level != "safe")
    best = ranked[0]
    assert best.verdict is not None
    # The engine's words: "Apply: …" for a safe fix, "Apply, at a cost (…): …" otherwise.
    assert compact_next_step(current, ranked, tried) == apply_step(best.words, best.verdict)


def test_a_run_with_costs_lists_only_fixes_that_remove_a_cost() -> None:
    """The whole history as the target fits with costs (most of it kept verbatim is not
    needed): a fix is listed only when its verdict improves on that; else the step says
    to keep the run, naming how many changes were re-run."""
    roomy = CompactFix(target_tokens=_index().total_tokens, keep_last_messages=4)
    current = _judge(roomy)
    assert current is not None and current.level == "costs"
    ranked, tried = search_compact_fixes(_index(), _run(roomy, True), roomy, current, _judge)
    assert tried > 0
    assert all(f.verdict is not None and verdict_improves(f.verdict, current) for f in ranked)
    step = compact_next_step(current, ranked, tried)
    if ranked:
        assert step == apply_step(ranked[0].words, ranked[0].verdict)
    else:
        assert step.startswith("Keep the run as it is") and f"it tried {tried:,}" in step


settings = st.builds(
    CompactFix,
    target_tokens=st.integers(1, 50_000),
    keep_last_messages=st.integers(0, 12),
    trigger_tokens=st.none() | st.integers(1, 80_000),
)


@given(
    base=settings,
    total=st.integers(2, 100_000),
    turn=st.floats(0, 5_000),
    smallest=st.none() | st.integers(1, 100_000),
    keep=st.none() | st.integers(0, 12),
    again=st.booleans(),
)
def test_candidates_change_something_once_and_leave_room_for_the_next_turn(
    base: CompactFix,
    total: int,
    turn: float,
    smallest: int | None,
    keep: int | None,
    again: bool,
) -> None:
    suggestions = (
        [
            Suggestion(
                change=f"keep {keep}",
                parameter="keep_last_messages",
                value=keep,
                tokens_after=0,
                spare_tokens=None,
            )
        ]
        if keep is not None
        else []
    )
    found = compact_candidates(
        base,
        suggestions,
        total_tokens=total,
        turn_tokens=turn,
        smallest_target=smallest,
        fires_again=again,
    )
    keys = [f.key for f in found]
    assert len(set(keys)) == len(keys) and base.key not in keys
    for f in found:
        assert f.words and f.verdict is None
        if f.target_tokens > base.target_tokens and f.trigger_tokens is not None:
            # A larger target never sits above its trigger: the run would compact again.
            assert f.trigger_tokens >= f.target_tokens
        if f.trigger_tokens != base.trigger_tokens and f.trigger_tokens is not None:
            assert f"{f.trigger_tokens:,}" in f.words  # a moved trigger is said
