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

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compactlens.analysis.facts import Fact
from compactlens.analysis.fixes import (
    DEFAULT_MIN_RECALL,
    Fix,
    FixSearch,
    destructive,
    fits_at,
    fix_mark,
    fix_recall,
    keeps_conversation,
    raise_target_fix,
    recall_target_fix,
    room_fixes,
    search_fixes,
    token_trigger,
)
from compactlens.analysis.protocol import (
    DEFAULT_PROVIDERS,
    transcript_provider,
    verdict_provider,
)
from compactlens.analysis.report import CompactionReport, analyze
from compactlens.analysis.retrigger import strategy_triggers
from compactlens.analysis.verdict import (
    COST_ORDER,
    Verdict,
    apply_step,
    cost_words,
    first_cost,
    verdict,
)
from compactlens.engine.guards import Guards
from compactlens.engine.index import MessageIndex
from compactlens.engine.profiles import run_guards
from compactlens.engine.result import CompactionResult
from compactlens.engine.run import run_strategy
from compactlens.engine.strategies.base import Strategy
from compactlens.formats.caller import caller_format
from compactlens.model.tokens import CharEstimator
from compactlens.summarizers.base import SummaryResponse


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
    analysis: Mapping[str, Any] | None = None,
) -> Verdict:
    """The verdict of ``result``, the run of ``strategy`` under ``guards`` over ``index``:
    analyzed with the strategy's triggers, the index's tokenizer and the provider the
    verdict counts for (:func:`~compactlens.analysis.protocol.verdict_provider`: the
    transcript's own API, else the guards'; or ``providers``; default the default ones).
    ``fact_cache``: one dict for every run over ``index`` (the conversation's facts are
    extracted once). ``analysis``: the other keyword arguments of :func:`analyze` the
    caller measures with (``context_window``, ``max_fraction``, ``model``, ``prices``,
    ``further_turns``, ``growth_per_turn``; its ``providers`` stand in for ``providers``):
    the verdict judges the window the caller declared."""
    settings = _analysis_settings(analysis)
    wanted = guards.provider if guards is not None else None
    provider = verdict_provider(transcript_provider(index.messages), wanted)
    given = providers if providers is not None else settings.pop("providers", None)
    settings.pop("providers", None)
    checked = tuple(given) if given is not None else None
    if checked is None:
        checked = (provider,) if provider is not None else DEFAULT_PROVIDERS
    report = analyze(
        index.messages,
        result,
        triggers=strategy_triggers(strategy, tokenizer_given=tokenizer_given),
        tokenizer=index.tokenizer,
        providers=checked,
        fact_cache=fact_cache,
        **settings,
    )
    chosen = provider if provider in report.providers else None
    return verdict(result, report, provider=chosen, fixes=fixes)


#: The keyword arguments of :func:`analyze` a judge takes from its caller's ``analysis``
#: (the rest, the triggers, tokenizer and fact cache, are the run's own).
ANALYSIS_KEYS = frozenset(
    {
        "context_window",
        "max_fraction",
        "model",
        "prices",
        "price_table",
        "further_turns",
        "growth_per_turn",
        "providers",
        "horizon",
    }
)


def _analysis_settings(analysis: Mapping[str, Any] | None) -> dict[str, Any]:
    """The caller's analysis settings a judge passes on (:data:`ANALYSIS_KEYS`; a
    ``context_window`` of 0 means none, as the inspector's setting does)."""
    settings = {k: v for k, v in (analysis or {}).items() if k in ANALYSIS_KEYS}
    if not settings.get("context_window"):
        settings.pop("context_window", None)
    return settings


def analysis_window(analysis: Mapping[str, Any] | None) -> int | None:
    """The context window the caller's ``analysis`` settings declare (None: none)."""
    window = _analysis_settings(analysis).get("context_window")
    return int(window) if window is not None else None


def judge_fix(
    index: MessageIndex,
    fix: Fix,
    *,
    tokenizer_given: bool = True,
    providers: Iterable[str] | None = None,
    fact_cache: dict[int, list[Fact]] | None = None,
    analysis: Mapping[str, Any] | None = None,
) -> Fix:
    """``fix`` with its :attr:`~Fix.verdict`: the verdict of re-running its strategy and
    guards over ``index`` (:func:`judge_run`, with the caller's ``analysis`` settings)."""
    result = run_strategy(index, fix.strategy, guards=fix.guards, tokenizer_given=tokenizer_given)
    judged = judge_run(
        index,
        result,
        fix.strategy,
        fix.guards,
        tokenizer_given=tokenizer_given,
        providers=providers,
        fact_cache=fact_cache,
        analysis=analysis,
    )
    return replace(fix, verdict=judged)


def judge_fixes(
    index: MessageIndex,
    search: FixSearch,
    *,
    tokenizer_given: bool = True,
    providers: Iterable[str] | None = None,
    analysis: Mapping[str, Any] | None = None,
) -> FixSearch:
    """``search`` with every fix judged (:func:`judge_fix`, with the caller's ``analysis``
    settings)."""
    chosen = tuple(providers) if providers is not None else None
    facts: dict[int, list[Fact]] = {}  # one extraction of the conversation for every fix
    judged = tuple(
        judge_fix(
            index,
            f,
            tokenizer_given=tokenizer_given,
            providers=chosen,
            fact_cache=facts,
            analysis=analysis,
        )
        for f in search.fixes
    )
    return replace(search, fixes=judged)


#: How much more of the conversation's facts (a share, 0 to 1) a fix of a run that fits
#: must keep to be listed although it removes no cost: a change that loosens a stage
#: (more groups kept verbatim, a larger clamp cut) and still fits is an improvement even
#: when its recall stays under the verdict's floor.
RECALL_GAIN = 0.1


def improves(fix: Fix, current: Verdict) -> bool:
    """Whether ``fix`` is better than the run it would replace: it fits where the run does
    not, or it fails fewer checks than the run does, or it fails no check the run passes
    and keeps at least :data:`RECALL_GAIN` more of the facts (an unjudged fix: only
    whether it fits where the run does not)."""
    if fix.verdict is None:  # not judged: the search's own measure says whether it fits
        return current.level == "no-fit" and fix.fits
    return verdict_improves(fix.verdict, current)


def verdict_improves(after: Verdict, current: Verdict) -> bool:
    """Whether the run ``after`` judges is better than the run ``current`` judges: it fits
    where that one does not, or it fails fewer checks, or its worst cost is lighter with
    no more checks failed (:func:`_lesser_cost`), or it fails no check that one
    passes and keeps at least :data:`RECALL_GAIN` more of the facts (the rule
    :func:`improves` applies to a judged fix; a change that is not a :class:`Fix`, such
    as a ``compact()`` parameter, is listed by the same rule)."""
    if after.level == "no-fit" or after.numbers.over_window:
        # Over the declared context window the model rejects the request: never better.
        return False
    if current.level == "no-fit":
        return True
    if len(after.costs) < len(current.costs) or _lesser_cost(after, current):
        return True
    was = current.numbers.fact_recall
    now = after.numbers.fact_recall
    new_costs = {r.code for r in after.costs} - {r.code for r in current.costs}
    return not new_costs and was is not None and now is not None and now >= was + RECALL_GAIN


def _cost_rank(v: Verdict) -> int:
    """How important the worst cost of ``v`` is (:data:`COST_ORDER`, lower is worse; past
    its end when every check passed)."""
    worst = first_cost(v)
    if worst is None:
        return len(COST_ORDER) + 1
    return COST_ORDER.index(worst.code) if worst.code in COST_ORDER else len(COST_ORDER)


def _lesser_cost(fixed: Verdict, current: Verdict) -> bool:
    """Whether ``fixed`` removes the run's most important cost, adds none as important and
    fails no more checks (a larger target that keeps the facts but rewrites the prompt
    cache trades a lost fact for under a cent). With :func:`verdict_improves`' other rules, each
    step lowers (failed checks, weight of the worst, recall lost) in that order, so no
    fixes lead back and forth."""
    return len(fixed.costs) <= len(current.costs) and _cost_rank(fixed) > _cost_rank(current)


def listed_fixes(fixes: Sequence[Fix], current: Verdict) -> tuple[Fix, ...]:
    """The judged fixes a debugger considers for the run ``current`` judges: none when it
    fits and is safe, improvements (:func:`improves`) when it fits with costs, every fix
    that fits when it does not fit; before :func:`shown_fixes` hides the destructive."""
    if current.level == "safe":
        return ()
    shown = sorted((f for f in fixes if improves(f, current)), key=_verdict_order)
    return _distinct(shown)


def _distinct(fixes: Sequence[Fix]) -> tuple[Fix, ...]:
    """``fixes`` with one fix per distinct result (its verdict's summary and costs, the
    target it sets): among fixes whose runs read the same, the one with the fewest
    changes, at the place of the first (a fix that adds a stage that changes nothing
    repeats the simpler one)."""
    first: dict[tuple[Any, ...], int] = {}
    out: list[Fix] = []
    for f in fixes:
        v = f.verdict
        if v is None:
            out.append(f)
            continue
        key = (v.level, v.summary, tuple(r.text for r in v.costs), f.target_tokens)
        if key not in first:
            first[key] = len(out)
            out.append(f)
        elif len(f.changes) < len(out[first[key]].changes):
            out[first[key]] = f
    return tuple(out)


def _verdict_order(fix: Fix) -> tuple[bool, bool, bool, bool, int, bool, float]:
    """Listed fixes in the order their verdicts rank them: those that keep the
    conversation (the system prompt, the latest request) first, then those that keep most
    facts, then those that fit and are safe (a fix whose verdict fails no check comes
    before a costly one, even when it moves the target: one click to green beats one to
    amber), and among each of those the ones that keep the target (a larger target never
    comes before a change that keeps it at the same cost), then the fewest failed checks,
    then those that keep the triggers (a larger context budget comes after a lower target
    that makes the same room at the same cost), then the highest fact recall; the
    search's order breaks ties (the sort is stable)."""
    v = fix.verdict
    # The prompt cache's cost is counted only where the run was priced (the inspector
    # prices, the library need not): it does not order fixes, so every surface agrees.
    costs = len([r for r in v.costs if r.code != "cache"]) if v is not None else 99
    return (
        not keeps_conversation(fix),
        destructive(fix),
        costs > 0,
        fix.changes_target,
        costs,
        fix.raises_trigger,
        -round(fix_recall(fix), 2),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ShownFixes:
    """What a debugger lists for one run, the same on every surface.

    ``fixes``: the listed fixes in order (:func:`listed_fixes` without the
    :func:`destructive` ones unless asked). ``hidden``: how many destructive ones were
    left out. ``costly_choice``: when no listed fix keeps the target and most of the
    facts, the best change that keeps the target and the conversation although it loses
    most facts; it is shown with its cost beside raising the target (one choice of two,
    never an ordinary fix #1): it comes right after the listed fixes that fit and are safe
    (one click to green first: the larger target, when its verdict is safe), else first,
    and the fix that only raises the target (:func:`with_raised_target`) follows."""

    fixes: tuple[Fix, ...]
    hidden: int
    costly_choice: Fix | None = None


def shown_fixes(
    fixes: Sequence[Fix], current: Verdict, *, include_destructive: bool = False
) -> ShownFixes:
    """The fixes a debugger lists for ``current`` (see :class:`ShownFixes`)."""
    listed = listed_fixes(fixes, current)
    ok = [f for f in listed if not destructive(f)]
    costly: Fix | None = None
    if not any(not f.changes_target for f in ok):
        costly = _costly_choice(listed, current)
    raised: tuple[Fix, ...] = ()
    if _offers_raise(current, ok, costly):
        # The other choice: the fix that only raises the target (when the search has it).
        raised = tuple(f for f in fixes if _only_raises(f))[:1]
    if include_destructive:
        extra = tuple(f for f in raised if f not in listed)
        return ShownFixes(fixes=(*listed, *extra), hidden=0, costly_choice=costly)
    ok.extend(f for f in raised if f not in ok)
    if costly is not None:
        green = 0  # the leading fixes that fit and are safe stay in front of the choice
        while green < len(ok) and _is_safe(ok[green]):
            green += 1
        ok.insert(green, costly)
    hidden = len(listed) - len([f for f in ok if f in listed])
    return ShownFixes(fixes=tuple(ok), hidden=hidden, costly_choice=costly)


def _is_safe(fix: Fix) -> bool:
    """Whether the verdict of ``fix``'s run fails no check (the prompt cache's cost left
    out, as in the listed order)."""
    v = fix.verdict
    return v is not None and not [r for r in v.costs if r.code != "cache"]


def _costly_choice(listed: Sequence[Fix], current: Verdict) -> Fix | None:
    """The best change that keeps the target and the conversation although it loses most
    facts: for a run that does not fit, or for one that fits but already keeps less than
    half of the facts, when the change keeps at least as many of them as the run does
    (from 12% to 49% is worth offering, with its cost named; so is one that keeps 16% as
    the run does but removes its re-trigger: every listed fix removes a cost)."""
    recall = current.numbers.fact_recall
    fitting_loss = current.level != "no-fit" and recall is not None and recall < DEFAULT_MIN_RECALL
    # A history over the declared context window cannot be sent: a change that fits the
    # window is offered even when it keeps fewer facts than the run does.
    over = current.numbers.over_window
    if current.level != "no-fit" and not fitting_loss and not over:
        return None
    for f in listed:
        if not destructive(f) or not keeps_conversation(f) or f.changes_target:
            continue
        # A listed fix removes a cost (it improves the run): one that keeps as many of
        # the facts as the run does (to the percent shown) is worth offering too.
        kept = round(fix_recall(f), 2) >= round(recall or 0.0, 2)
        if current.level == "no-fit" or (f.fits and (over or kept)):
            return f
    return None


def _offers_raise(current: Verdict, ok: Sequence[Fix], costly: Fix | None) -> bool:
    """Whether a run that does not fit gets the one-click larger target among its fixes:
    when no listed fix keeps the target, the conversation (the system prompt, the latest
    request) and most facts (a costly choice, only fixes that drop the system prompt, or
    none at all), and none listed moves the target already."""
    if current.level != "no-fit" or any(f.changes_target for f in ok):
        return False
    # Also when every listed fix drops the system prompt: the larger target keeps it, and
    # a change that drops it never comes before one that keeps it.
    return costly is not None or not any(keeps_conversation(f) for f in ok)


def _loses_facts(current: Verdict, ok: Sequence[Fix]) -> bool:
    """Whether a run that fits gets the one-click target at which it keeps enough facts:
    its fact recall is a cost and no listed fix that keeps most facts removes that cost
    or already moves the target."""
    if current.level != "costs" or "fact-recall" not in {r.code for r in current.costs}:
        return False
    return not any(
        f.changes_target
        or (f.verdict is not None and "fact-recall" not in {r.code for r in f.verdict.costs})
        for f in ok
    )


def _only_raises(fix: Fix) -> bool:
    return fix.changes_target and len(fix.changes) == 1 and fix.target_tokens is not None


def _judger(
    index: MessageIndex,
    judge: Callable[[Fix], Fix] | None,
    tokenizer_given: bool,
    analysis: Mapping[str, Any] | None = None,
) -> Callable[[Fix], Fix]:
    """``judge``, or :func:`judge_fix` over ``index`` with the caller's ``analysis``
    settings when the caller gives none (one extraction of the conversation's facts for
    every fix it judges: the facts are the same for every run over ``index``)."""
    if judge is not None:
        return judge
    facts: dict[int, list[Fact]] = {}
    return lambda fix: judge_fix(
        index, fix, tokenizer_given=tokenizer_given, fact_cache=facts, analysis=analysis
    )


def with_raised_target(
    index: MessageIndex,
    strategy: Strategy,
    search: FixSearch,
    current: Verdict,
    *,
    guards: Guards | None = None,
    summaries: Mapping[str, SummaryResponse] | None = None,
    tokenizer_given: bool = True,
    judge: Callable[[Fix], Fix] | None = None,
    analysis: Mapping[str, Any] | None = None,
) -> FixSearch:
    """``search`` with the judged fix that only raises the target to what the current
    parameters reach (:func:`raise_target_to`; every stage's target, and the trigger a
    few typical turns above it), when it lacks one and the run does not fit: never "no
    fix", and the one-click raise lands on the verdict it is listed with. When no listed
    change keeps the target and most facts, a change that loses most facts is offered
    beside it as a choice (:class:`ShownFixes`).
    A run that fits but keeps too few facts, with no listed fix that keeps enough, gets
    the fix that raises the target to where it does (:func:`recall_target_fix`).
    ``judge``: how the new fix is judged (default :func:`judge_fix`; a surface that
    judges runs its own way passes its own)."""
    listed = listed_fixes(search.fixes, current)
    ok = [f for f in listed if not destructive(f)]
    judger = _judger(index, judge, tokenizer_given, analysis)
    if _loses_facts(current, ok):
        # A run that fits but keeps too few facts: the target at which its verdict keeps
        # enough (each try judged as the fix will be shown).
        found = _judged_recall_target(
            index,
            strategy,
            current,
            guards=guards,
            summaries=summaries,
            tokenizer_given=tokenizer_given,
            judge=judger,
        )
        return search if found is None else replace(search, fixes=(*search.fixes, found))
    # A run that does not fit always gets the larger target its one-click "raise the
    # target" applies (:func:`raise_fix`): listed by its verdict beside the other fixes
    # (first when it alone fits and is safe), never a number the click does not reach.
    if current.level != "no-fit" or any(_only_raises(f) for f in search.fixes):
        return search
    to = raise_target_to(current, search)
    raised = (
        raise_target_fix(
            index,
            strategy,
            to,
            guards=guards,
            summaries=summaries,
            tokenizer_given=tokenizer_given,
            context_window=current.numbers.context_window,
        )
        if to is not None
        else None
    )
    if raised is None or not raised.fits:
        return search
    judged = judger(raised)
    return replace(search, fixes=(*search.fixes, judged))


def raise_fix(current: Verdict, search: FixSearch | None) -> Fix | None:
    """The fix a one-click "raise the target" applies to a run that does not fit: the
    search's fix that only raises the target (every stage's target, and the trigger a
    typical turn above what it leaves, as :func:`with_raised_target` adds it), so the
    click lands on the verdict that fix shows; None for a run that fits or a search
    without one."""
    if current.level != "no-fit" or search is None:
        return None
    return next((f for f in search.fixes if _only_raises(f)), None)


def raise_target_to(current: Verdict, search: FixSearch | None = None) -> int | None:
    """The target a one-click "raise the target" sets for a run that does not fit: the
    target of the search's fix that only raises it, else the smallest target the current
    parameters fit (None for a run that fits, and when that target is above the declared
    context window: no larger target can help then)."""
    if current.level != "no-fit":
        return None
    for fix in search.fixes if search is not None else ():
        if _only_raises(fix) and fix.target_tokens is not None:
            return fix.target_tokens
    n = current.numbers
    smallest = n.smallest_target if n.smallest_target is not None else n.tokens_after
    if n.context_window is not None and smallest > n.context_window:
        return None
    return smallest


@dataclass(frozen=True, slots=True, kw_only=True)
class FittingTarget:
    """The target a run that does not fit fits at, as its one-click larger target sets
    it: what a debugger card shows beside that fix, so the two never disagree.

    ``target`` and ``trigger``: what the fix that only raises the target sets (``trigger``
    None when the search has no such fix: the target alone is raised, the triggers stay);
    ``tokens_after``: the tokens of that fix's run (None without a fix); ``reached``: the
    tokens the current parameters reach at best (the engine's smallest target, with the
    triggers as they are)."""

    target: int
    trigger: int | None
    tokens_after: int | None
    reached: int
    #: Whether the run at hand compacts again on the very next turn (its verdict says so).
    refires: bool = False

    @property
    def label(self) -> str:
        """The card's label: the number shown is always the target the one-click sets."""
        return "Target that fits"

    @property
    def short(self) -> str:
        """The target with the trigger it comes with: "2,713 tokens, trigger 3,649"."""
        moved = self.trigger is not None and self.trigger != self.target
        return f"{self.target:,} tokens" + (f", trigger {self.trigger:,}" if moved else "")

    @property
    def words(self) -> str:
        """Where the number comes from, in plain words (the card's help)."""
        if self.tokens_after is None:
            return (
                f"What the current parameters reach: the history fits a target of "
                f"{self.target:,} tokens without changing anything else."
            )
        if self.trigger is None or self.trigger == self.target:
            head = f"The one-click fix sets the target and the trigger to {self.target:,} tokens"
        else:
            head = (
                f"The one-click fix sets the target to {self.target:,} tokens and the trigger "
                f"to {self.trigger:,}"
            )
        text = f"{head}; its run ends at {self.tokens_after:,} tokens."
        if self.reached != self.target:
            text += (
                f" The current parameters reach {self.reached:,} tokens at best with the "
                "triggers as they are"
                + (", and compaction then fires again on the next turn" if self.refires else "")
                + "; the fix moves the trigger with the target so that the compacted history "
                "sits under it."
            )
        return text


def fitting_target(current: Verdict, search: FixSearch | None) -> FittingTarget | None:
    """The target at which the run ``current`` judges fits, as the one-click larger target
    sets it: the search's fix that only raises the target (with the trigger it sets), else
    the smallest target the current parameters reach (:func:`raise_target_to`); None for
    a run that fits. Every card that shows "the target that fits" shows this number, the
    one the one-click fix applies. None too when the first fix listed keeps the target: a
    larger target beside it would read as the answer."""
    if search is not None:
        listed = shown_fixes(search.fixes, current).fixes
        first = next((f for f in listed if not destructive(f)), None)
        if first is not None and not first.changes_target:
            return None
    to = raise_target_to(current, search)
    if to is None:
        return None
    n = current.numbers
    reached = n.smallest_target if n.smallest_target is not None else n.tokens_after
    refires = any(r.code == "next-compaction" for r in current.costs)
    fix = next((f for f in (search.fixes if search is not None else ()) if _only_raises(f)), None)
    if fix is None or fix.target_tokens != to:
        return FittingTarget(
            target=to, trigger=None, tokens_after=None, reached=reached, refires=refires
        )
    return FittingTarget(
        target=to,
        trigger=token_trigger(fix.strategy),
        tokens_after=fix.tokens_after,
        reached=reached,
        refires=refires,
    )


def next_step(
    current: Verdict, search: FixSearch | None, *, include_destructive: bool = False
) -> str:
    """What to do about the run ``current`` judges, the same sentence on every surface:
    "Nothing to fix" when it fits and is safe; the first listed fix that keeps most of the
    facts; when only a change that loses most facts keeps the target, the choice between
    it (with its cost) and raising the target; else the verdict's own next step."""
    if current.level == "safe":
        return f"Nothing to fix: {current.next_step_parts[1]}"
    shown = (
        shown_fixes(search.fixes, current, include_destructive=include_destructive)
        if search is not None
        else ShownFixes(fixes=(), hidden=0)
    )
    ordinary = [f for f in shown.fixes if not destructive(f)]
    best = ordinary[0] if ordinary else None
    costly = shown.costly_choice
    if costly is not None and current.level != "no-fit" and best is None:
        gives = f" ({costly.verdict.summary})" if costly.verdict is not None else ""
        was = current.numbers.fact_recall or 0.0
        window = current.numbers.context_window
        head = _costly_head(costly)
        if current.numbers.over_window and window is not None:
            return (
                f"{head}{costly.plain_summary}: the history is over the {window:,}-token "
                "context window, and no change the search re-ran fits it keeping most of the "
                f"conversation's facts; this one keeps {fix_recall(costly):.0%} of them{gives}."
            )
        return (
            f"{head}{costly.plain_summary}: it keeps {fix_recall(costly):.0%} of the "
            f"conversation's facts where the run keeps {was:.0%}, the most any change the "
            f"search re-ran keeps within the target{gives}."
        )
    # One rule for a choice: when the first fix to apply moves the target (or none
    # keeps it) and a listed change keeps the target at a cost, the step offers both.
    alternative = costly if costly is not None else _in_budget_alternative(shown.fixes, best)
    if alternative is not None and (best is None or best.changes_target):
        window = current.numbers.context_window
        raisable = any(_only_raises(f) for f in shown.fixes) or (
            raise_target_to(current, search) is not None
        )
        if costly is not None and not raisable and window is not None:
            # No larger target fits the declared context window: the costly change is
            # the one that fits, named with its cost, never a target past the window.
            gives = f" ({costly.verdict.summary})" if costly.verdict is not None else ""
            return (
                f"{_costly_head(costly)}{costly.plain_summary}: no larger target fits the "
                f"{window:,}-token context window, and no other change that keeps the target "
                f"keeps most of the conversation's facts{gives}."
            )
        return _choice(current, search, shown.fixes, best, alternative, facts=costly is not None)
    if best is None and search is not None and current.level == "costs":
        first = first_cost(current)
        if first is not None and first.code == "next-compaction":
            # The verdict's own step (a lower target, or a larger trigger) is what the
            # search re-ran: it is given only as a listed fix, never as untried advice.
            return (
                "Keep the run as it is: no change the fix search re-ran leaves room for "
                "the next turn without adding another cost (it tried every stage's target "
                "lowered and every trigger raised, alone and with the other changes)."
            )
    window = current.numbers.context_window
    if (
        best is None
        and search is not None
        and current.step_cost == "fact-recall"
        and window is not None
        and current.numbers.tokens_before > window
    ):
        # A larger target would keep more, but the window caps it: the search tried the
        # targets under the window, and none keeps enough.
        return (
            "Keep the run as it is, or use a model with a larger context window: no target "
            f"under the {window:,}-token context window keeps {current.recall_floor:.0%} of "
            f"the conversation's facts (the fix search tried them; the run keeps "
            f"{current.numbers.fact_recall or 0.0:.0%})."
        )
    if best is None:
        only = next((f for f in shown.fixes if _only_raises(f)), None)
        if only is None or only.target_tokens is None:
            return current.next_step
        gives = f" ({only.verdict.summary})" if only.verdict is not None else ""
        words = only.plain_summary
        return (
            f"{words[:1].upper()}{words[1:]}: no change that keeps the "
            "target fits without dropping the latest request or most of the conversation's "
            f"facts; there the current parameters fit{gives}."
        )
    return apply_step(best.plain_summary, best.verdict)


def _costly_head(fix: Fix) -> str:
    """How a step that applies ``fix`` opens: "Apply, at a cost (<its costs>): " when its
    verdict fits with costs (:func:`apply_step`), else "Apply: "."""
    v = fix.verdict
    return f"Apply, at a cost ({cost_words(v)}): " if v is not None and v.costs else "Apply: "


def _in_budget_alternative(fixes: Sequence[Fix], best: Fix | None) -> Fix | None:
    """When the first fix to apply (``best``) moves the target: the first listed fix that
    keeps the target and whose run fits with a cost (a fix that keeps the target at no
    cost is listed first); None otherwise."""
    if best is None or not best.changes_target:
        return None
    return next(
        (
            f
            for f in fixes
            if not f.changes_target
            and not destructive(f)
            and f.verdict is not None
            and f.verdict.level == "costs"
        ),
        None,
    )


def _choice(
    current: Verdict,
    search: FixSearch | None,
    fixes: Sequence[Fix],
    best: Fix | None,
    alternative: Fix,
    *,
    facts: bool,
) -> str:
    """ "Choose: …": the larger target (``best`` when it moves the target, else the
    listed fix that only raises it, else the target the current parameters reach) or
    ``alternative``, a change that keeps the target at a cost, with that cost;
    ``facts``: the alternative is the costly choice (:class:`ShownFixes`), which loses
    most of the facts."""
    raised = best if best is not None and best.changes_target else None
    raised = raised or next((f for f in fixes if _only_raises(f)), None)
    if raised is not None:
        # The fix's own words: a larger target moves the trigger with it.
        raise_words = raised.plain_summary
        v = raised.verdict
        if v is not None and v.level == "costs":
            raise_words = f"{raise_words}, at a cost ({cost_words(v)})"
    else:
        to = raise_target_to(current, search)
        raise_words = "raise the target" + (f" to {to:,} tokens" if to is not None else "")
    why = (
        "no change that keeps the target keeps most of the conversation's facts"
        if facts
        else "every change that keeps the target has a cost"
    )
    v = alternative.verdict
    if v is not None and v.costs:  # the same words as "Apply, at a cost (…)"
        other = f"at a cost ({cost_words(v)}): {alternative.plain_summary}, giving {v.summary}"
    else:  # not judged: the search's own measure
        other = (
            f"with {alternative.plain_summary}, which keeps only "
            f"{fix_recall(alternative):.0%} of the facts"
        )
    return (
        f"Choose: {why}. {raise_words[:1].upper()}{raise_words[1:]}, "
        f"or keep within the target {other}."
    )


def advised(
    index: MessageIndex,
    strategy: Strategy,
    current: Verdict,
    search: FixSearch | None,
    *,
    guards: Guards | None = None,
    summaries: Mapping[str, SummaryResponse] | None = None,
    tokenizer_given: bool = True,
    include_destructive: bool = False,
    judge: Callable[[Fix], Fix] | None = None,
    analysis: Mapping[str, Any] | None = None,
) -> tuple[Verdict, FixSearch | None]:
    """The run's one next step, computed once for every surface (the command line's text,
    ``--json`` and ``--explain``, the notebook's ``debug()``, the inspector's verdict bars,
    debugger and story): ``current`` with :attr:`Verdict.next_step` set to
    :func:`next_step` over ``search`` (the judged fixes) completed by
    :func:`with_raised_target`, and that search. A run that fits and is safe, or one with
    no search (``compact()``), keeps the verdict's own step."""
    if current.level == "safe" or search is None:
        return replace(current, step_final=True), search
    judger = _judger(index, judge, tokenizer_given, analysis)
    found = with_raised_target(
        index,
        strategy,
        search,
        current,
        guards=guards,
        summaries=summaries,
        tokenizer_given=tokenizer_given,
        judge=judger,
    )
    lowered = current.lowered_target
    if (
        lowered is not None
        and current.numbers.token_limit is not None
        and not any(not destructive(f) for f in listed_fixes(found.fixes, current))
        and not fits_at(
            index,
            strategy,
            lowered,
            current.numbers.token_limit,
            guards=guards,
            summaries=summaries,
            tokenizer_given=tokenizer_given,
            context_window=current.numbers.context_window,
        )
    ):
        # "Lower the target" would not fit (the stages cannot reach it): following it
        # would lead to "does not fit" and back to a larger target. The step is then the
        # pair that fits with room for the next turn: a larger target and trigger.
        raised = raise_target_fix(
            index,
            strategy,
            current.numbers.tokens_after + 1,
            guards=guards,
            summaries=summaries,
            tokenizer_given=tokenizer_given,
            context_window=current.numbers.context_window,
        )
        if raised is not None and raised.fits:
            judged = judger(raised)
            found = replace(found, fixes=(*found.fixes, judged))
    found = _with_room_fixes(
        index,
        strategy,
        found,
        current,
        guards=guards,
        summaries=summaries,
        tokenizer_given=tokenizer_given,
        judge=judger,
    )
    found = _raise_keeping_facts(
        index,
        strategy,
        found,
        current,
        guards=guards,
        summaries=summaries,
        tokenizer_given=tokenizer_given,
        judge=judger,
    )
    step = next_step(current, found, include_destructive=include_destructive)
    return replace(current, next_step=step, step_final=True), found


def _with_room_fixes(
    index: MessageIndex,
    strategy: Strategy,
    search: FixSearch,
    current: Verdict,
    *,
    guards: Guards | None,
    summaries: Mapping[str, SummaryResponse] | None,
    tokenizer_given: bool,
    judge: Callable[[Fix], Fix],
) -> FixSearch:
    """``search`` with the changes that make room for the next turn (:func:`room_fixes`),
    judged, when the run ``current`` judges fires again on the next turn and no shown
    change keeps the target (:func:`shown_fixes`): the search keeps only its best ranked
    fixes, and a raised trigger that keeps the plan may be the one change whose verdict
    removes the re-trigger (review 6, R3: the debugger listed nothing). Unchanged
    otherwise."""
    if "next-compaction" not in {r.code for r in current.costs}:
        return search
    if any(not f.changes_target for f in shown_fixes(search.fixes, current).fixes):
        return search
    known = {json.dumps(f.config, sort_keys=True, default=str) for f in search.fixes}
    extra = tuple(
        judge(f)
        for f in room_fixes(
            index,
            strategy,
            guards=guards,
            summaries=summaries,
            tokenizer_given=tokenizer_given,
            context_window=current.numbers.context_window,
        )
        if json.dumps(f.config, sort_keys=True, default=str) not in known
    )
    return replace(search, fixes=(*search.fixes, *extra)) if extra else search


def _raise_keeping_facts(
    index: MessageIndex,
    strategy: Strategy,
    search: FixSearch,
    current: Verdict,
    *,
    guards: Guards | None,
    summaries: Mapping[str, SummaryResponse] | None,
    tokenizer_given: bool,
    judge: Callable[[Fix], Fix],
) -> FixSearch:
    """``search`` with its fix that only raises the target replaced, when that fix's
    verdict loses facts (a fact-recall cost: the smallest target that fits is often one
    that keeps the system prompt and little else), by the smallest larger target whose
    verdict keeps enough of them (:func:`recall_target_fix`: the whole history first, then
    a bisection, at most ``1 + LOOSEN_STEPS`` judged runs), so the first search offers the
    one change that fits and is safe instead of a costly one whose own search finds it
    (review 5, N3). Unchanged when no larger target keeps enough facts."""
    raised = next((f for f in search.fixes if _only_raises(f)), None)
    if raised is None or raised.verdict is None or current.level == "safe":
        return search
    if "fact-recall" not in {r.code for r in raised.verdict.costs}:
        return search
    better = _judged_recall_target(
        index,
        strategy,
        current,
        guards=guards,
        summaries=summaries,
        tokenizer_given=tokenizer_given,
        judge=judge,
    )
    if better is None:
        return search
    return replace(search, fixes=tuple(better if f is raised else f for f in search.fixes))


def _judged_recall_target(
    index: MessageIndex,
    strategy: Strategy,
    current: Verdict,
    *,
    guards: Guards | None,
    summaries: Mapping[str, SummaryResponse] | None,
    tokenizer_given: bool,
    judge: Callable[[Fix], Fix],
) -> Fix | None:
    """The fix that raises the target to the smallest size whose verdict keeps
    ``current``'s floor of facts (:func:`recall_target_fix`, never past the declared
    context window), judged by ``judge`` as it will be shown; None when none does."""
    tried: dict[int | None, Fix] = {}

    def enough(fix: Fix) -> bool:
        j = judge(fix)
        tried[fix.target_tokens] = j
        recall = j.verdict.numbers.fact_recall if j.verdict is not None else None
        return recall is not None and recall >= current.recall_floor

    found = recall_target_fix(
        index,
        strategy,
        enough,
        guards=guards,
        summaries=summaries,
        tokenizer_given=tokenizer_given,
        context_window=current.numbers.context_window,
    )
    return None if found is None else tried[found.target_tokens]


def advise(
    index: MessageIndex,
    result: CompactionResult,
    strategy: Strategy,
    guards: Guards | None = None,
    *,
    tokenizer_given: bool = True,
    include_destructive: bool = False,
    analysis: Mapping[str, Any] | None = None,
) -> tuple[Verdict, FixSearch]:
    """The verdict of ``result`` (the run of ``strategy`` under ``guards`` over
    ``index``, :func:`judge_run` with the caller's ``analysis`` settings, such as the
    model's ``context_window``) with its one next step (:func:`advised`) and the judged
    fix search behind it: what the notebook's ``debug()`` and tuner card show, the step
    ``compactlens compact`` gives. A run that fits and is safe is not searched (its
    search is empty: there is nothing to fix). ``guards`` are completed as the run's
    own were (:func:`~compactlens.engine.run_guards`: the provider of the format the
    index's messages were read in, unless one is chosen)."""
    guards = run_guards(caller_format(index.messages), guards)
    current = judge_run(
        index, result, strategy, guards, tokenizer_given=tokenizer_given, analysis=analysis
    )
    if current.level == "safe":
        return current, FixSearch(fixes=(), tried=0, hidden_destructive=0, duration_ms=0.0)
    return searched_advice(
        index,
        strategy,
        current,
        guards=guards,
        summaries=result.summaries,
        tokenizer_given=tokenizer_given,
        include_destructive=include_destructive,
        analysis=analysis,
    )


def searched_advice(
    index: MessageIndex,
    strategy: Strategy,
    current: Verdict,
    *,
    guards: Guards | None = None,
    summaries: Mapping[str, SummaryResponse] | None = None,
    tokenizer_given: bool = True,
    include_destructive: bool = False,
    judge: Callable[[Fix], Fix] | None = None,
    analysis: Mapping[str, Any] | None = None,
) -> tuple[Verdict, FixSearch]:
    """The fix search for ``strategy`` over ``index`` (:func:`search_fixes`), every fix
    judged by ``judge`` (default :func:`judge_fix` over ``index`` with the caller's
    ``analysis`` settings, one fact extraction for the whole search), and ``current``
    with the run's one next step over it (:func:`advised`): the sequence :func:`advise`,
    ``compactlens compact`` and ``compactlens report`` each run, whoever judged
    ``current``. The search keeps under the context window ``current`` was judged with
    (else the one ``analysis`` declares): no fix raises the target past it."""
    window = current.numbers.context_window or analysis_window(analysis)
    found = search_fixes(
        index,
        strategy,
        guards=guards,
        tokenizer_given=tokenizer_given,
        summaries=summaries,
        include_destructive=include_destructive,
        context_window=window,
    )
    judger = _judger(index, judge, tokenizer_given, analysis)
    found = replace(found, fixes=tuple(judger(f) for f in found.fixes))
    judged, search = advised(
        index,
        strategy,
        current,
        found,
        guards=guards,
        summaries=summaries,
        tokenizer_given=tokenizer_given,
        include_destructive=include_destructive,
        judge=judger,
        analysis=analysis,
    )
    return judged, search if search is not None else found


def searched_step(report: CompactionReport, judged: Verdict) -> tuple[str, str] | None:
    """The next step of ``report``'s run after the fix search, (label, text), the one
    ``debug(report.run, strategy, transcript)`` gives, when the report kept the run's
    strategy (:class:`~compactlens.analysis.report.RunSource`) and the search's verdict
    has ``judged``'s level; else None (a step such as "Nothing to change" under a
    "Fits, with costs" badge would contradict the card). The search judges the
    transcript's own provider, as ``debug()`` does, where the report may check more
    (its costs can then differ, its level rarely). Computed once per report."""
    source = report.source
    if source is None or not isinstance(report.run, CompactionResult):
        return None
    if "step" not in source.memo:
        index = MessageIndex.build(source.messages, source.tokenizer or CharEstimator())
        # With the report's context window: the search keeps under it, as the card does.
        window = {
            "context_window": report.retrigger.context_window,
            "max_fraction": report.retrigger.max_fraction,
        }
        advised_run, _search = advise(index, report.run, source.strategy, analysis=window)
        same = advised_run.level == judged.level
        source.memo["step"] = advised_run.next_step_parts if same else None
    step: tuple[str, str] | None = source.memo["step"]
    return step


__all__ = [
    "RECALL_GAIN",
    "FittingTarget",
    "ShownFixes",
    "advise",
    "advised",
    "analysis_window",
    "apply_step",
    "cost_words",
    "destructive",
    "fitting_target",
    "fix_mark",
    "fix_recall",
    "improves",
    "judge_fix",
    "judge_fixes",
    "judge_run",
    "keeps_conversation",
    "listed_fixes",
    "next_step",
    "raise_fix",
    "raise_target_to",
    "searched_advice",
    "searched_step",
    "shown_fixes",
    "verdict_improves",
    "with_raised_target",
]
