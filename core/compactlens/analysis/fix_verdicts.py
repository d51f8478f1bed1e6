"""Each fix judged as the run it gives once applied.

:func:`search_fixes` ranks changes with cheap measures over the cached index; what a user
decides on is the verdict of the run a fix gives. :func:`judge_fix` re-runs a fix's
strategy and guards, analyzes that run with the fix's own triggers and provider, and
returns the fix with :attr:`Fix.verdict` set, so a surface shows the same level, numbers
and costs for a fix before it is applied as it shows for the run after.

:func:`next_step` is what a debugger says to do: nothing when the run fits and is safe
(with the reason), else the best fix, else raising the target.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from compactlens.analysis.facts import Fact
from compactlens.analysis.fixes import Fix, FixSearch
from compactlens.analysis.protocol import (
    DEFAULT_PROVIDERS,
    transcript_provider,
    verdict_provider,
)
from compactlens.analysis.report import analyze
from compactlens.analysis.retrigger import strategy_triggers
from compactlens.analysis.verdict import Verdict, verdict
from compactlens.engine.guards import Guards
from compactlens.engine.index import MessageIndex
from compactlens.engine.result import CompactionResult
from compactlens.engine.run import run_strategy
from compactlens.engine.strategies.base import Strategy


def judge_run(
    index: MessageIndex,
    result: CompactionResult,
    strategy: Strategy,
    guards: Guards | None = None,
    *,
    tokenizer_given: bool = True,
    providers: Iterable[str] | None = None,
    fixes: FixSearch | None = None,
    fact_cache: dict[int, list[Fact]] | None = None,
) -> Verdict:
    """The verdict of ``result``, the run of ``strategy`` under ``guards`` over ``index``:
    analyzed with the strategy's triggers, the index's tokenizer and the provider the
    verdict counts for (:func:`~compactlens.analysis.protocol.verdict_provider`: the
    transcript's own API, else the guards'; or ``providers``; default the default ones).
    ``fact_cache``: one dict for every run over ``index`` (the conversation's facts are
    extracted once)."""
    wanted = guards.provider if guards is not None else None
    provider = verdict_provider(transcript_provider(index.messages), wanted)
    checked = tuple(providers) if providers is not None else None
    if checked is None:
        checked = (provider,) if provider is not None else DEFAULT_PROVIDERS
    report = analyze(
        index.messages,
        result,
        triggers=strategy_triggers(strategy, tokenizer_given=tokenizer_given),
        tokenizer=index.tokenizer,
        providers=checked,
        fact_cache=fact_cache,
    )
    chosen = provider if provider in report.providers else None
    return verdict(result, report, provider=chosen, fixes=fixes)


def judge_fix(
    index: MessageIndex,
    fix: Fix,
    *,
    tokenizer_given: bool = True,
    providers: Iterable[str] | None = None,
    fact_cache: dict[int, list[Fact]] | None = None,
) -> Fix:
    """``fix`` with its :attr:`~Fix.verdict`: the verdict of re-running its strategy and
    guards over ``index`` (:func:`judge_run`)."""
    result = run_strategy(index, fix.strategy, guards=fix.guards, tokenizer_given=tokenizer_given)
    judged = judge_run(
        index,
        result,
        fix.strategy,
        fix.guards,
        tokenizer_given=tokenizer_given,
        providers=providers,
        fact_cache=fact_cache,
    )
    return replace(fix, verdict=judged)


def judge_fixes(
    index: MessageIndex,
    search: FixSearch,
    *,
    tokenizer_given: bool = True,
    providers: Iterable[str] | None = None,
) -> FixSearch:
    """``search`` with every fix judged (:func:`judge_fix`)."""
    chosen = tuple(providers) if providers is not None else None
    facts: dict[int, list[Fact]] = {}  # one extraction of the conversation for every fix
    judged = tuple(
        judge_fix(index, f, tokenizer_given=tokenizer_given, providers=chosen, fact_cache=facts)
        for f in search.fixes
    )
    return replace(search, fixes=judged)


def improves(fix: Fix, current: Verdict) -> bool:
    """Whether ``fix`` is better than the run it would replace: it fits where the run does
    not, or it fails fewer checks than the run does (an unjudged fix: only whether it fits
    where the run does not)."""
    v = fix.verdict
    if v is None:  # not judged: the search's own measure says whether it fits
        return current.level == "no-fit" and fix.fits
    if v.level == "no-fit":
        return False
    if current.level == "no-fit":
        return True
    return len(v.costs) < len(current.costs)


def listed_fixes(fixes: Sequence[Fix], current: Verdict) -> tuple[Fix, ...]:
    """The judged fixes a debugger lists for the run ``current`` judges: none when it fits
    and is safe, those that fail fewer checks when it fits with costs (optional
    improvements), every fix that fits when it does not fit."""
    if current.level == "safe":
        return ()
    shown = [f for f in fixes if improves(f, current)]
    return tuple(sorted(shown, key=_verdict_order))


def _verdict_order(fix: Fix) -> tuple[bool, bool, int, float]:
    """Listed fixes in the order their verdicts rank them: those that keep the
    conversation (the system prompt, the latest request) first, and among them those that
    keep the target (a larger target never comes first when a change keeping the system
    prompt and latest request fits, and a change that drops the system prompt never comes
    before one that keeps it), then the fewest failed checks, then the highest fact recall;
    the search's order breaks ties (the sort is stable)."""
    v = fix.verdict
    costs = len(v.costs) if v is not None else 99
    recall = v.numbers.fact_recall if v is not None else None
    return (
        not fix.keeps_conversation,
        fix.changes_target,
        costs,
        -round(recall if recall is not None else 1.0, 2),
    )


def next_step(current: Verdict, search: FixSearch | None) -> str:
    """What to do about the run ``current`` judges: "Nothing to fix" when it fits and is
    safe, else the first of :func:`listed_fixes`, else the verdict's own next step."""
    if current.level == "safe":
        return f"Nothing to fix: {current.next_step_parts[1]}"
    listed = listed_fixes(search.fixes, current) if search is not None else ()
    best = listed[0] if listed else None
    if best is None:
        return current.next_step
    cost = f" ({best.verdict.summary})" if best.verdict is not None else ""
    return f"Apply: {best.plain_summary}{cost}."


__all__ = ["improves", "judge_fix", "judge_fixes", "judge_run", "listed_fixes", "next_step"]
