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

from collections.abc import Iterable
from dataclasses import replace

from compactlens.analysis.fixes import Fix, FixSearch
from compactlens.analysis.protocol import DEFAULT_PROVIDERS
from compactlens.analysis.report import analyze
from compactlens.analysis.retrigger import strategy_triggers
from compactlens.analysis.verdict import Verdict, verdict
from compactlens.engine.index import MessageIndex
from compactlens.engine.run import run_strategy


def judge_fix(
    index: MessageIndex,
    fix: Fix,
    *,
    tokenizer_given: bool = True,
    providers: Iterable[str] | None = None,
) -> Fix:
    """``fix`` with its :attr:`~Fix.verdict`: the verdict of re-running its strategy and
    guards over ``index``, analyzed with its triggers and its provider (or ``providers``)."""
    result = run_strategy(index, fix.strategy, guards=fix.guards, tokenizer_given=tokenizer_given)
    provider = fix.guards.provider if fix.guards.provider not in (None, "any") else None
    checked = tuple(providers) if providers is not None else None
    if checked is None:
        checked = (provider,) if provider is not None else DEFAULT_PROVIDERS
    report = analyze(
        index.messages,
        result,
        triggers=strategy_triggers(fix.strategy, tokenizer_given=tokenizer_given),
        tokenizer=index.tokenizer,
        providers=checked,
    )
    chosen = provider if provider in report.providers else None
    return replace(fix, verdict=verdict(result, report, provider=chosen))


def judge_fixes(
    index: MessageIndex,
    search: FixSearch,
    *,
    tokenizer_given: bool = True,
    providers: Iterable[str] | None = None,
) -> FixSearch:
    """``search`` with every fix judged (:func:`judge_fix`)."""
    chosen = tuple(providers) if providers is not None else None
    judged = tuple(
        judge_fix(index, f, tokenizer_given=tokenizer_given, providers=chosen) for f in search.fixes
    )
    return replace(search, fixes=judged)


def improves(fix: Fix, current: Verdict) -> bool:
    """Whether ``fix`` (judged) is better than the run it would replace: it fits where the
    run does not, or it fails fewer checks than the run does."""
    v = fix.verdict
    if v is None or v.level == "no-fit":
        return False
    if current.level == "no-fit":
        return True
    return len(v.costs) < len(current.costs)


def next_step(current: Verdict, search: FixSearch | None) -> str:
    """What to do about the run ``current`` judges: "Nothing to fix" when it fits and is
    safe, else the first fix of ``search`` that improves on it, else its own next step."""
    if current.level == "safe":
        return f"Nothing to fix: {current.next_step[0].lower()}{current.next_step[1:]}"
    best = next((f for f in search.fixes if improves(f, current)), None) if search else None
    if best is None:
        return current.next_step
    cost = f" ({best.verdict.summary})" if best.verdict is not None else ""
    return f"Apply: {best.plain_summary}{cost}."


__all__ = ["improves", "judge_fix", "judge_fixes", "next_step"]
