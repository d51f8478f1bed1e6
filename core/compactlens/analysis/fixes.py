"""Fixes a user would accept: a goal-seeking search over configuration changes.

For a run that cannot fit (or fits by cutting far more than it had to),
:func:`search_fixes` re-runs the configuration over the cached index with single changes
and with pairs of them: lowering ``minimum_preserved`` / ``keep_last_*`` and the other
parameters each strategy offers (:meth:`Strategy.variants`), adding a stage in front
(tool-result collapse, clamp), and moving the target and trigger together. Nothing calls
a model: summarization stages replay the answers of the run being explained, and a change
that would need a new summary is not proposed.

Each candidate is judged on what it costs, measured on its own result:

* hard requirements (on by default): the latest user request survives, no protocol error
  for the run's provider is introduced, and the result does not trigger compaction again
  on the next turn;
* then: it fits, the share of the conversation's facts still present (``recall``), tokens
  close to the target (fit without over-cutting), fewest changes; a fix that drops a system
  message or moves the target comes after those that do not.

``recall`` counts the facts (paths, ids, numbers, dates, quoted strings, the latest
request; see :mod:`compactlens.analysis.facts`) that the system prompt, the user and the
assistant wrote, not tool arguments or outputs: a fix that collapses a 90,000-character
log keeps the conversation whole. A fact survives when a message stating it is kept
verbatim, or when the text that replaced its message (a collapsed line, a clamped output,
a summary) still contains it.

A fix that breaks a hard requirement (loses the latest request, introduces a protocol
error, or already triggers compaction again) or keeps less than ``min_recall`` of those
facts is *destructive*: it is listed only with ``include_destructive=True`` and says so. Every fix
carries the strategy and guards that reproduce it (``config``); re-running them gives
exactly the promised tokens and recall (:func:`measure`).
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import TYPE_CHECKING, Any

from compactlens.analysis.facts import message_facts, minor_kind, normalize_space
from compactlens.analysis.retrigger import (
    Growth,
    HistoryMetrics,
    estimate_retrigger,
    growth_from_index,
    strategy_triggers,
    token_ceiling,
)
from compactlens.engine.guards import DEFAULT_GUARDS, Guards, latest_request_index
from compactlens.engine.index import MessageIndex
from compactlens.engine.plan import Plan
from compactlens.engine.providers import errors_only, provider_problems
from compactlens.engine.strategies.base import Strategy, Variant, plan_strategy
from compactlens.engine.strategies.clamp import ClampStrategy
from compactlens.engine.strategies.pipeline import PipelineStrategy, TokenBudgetComposedStrategy
from compactlens.engine.strategies.registry import strategy_info
from compactlens.engine.strategies.summarization import NOT_RERUN
from compactlens.engine.strategies.tool_results import ToolResultCompactionStrategy
from compactlens.engine.triggers import Trigger
from compactlens.engine.vocabulary import change_words, plural
from compactlens.model.messages import Message, TextPart, message_text
from compactlens.summarizers.base import SummaryResponse

if TYPE_CHECKING:
    from compactlens.analysis.verdict import Verdict

#: Below this share of the transcript's facts kept, a fix is destructive.
DEFAULT_MIN_RECALL = 0.5
#: The changes that make room for the next turn (:func:`_room_candidates`): every stage's
#: target lowered, or every token trigger raised; already worded plainly.
ROOM_PARAMETERS = ("stage_targets", "stage_triggers")
#: How many candidate configurations one search re-runs at most (singles, then pairs).
MAX_CANDIDATES = 160
#: How many of the best single changes are combined into pairs.
PAIR_POOL = 8
#: How many changes that keep the target and the conversation but lose most facts a
#: search keeps when no cheaper one keeps the target (judged, the best is offered).
COSTLY_KEPT = 3
#: How many single changes that fit but fire again on the next turn are paired with a
#: lower target that leaves room for it (:func:`_room_pairs`).
ROOM_PAIRS = 4
#: A run that fits and uses less than this share of its target has room to keep more:
#: the search then also loosens its stages (see :data:`LOOSENED`).
ROOM_SHARE = 0.9


@dataclass(frozen=True, slots=True)
class Change:
    """One edit of the configuration, in words, with its parameter and value."""

    description: str
    parameter: str
    value: Any = None
    #: The value before the change, when the search knows it (the current target of a
    #: change that raises it: its words give how much larger the budget gets).
    was: Any = None


@dataclass(frozen=True, slots=True)
class Fix:
    """A candidate configuration and what it costs (measured by re-running it)."""

    changes: tuple[Change, ...]
    strategy: Strategy = field(repr=False)
    guards: Guards
    fits: bool
    tokens_after: int
    target_tokens: int | None
    recall: float
    request_kept: bool
    errors_introduced: int
    groups_dropped: int
    groups_changed: int
    turns_until_trigger: int | None
    destructive: bool
    system_dropped: bool = False
    warnings: tuple[str, ...] = ()
    #: The verdict of the fix's result, judged as the run it gives once applied
    #: (:func:`~compactlens.analysis.fix_verdicts.judge_fixes`); None until judged.
    verdict: Verdict | None = field(default=None, compare=False)

    @property
    def summary(self) -> str:
        """The changes in one line."""
        return "; ".join(c.description for c in self.changes)

    @property
    def plain_summary(self) -> str:
        """The changes in plain words (parameter labels from the strategy registry, not
        code names), in one line: "Truncation: newest groups never dropped to 14". A
        larger target that leaves the whole history as it is says so, with how much
        larger the budget gets (:func:`whole_history_words`)."""
        said = joined_changes([plain_change(c, self.strategy) for c in self.changes])
        budget = whole_history_words(self)
        return f"{said} ({budget})" if budget is not None else said

    @property
    def keeps_conversation(self) -> bool:
        """True when the fix keeps the system prompt and the latest request, introduces no
        provider error and does not trigger compaction again at once: it costs facts at
        most, never the conversation itself."""
        return self.meets_requirements and not self.system_dropped

    @property
    def retriggers(self) -> bool:
        """True when the compacted history already triggers compaction (it would compact
        again before the next request)."""
        return self.turns_until_trigger == 0

    @property
    def changes_target(self) -> bool:
        """True when the fix moves the target itself (a larger budget, not a better cut)."""
        return any(c.parameter == "target_tokens" for c in self.changes)

    @property
    def raises_trigger(self) -> bool:
        """True when the fix raises the triggers (a larger context budget, the target kept:
        it makes room for the next turn without cutting more)."""
        return any(c.parameter == "stage_triggers" for c in self.changes)

    @property
    def meets_requirements(self) -> bool:
        return self.request_kept and not self.errors_introduced and not self.retriggers

    @property
    def config(self) -> dict[str, Any]:
        """The strategy and guards configuration that reproduces this fix."""
        return {"strategy": self.strategy.to_dict(), "guards": self.guards.to_dict()}

    def costs(self) -> str:
        """What applying it costs, in one sentence."""
        turns = (
            "no re-trigger within the horizon"
            if self.turns_until_trigger is None
            else f"next compaction in {_turns(self.turns_until_trigger)}"
        )
        request = "latest request kept" if self.request_kept else "latest request LOST"
        return (
            f"{self.tokens_after:,} tokens; {fix_recall(self):.0%} of the conversation's facts "
            "kept; "
            f"{request}; "
            f"{plural(self.groups_dropped, 'group')} dropped; {turns}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "changes": [c.description for c in self.changes],
            "fits": self.fits,
            "tokens_after": self.tokens_after,
            "target_tokens": self.target_tokens,
            # The recall every surface shows (the verdict's, when the fix was judged), and
            # the search's own quick count it ranked the candidates by before judging.
            "recall": round(fix_recall(self), 6),
            "search_recall": round(self.recall, 6),
            "request_kept": self.request_kept,
            "errors_introduced": self.errors_introduced,
            "groups_dropped": self.groups_dropped,
            "groups_changed": self.groups_changed,
            "turns_until_trigger": self.turns_until_trigger,
            "destructive": self.destructive,
            "warnings": list(self.warnings),
            "config": self.config,
            **({"verdict": self.verdict.to_dict()} if self.verdict is not None else {}),
        }


@dataclass(frozen=True, slots=True)
class FixSearch:
    """The ranked fixes of one search, and what it did."""

    fixes: tuple[Fix, ...]
    tried: int
    hidden_destructive: int
    duration_ms: float
    none_reason: str | None = None

    @property
    def best(self) -> Fix | None:
        return self.fixes[0] if self.fixes else None

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` with one row per ranked fix: rank, the change, whether it
        fits, tokens after and the target, fact recall, the latest request kept, errors
        introduced, groups dropped and changed, turns until the next trigger, destructive."""
        from compactlens.analysis.display import fix_frame

        return fix_frame(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fixes": [f.to_dict() for f in self.fixes],
            "tried": self.tried,
            "hidden_destructive": self.hidden_destructive,
            "duration_ms": round(self.duration_ms, 3),
            "none_reason": self.none_reason,
        }


# -- the one rule every surface lists, marks and recommends fixes by ------------------------


def fix_recall(fix: Fix) -> float:
    """The share of the conversation's facts ``fix`` keeps, as the page shows it: its
    verdict's fact recall when it was judged (every fact the verdict counts), else the
    search's own measure."""
    v = fix.verdict
    recall = v.numbers.fact_recall if v is not None else None
    return recall if recall is not None else fix.recall


def keeps_conversation(fix: Fix) -> bool:
    """Whether ``fix`` keeps the system prompt and the latest request, introduces no
    provider error and does not fire again at once (by its verdict too, when it was
    judged): it costs facts at most, never the conversation itself."""
    v = fix.verdict
    lost = v is not None and any(
        r.code in ("latest-request", "provider-errors", "system-prompt") and r.level != "safe"
        for r in v.reasons
    )
    return fix.keeps_conversation and not lost


def destructive(fix: Fix) -> bool:
    """THE rule every surface (the notebook debugger, the command line, the inspector's
    Cannot-fit debugger) uses for a fix it hides unless asked: the fix drops the latest
    user request, introduces a provider error (by the search's measure or its verdict's),
    fires again at once, or keeps less than
    :data:`~compactlens.analysis.fixes.DEFAULT_MIN_RECALL` (half) of the conversation's
    facts, "most of the conversation's facts" lost (:func:`fix_recall`: by its verdict
    when it was judged)."""
    v = fix.verdict
    broken = v is not None and any(
        r.code in ("latest-request", "provider-errors") and r.level != "safe" for r in v.reasons
    )
    return not fix.meets_requirements or broken or fix_recall(fix) < DEFAULT_MIN_RECALL


def fix_mark(fix: Fix) -> str:
    """The mark every surface puts on a listed fix: ``destructive`` for one that loses the
    conversation (:func:`destructive` and not :func:`keeps_conversation`), ``costly``
    for one that fits with costs (most facts lost, the system prompt dropped, or any cost
    its verdict names: an amber verdict), "" for one whose run is safe."""
    if destructive(fix) and not keeps_conversation(fix):
        return "destructive"
    v = fix.verdict
    amber = v.level != "safe" if v is not None else bool(fix.warnings)
    if destructive(fix) or fix.system_dropped or amber:
        return "costly"
    return ""


def _turns(n: int) -> str:
    return plural(n, "turn")


def _stage_type(strategy: Strategy, name: str) -> str | None:
    """The config type of the stage named ``name`` in ``strategy`` (a stage's name is its
    label, by default its type)."""
    config = strategy.to_dict()
    for stage in [config, *config.get("strategies", [])]:
        if stage.get("label", stage.get("type")) == name or stage.get("type") == name:
            kind = stage.get("type")
            return kind if isinstance(kind, str) else None
    return name if strategy_info(name) is not None else None


def joined_changes(said: Sequence[str]) -> str:
    """Changes in plain words as one line, a stage named once: "Tool-result collapse: set
    “newest tool calls kept verbatim” to 0 and “collapsed line” to tool names only",
    not the stage's label before each change."""
    out: list[str] = []
    last = ""
    for words in said:
        stage, sep, rest = words.partition(": ")
        if sep and "(" not in stage and stage == last:
            verb = "set "
            if rest.startswith(verb) and out[-1].startswith(f"{stage}: {verb}"):
                rest = rest[len(verb) :]  # "set X to 0 and Y to 1"
            out[-1] = f"{out[-1]} and {rest}"
            continue
        out.append(words)
        last = stage if sep and "(" not in stage else ""
    return "; ".join(out)


def budget_factor(new: int, was: int) -> str:
    """How much larger ``new`` is than ``was``, in words: "about 2x" from 1.9 times on
    (a whole number when it is within a tenth of one, or from 10 times on), "about 40%
    more than" below."""
    ratio = new / was
    if ratio >= 1.9:
        near = round(ratio)
        whole = abs(ratio - near) < 0.1 or ratio >= 10
        return f"about {near}x" if whole else f"about {ratio:.1f}x"
    return f"about {max(1, round((ratio - 1) * 100))}% more than"


def whole_history_words(fix: Fix) -> str | None:
    """What a fix that raises the target so far that nothing is compacted means, in
    words (None for any other fix): the budget it sets against the current target, and
    that the history is sent whole until it passes the new trigger ("about 2x the
    current target of 12,000 tokens: nothing is compacted until the history passes
    23,944 tokens, so every call sends, and pays for, the whole history").
    It may be the honest answer; it is never a better cut."""
    if not fix.fits or not fix.changes_target or fix.groups_changed:
        return None
    change = next(c for c in fix.changes if c.parameter == "target_tokens")
    was, new = change.was, change.value
    trigger = token_trigger(fix.strategy)
    until = (
        f"nothing is compacted until the history passes {trigger:,} tokens"
        if trigger is not None
        else "nothing is compacted now"
    )
    if isinstance(was, int) and isinstance(new, int) and 0 < was < new:
        factor = budget_factor(new, was)
        head = f"{factor} the current target of {was:,} tokens: "
    else:
        head = "a budget the whole history fits: "
    return f"{head}{until}, so every call sends, and pays for, the whole history"


def token_trigger(strategy: Strategy) -> int | None:
    """The token count above which ``strategy`` first compacts (its lowest token
    trigger), or None when no trigger counts tokens."""
    ceilings = [c for c in map(token_ceiling, strategy_triggers(strategy)) if c is not None]
    return min(ceilings) if ceilings else None


def raise_words(target: int, strategy: Strategy) -> str:
    """A larger target in plain words, with the token trigger ``strategy`` then has (a
    raised target moves the trigger with it, and saying only the target would hide that):
    "raise the target to 2,713 tokens and the trigger to 3,649"."""
    trigger = token_trigger(strategy)
    if trigger is None:
        return f"raise the target to {target:,} tokens"
    if trigger == target:
        return f"raise the target and the trigger to {target:,} tokens"
    return f"raise the target to {target:,} tokens and the trigger to {trigger:,}"


def _own_type(strategy: Strategy) -> Any:
    """The type whose parameter an unprefixed change sets: the strategy's own, or, for a
    fix that put a stage in front of a single strategy (:func:`_front`), that strategy's,
    the pipeline's last stage (one parameter, one label: "newest groups never dropped" of
    truncation, never the general "newest groups never touched")."""
    config = strategy.to_dict()
    stages = config.get("strategies") or []
    if config.get("type") == "pipeline" and stages:
        return stages[-1].get("type")
    return config.get("type")


def plain_change(change: Change, strategy: Strategy) -> str:
    """One change in plain words, as the vocabulary words a change
    (:func:`~compactlens.engine.vocabulary.change_words`): the parameter's label and the
    new value in words ("Truncation: set “newest groups never dropped” to 14",
    "Tool-result collapse: set “collapsed line” to tool names only"); a change that adds a
    stage or moves the target is already worded plainly."""
    if change.parameter == "target_tokens":
        return raise_words(change.value, strategy)
    if change.parameter.startswith("stage:") or change.parameter in ROOM_PARAMETERS:
        return change.description
    stage, _, name = change.parameter.rpartition(".")
    kind = _stage_type(strategy, stage) if stage else _own_type(strategy)
    info = strategy_info(kind) if isinstance(kind, str) else None
    words = change_words(name, change.value, kind if isinstance(kind, str) else "")
    return f"{info.label}: {words}" if stage and info is not None else words


# -- measuring one configuration ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Baseline:
    """What every candidate is compared with, computed once per search."""

    index: MessageIndex
    guards: Guards
    tokenizer_given: bool
    summaries: dict[str, SummaryResponse]
    latest: int | None
    input_errors: Counter[str]
    facts: FactTable
    growth: Growth
    #: The model's context window (None: none declared): a run whose history, target or
    #: token trigger is above it does not fit (:func:`_within_window`).
    window: int | None = None


@dataclass(frozen=True, slots=True)
class FactTable:
    """The conversation's facts (see the module docstring) and the messages stating each."""

    values: tuple[str, ...]
    where: tuple[tuple[int, ...], ...]

    @classmethod
    def build(cls, messages: Sequence[Message]) -> FactTable:
        found: dict[str, list[int]] = {}
        latest = latest_request_index(messages)
        if latest is not None:
            text = normalize_space(messages[latest].text)
            if text:
                found.setdefault(text, []).append(latest)
        for i, m in enumerate(messages):
            if m.role not in ("system", "user", "assistant"):
                continue
            said = Message(role=m.role, parts=tuple(p for p in m.parts if isinstance(p, TextPart)))
            for fact in message_facts(said, i):
                if minor_kind(fact) is None:  # timestamps, hashes, placeholders: apart
                    found.setdefault(fact.value, []).append(i)
        return cls(tuple(found), tuple(tuple(v) for v in found.values()))

    def recall(self, plan: Plan) -> float:
        """The share of facts kept by ``plan`` (1.0 when there are none)."""
        if not self.values:
            return 1.0
        ix = plan.index
        inserted = " ".join(_normal(m) for ins in plan.insertions for m in ins.messages)
        replaced: dict[int, str] = {}
        kept = 0
        for value, where in zip(self.values, self.where, strict=True):
            groups = [ix.group_of[i] for i in where]
            if any(plan.action[g] == "kept" for g in groups):
                kept += 1
                continue
            for g in groups:
                if plan.action[g] == "collapsed" and value in _replaced(plan, g, replaced):
                    kept += 1
                    break
            else:
                kept += int(bool(inserted) and value in inserted)
        return kept / len(self.values)


def _normal(message: Message) -> str:
    return normalize_space(message_text(message))


def _replaced(plan: Plan, gid: int, cache: dict[int, str]) -> str:
    if gid not in cache:
        cache[gid] = " ".join(_normal(m) for m in plan.replacement[gid][0])
    return cache[gid]


def _errors(messages: Sequence[Message], guards: Guards) -> Counter[str]:
    provider = guards.provider or "any"
    return Counter(p.kind for p in errors_only(provider_problems(messages, [provider])))


@dataclass(frozen=True, slots=True)
class _Run:
    """One candidate's re-run, measured."""

    strategy: Strategy
    changes: tuple[Change, ...]
    plan: Plan
    fits: bool
    target: Trigger | None
    target_tokens: int | None
    recall: float
    request_kept: bool
    errors_introduced: int
    turns_until_trigger: int | None

    @property
    def hard_ok(self) -> bool:
        retrigger = self.turns_until_trigger == 0
        return self.request_kept and not self.errors_introduced and not retrigger

    @property
    def changes_target(self) -> bool:
        return any(c.parameter == "target_tokens" for c in self.changes)

    @property
    def system_dropped(self) -> bool:
        """True when a system message is dropped or summarized (the system prompt lost)."""
        plan = self.plan
        return any(
            g.is_system and plan.action[g.id] in ("excluded", "summarized")
            for g in plan.index.groups
        )

    @property
    def keeps_conversation(self) -> bool:
        """The hard requirements met and the system prompt kept (as :class:`Fix`)."""
        return self.hard_ok and not self.system_dropped


def _turns_until(base: _Baseline, strategy: Strategy, plan: Plan) -> int | None:
    triggers = strategy_triggers(strategy.to_dict(), tokenizer_given=base.tokenizer_given)
    start = HistoryMetrics(**plan.metrics())
    return estimate_retrigger(start, triggers, base.growth).turns_until_trigger


def _set_target(strategy: Strategy) -> Trigger | None:
    """The target ``strategy`` sets although no trigger fired (a pipeline: its own, else
    its last stage's; a stage: its own, else its trigger's opposite): a configuration
    whose raised trigger leaves the whole history as it is still has the target it
    fits."""
    if isinstance(strategy, PipelineStrategy):
        if strategy.target is not None or not strategy.strategies:
            return strategy.target
        return _set_target(strategy.strategies[-1])
    target = getattr(strategy, "target", None)
    trigger = getattr(strategy, "trigger", None)
    if target is None and isinstance(trigger, Trigger):
        target = trigger.negate()
    return target if isinstance(target, Trigger) else None


def _run(base: _Baseline, strategy: Strategy, changes: tuple[Change, ...]) -> _Run:
    plan, ctx, outcome = plan_strategy(
        base.index, strategy, base.tokenizer_given, base.summaries, base.guards
    )
    own = outcome.target if outcome.target is not None or outcome.fired else _set_target(strategy)
    target = own.token_limit if own is not None else None
    # A fix must compact (a configuration that no longer fires leaves the history as it
    # is) and must not depend on a model call the search could not make: applied, that
    # call would give another result than the one measured here.
    replayed = not any(e.detail.startswith(NOT_RERUN) for e in ctx.events)
    # A raised target the whole history already fits needs no compaction at all.
    fits_as_is = not outcome.fired and target is not None and plan.tokens <= target and not plan.log
    fits = fits_as_is or (
        outcome.fired
        and outcome.target_met
        and replayed
        and (target is None or plan.tokens <= target)
    )
    fits = fits and _within_window(base.window, strategy, plan.tokens, target)
    latest = base.latest
    kept = latest is None or plan.action[base.index.group_of[latest]] == "kept"
    projection = plan.project()
    introduced = sum((_errors(projection, base.guards) - base.input_errors).values())
    return _Run(
        strategy=strategy,
        changes=changes,
        plan=plan,
        fits=fits,
        target=own,
        target_tokens=target,
        recall=base.facts.recall(plan),
        request_kept=kept,
        errors_introduced=introduced,
        turns_until_trigger=_turns_until(base, strategy, plan),
    )


def _within_window(window: int | None, strategy: Strategy, tokens: int, target: int | None) -> bool:
    """Whether a run stays within the declared context ``window`` (always, without one):
    its history, its target and its lowest token trigger are at most the window (a target
    or a trigger above it lets the history grow past what the model accepts)."""
    if window is None:
        return True
    trigger = token_trigger(strategy)
    return (
        tokens <= window
        and (target is None or target <= window)
        and (trigger is None or trigger <= window)
    )


def measure(
    index: MessageIndex,
    strategy: Strategy,
    *,
    guards: Guards | None = None,
    tokenizer_given: bool = True,
    summaries: Mapping[str, SummaryResponse] | None = None,
    changes: Sequence[Change] = (),
    min_recall: float = DEFAULT_MIN_RECALL,
    context_window: int | None = None,
) -> Fix:
    """Re-run ``strategy`` over ``index`` and measure it as a :class:`Fix`.

    This is what the search reports for each fix, so applying a fix's ``strategy`` and
    ``guards`` and measuring again gives the same numbers (with the same
    ``context_window``: a run above it does not fit).
    """
    base = _baseline(index, guards, tokenizer_given, summaries, context_window)
    return _as_fix(base, _run(base, strategy, tuple(changes)), min_recall)


def _as_fix(base: _Baseline, run: _Run, min_recall: float) -> Fix:
    plan = run.plan
    recall = run.recall
    dropped = sum(1 for a in plan.action if a in ("excluded", "summarized"))
    system_dropped = run.system_dropped
    changed = sum(1 for a in plan.action if a != "kept")
    warnings: list[str] = []
    if not run.request_kept:
        warnings.append("the latest user request is dropped")
    if recall < min_recall:
        warnings.append(f"only {recall:.0%} of the conversation's facts are kept")
    if system_dropped:
        warnings.append("a system message is dropped")
    if run.errors_introduced:
        warnings.append(f"{run.errors_introduced} protocol errors for {base.guards.provider}")
    if run.turns_until_trigger == 0:
        warnings.append("the result already triggers compaction again")
    elif run.turns_until_trigger == 1:
        warnings.append("compaction would fire again after one more turn")
    return Fix(
        changes=run.changes,
        strategy=run.strategy,
        guards=base.guards,
        fits=run.fits,
        tokens_after=plan.tokens,
        target_tokens=run.target_tokens,
        recall=recall,
        request_kept=run.request_kept,
        errors_introduced=run.errors_introduced,
        groups_dropped=dropped,
        groups_changed=changed,
        turns_until_trigger=run.turns_until_trigger,
        destructive=not run.hard_ok or recall < min_recall,
        system_dropped=system_dropped,
        warnings=tuple(warnings),
    )


def _baseline(
    index: MessageIndex,
    guards: Guards | None,
    tokenizer_given: bool,
    summaries: Mapping[str, SummaryResponse] | None,
    window: int | None = None,
) -> _Baseline:
    guards = guards or DEFAULT_GUARDS
    if guards.provider is None:
        guards = replace(guards, provider="any")
    latest = latest_request_index(index.messages)
    return _Baseline(
        index=index,
        guards=guards,
        tokenizer_given=tokenizer_given,
        summaries=dict(summaries or {}),
        latest=latest,
        input_errors=_errors(index.messages, guards),
        facts=FactTable.build(index.messages),
        growth=growth_from_index(index),
        window=window,
    )


# -- candidates ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Candidate:
    changes: tuple[Change, ...]
    build: Callable[[Strategy], Strategy | None]


def _variant_candidate(v: Variant) -> _Candidate:
    change = Change(f"{v.change}", v.parameter, v.value)

    def build(s: Strategy) -> Strategy | None:
        found = next(
            (x for x in s.variants() if x.parameter == v.parameter and x.value == v.value), None
        )
        return found.strategy if found is not None else None

    return _Candidate((change,), build)


def _front(stage: Strategy) -> Callable[[Strategy], Strategy]:
    def build(s: Strategy) -> Strategy:
        if isinstance(s, PipelineStrategy):
            return PipelineStrategy(stage, *s.strategies, target=s.target, label=s.label)
        return PipelineStrategy(stage, s)

    return build


def _stage_candidates(target: Trigger | None, limit: int | None) -> list[_Candidate]:
    """Stages to add in front: they run until the target holds (or everywhere without one)."""
    trigger = target.negate() if target is not None else None
    out: list[_Candidate] = []
    for keep in (1, 0):
        stage = ToolResultCompactionStrategy(
            trigger=trigger, target=target, keep_last_tool_call_groups=keep, minimum_preserved=0
        )
        kept = "the newest tool call kept verbatim" if keep else "no tool call kept verbatim"
        words = f"add tool-result collapse first ({kept})"
        out.append(_Candidate((Change(words, "stage:tool_result_collapse", keep),), _front(stage)))
    base = limit if limit is not None else 8000
    for share in (8, 20):
        cap = max(64, base // share)
        stage_c = ClampStrategy(max_tokens=cap, trigger=trigger, target=target)
        words = f"add a clamp stage first (texts and tool outputs cut to {cap:,} tokens)"
        out.append(_Candidate((Change(words, "stage:clamp", cap),), _front(stage_c)))
    return out


def retarget(strategy: Strategy, target: int, trigger: int | None) -> Strategy:
    """``strategy`` with every token target set to ``target`` and every token trigger to
    ``trigger`` (a token budget becomes ``target``); ``trigger`` None keeps each trigger
    as it is. A stage whose target was implied by its token trigger (its opposite) gets
    an explicit ``tokens <= target``: every stage stops at ``target``, as the inspector's
    "Budget for every stage" control sets the stages (that control moves the triggers to
    the budget too)."""
    if isinstance(strategy, PipelineStrategy):
        kids = tuple(retarget(c, target, trigger) for c in strategy.strategies)
        own = _token(strategy.target, target)
        return PipelineStrategy(*kids, target=own, label=strategy.label)
    if isinstance(strategy, TokenBudgetComposedStrategy):
        kids = tuple(retarget(c, target, trigger) for c in strategy.strategies)
        return replace(strategy, token_budget=target, strategies=kids)
    if not is_dataclass(strategy):
        return strategy
    names = {f.name for f in fields(strategy)}
    updates: dict[str, Any] = {}
    if "trigger" in names and trigger is not None:
        updates["trigger"] = _token(getattr(strategy, "trigger", None), trigger)
    if "target" in names:
        updates["target"] = _token(getattr(strategy, "target", None), target)
    kept_trigger = getattr(strategy, "trigger", None) if "trigger" in names else None
    if updates.get("target") is None and (updates.get("trigger") or kept_trigger) is not None:
        old = getattr(strategy, "trigger", None)
        if old is not None and old.metric == "tokens":
            updates["target"] = Trigger("at_most", "tokens", target)
    changed: Strategy = replace(strategy, **updates)
    return changed


def _token(trigger: Trigger | None, n: int) -> Trigger | None:
    if trigger is None or trigger.metric != "tokens":
        return trigger
    return Trigger(trigger.op, "tokens", n)


def _retarget_candidates(
    limit: int, smallest: int, current: int, growth: float, window: int | None = None
) -> list[_Candidate]:
    """Raise the target to what the guards let the cut reach, and the trigger with it:
    the trigger a few typical turns above the target, then two, then one (the room the
    verdict asks for before it calls a run safe), each still under ``current`` (it must
    fire on the history at hand). A pipeline's later stages fire only above the trigger,
    so a trigger just under the history may leave them idle: the lower ones let them cut
    to the target. Empty when not even one turn of room fits under the history. A
    declared context ``window`` caps the trigger (a target above it is never offered)."""
    target = smallest
    turn = math.ceil(max(growth, 1.0))
    out: list[_Candidate] = []
    if window is not None and target > window:
        return out
    cap = window if window is not None else current - 1
    for trigger in dict.fromkeys(min(current - 1, cap, target + k * turn) for k in (4, 2, 1)):
        if trigger - target < turn:
            continue
        words = (
            f"raise the target {limit:,} → {target:,} tokens and the trigger to {trigger:,} "
            "(a larger context budget)"
        )
        out.append(
            _Candidate(
                (Change(words, "target_tokens", target, limit),), _retargeted_to(target, trigger)
            )
        )
    return out


def _retargeted_to(target: int, trigger: int) -> Callable[[Strategy], Strategy]:
    return lambda s: retarget(s, target, trigger)


def _whole_history_candidate(
    limit: int, total: int, growth: float, window: int | None = None
) -> _Candidate:
    """Raise the target to the whole history (``total`` tokens) and the trigger a typical
    turn above it: nothing is compacted now, and the next turn still fits under it. A
    declared context ``window`` above the history caps the trigger (a trigger past the
    window lets the history grow past what the model accepts)."""
    trigger = total + math.ceil(max(growth, 1.0))
    if window is not None and total < window < trigger:
        trigger = window
    words = (
        f"raise the target {limit:,} → {total:,} tokens (the whole history fits it) and the "
        f"trigger to {trigger:,}"
    )
    return _Candidate(
        (Change(words, "target_tokens", total, limit),), lambda s: retarget(s, total, trigger)
    )


def _own_target_candidates(
    limit: int, reached: int, total: int, base: _Baseline
) -> list[_Candidate]:
    """Raise the target to ``reached``, the tokens the current parameters leave (and the
    trigger with it, as :func:`_retarget_candidates`); when no trigger under the history
    leaves a turn of room above ``reached``, the target goes to the whole history with
    the trigger a turn above it (:func:`_whole_history_candidate`)."""
    found = _retarget_candidates(limit, reached, total, base.growth.tokens, base.window)
    whole = _whole_history_candidate(limit, max(reached, total), base.growth.tokens, base.window)
    return found or [whole]


def _retargeted(to: int) -> Callable[[Strategy], Strategy]:
    return lambda s: retarget(s, to, to)


def raise_target_fix(
    index: MessageIndex,
    strategy: Strategy,
    target: int,
    *,
    guards: Guards | None = None,
    tokenizer_given: bool = True,
    summaries: Mapping[str, SummaryResponse] | None = None,
    context_window: int | None = None,
) -> Fix | None:
    """The fix that only raises the target of ``strategy`` to ``target`` tokens (and its
    token triggers with it, as the search offers it; when the stages then stop above it,
    a target up to half as much again with the trigger above it, then the trigger at the
    target), measured (it may not fit: see :attr:`Fix.fits`); None when ``strategy`` has
    no token target to raise, or ``target`` is above the declared ``context_window``."""
    if context_window is not None and target > context_window:
        return None
    base = _baseline(index, guards, tokenizer_given, summaries, context_window)
    current = _run(base, strategy, ())
    limit, total = current.target_tokens, index.total_tokens
    if limit is None or target <= limit:
        return None
    # The search's own candidate (the trigger raised a few turns above the target); when
    # the stages then stop elsewhere, the trigger at the target, then a little more room.
    ladder = [t for t in (target * 11 // 10, target * 5 // 4, target * 3 // 2) if t < total]
    tries = _own_target_candidates(limit, target, total, base)
    for to in ladder:  # room under the trigger first: a target that fires again helps less
        tries.extend(_retarget_candidates(limit, to, total, base.growth.tokens, base.window))
    if target < total:  # the whole history left as it is, a turn under the trigger
        tries.append(_whole_history_candidate(limit, total, base.growth.tokens, base.window))
    for to in (target, *ladder):
        words = f"raise the target {limit:,} → {to:,} tokens (the trigger with it)"
        tries.append(_Candidate((Change(words, "target_tokens", to, limit),), _retargeted(to)))
    run: _Run | None = None
    for candidate in tries:
        built = candidate.build(strategy)
        run = _run(base, built, candidate.changes) if built is not None else None
        if run is not None and run.fits:
            break
    return _as_fix(base, run, DEFAULT_MIN_RECALL) if run is not None else None


def _room_candidates(base: _Baseline, strategy: Strategy, current: _Run) -> list[_Candidate]:
    """For a run that compacted and fires again on the next turn (it leaves less room
    under its token trigger than a typical turn adds): every stage's target lowered to
    leave that turn of room, the triggers kept (the change the verdict's next step names,
    :func:`~compactlens.analysis.verdict.verdict`); and every token trigger raised a turn
    above the result, the targets kept (a larger context budget). Empty when the run
    does not fire again so soon, or the transcript has too few turns to tell a typical
    one."""
    turns = current.turns_until_trigger
    if turns is None or turns > 1 or base.growth.source == "none":
        return []
    triggers = strategy_triggers(strategy.to_dict(), tokenizer_given=base.tokenizer_given)
    start = HistoryMetrics(**current.plan.metrics())
    limit = estimate_retrigger(start, triggers, base.growth).token_limit
    target = current.target_tokens
    turn = round(base.growth.tokens)
    unit = "agent step" if base.growth.unit == "step" else "turn"  # as the verdict says it
    if limit is None or target is None or turn <= 0:
        return []
    out: list[_Candidate] = []
    lowered = limit - turn
    if 0 < lowered < target:
        words = (
            f"lower every stage's target to {lowered:,} tokens, keeping the triggers at "
            f"{limit:,} (room for a typical {unit} of {plural(turn, 'token')})"
        )
        out.append(
            _Candidate(
                (Change(words, "stage_targets", lowered),),
                lambda s: retarget(s, lowered, None),
            )
        )
    raised = current.plan.tokens + math.ceil(base.growth.tokens)
    if raised > limit:
        words = (
            f"raise every stage's trigger to {raised:,} tokens, keeping the target at "
            f"{target:,} (a larger context budget, room for a typical {unit} of "
            f"{plural(turn, 'token')})"
        )
        out.append(
            _Candidate(
                (Change(words, "stage_triggers", raised),),
                lambda s: retarget(s, target, raised),
            )
        )
    return out


def _window_candidates(base: _Baseline, current: _Run) -> list[_Candidate]:
    """For a configuration whose target or token trigger is above the declared context
    window: every stage's target lowered to leave a typical turn of room under the window
    and every token trigger at the window (empty without a window, or when both are
    already under it)."""
    window = base.window
    if window is None:
        return []
    trigger = token_trigger(current.strategy)
    target = current.target_tokens
    if (target is None or target <= window) and (trigger is None or trigger <= window):
        return []
    turn = math.ceil(max(base.growth.tokens, 1.0))
    lowered = window - turn if turn < window else window
    words = (
        f"lower every stage's target to {lowered:,} tokens and the trigger to {window:,}, "
        f"under the {window:,}-token context window"
    )
    return [
        _Candidate(
            (Change(words, "stage_targets", lowered),),
            lambda s: retarget(s, lowered, window),
        )
    ]


def room_fixes(
    index: MessageIndex,
    strategy: Strategy,
    *,
    guards: Guards | None = None,
    tokenizer_given: bool = True,
    summaries: Mapping[str, SummaryResponse] | None = None,
    context_window: int | None = None,
) -> tuple[Fix, ...]:
    """For a run of ``strategy`` that fires again on the next turn, the changes that make
    room for that turn (:func:`_room_candidates`: every stage's target lowered, or every
    token trigger raised), measured, those that fit and leave the room: a search keeps
    only its best ranked fixes, and for such a run one of these may be the only change
    whose verdict removes a cost. Empty for a run that leaves room."""
    base = _baseline(index, guards, tokenizer_given, summaries, context_window)
    current = _run(base, strategy, ())
    out: list[Fix] = []
    for candidate in _room_candidates(base, strategy, current) if current.fits else []:
        built = candidate.build(strategy)
        run = _run(base, built, candidate.changes) if built is not None else None
        if run is not None and run.fits and _run_leaves_room(run):
            out.append(_as_fix(base, run, DEFAULT_MIN_RECALL))
    return tuple(out)


def fits_at(
    index: MessageIndex,
    strategy: Strategy,
    target: int,
    trigger: int,
    *,
    guards: Guards | None = None,
    tokenizer_given: bool = True,
    summaries: Mapping[str, SummaryResponse] | None = None,
    context_window: int | None = None,
) -> bool:
    """Whether ``strategy`` with its token target at ``target`` and its token trigger at
    ``trigger`` (:func:`retarget`) fits over ``index`` (summaries replayed; within
    ``context_window`` when one is declared): a next step that asks for a lower target is
    checked with it before it is given."""
    base = _baseline(index, guards, tokenizer_given, summaries, context_window)
    return _run(base, retarget(strategy, target, trigger), ()).fits


def recall_target_fix(
    index: MessageIndex,
    strategy: Strategy,
    enough: Callable[[Fix], bool],
    *,
    guards: Guards | None = None,
    tokenizer_given: bool = True,
    summaries: Mapping[str, SummaryResponse] | None = None,
    context_window: int | None = None,
) -> Fix | None:
    """The fix that raises the target of ``strategy`` (and its token trigger with it, as
    :func:`raise_target_fix`) to the smallest target whose run fits, keeps the
    conversation and is ``enough`` (the caller's test: its verdict keeps enough facts),
    found by bisection (:data:`LOOSEN_STEPS` re-runs): the one-click answer to a run that
    fits but loses most facts. None when ``strategy`` has no token target, or no target
    under the whole history (and the declared ``context_window``) is enough."""
    base = _baseline(index, guards, tokenizer_given, summaries, context_window)
    limit, total = _run(base, strategy, ()).target_tokens, index.total_tokens
    top = total
    if context_window is not None and total >= context_window:
        # The largest target that leaves a typical turn of room under the window (a
        # history under the window may be left whole, its trigger capped at the window:
        # :func:`_whole_history_candidate`).
        top = min(total, context_window - math.ceil(max(base.growth.tokens, 1.0)))
    if limit is None or limit >= top:
        return None

    def at(target: int) -> Fix | None:
        for candidate in _own_target_candidates(limit, target, total, base):
            built = candidate.build(strategy)
            run = _run(base, built, candidate.changes) if built is not None else None
            if run is None or not run.fits or not run.hard_ok:
                continue
            fix = _as_fix(base, run, DEFAULT_MIN_RECALL)
            return fix if enough(fix) else None
        return None

    # lo is not enough (the run at hand); hi, the whole history left as it is with a turn
    # of room under the trigger, is tried first.
    lo, hi = limit, top
    found = at(hi)
    if found is None:
        return None
    for _ in range(LOOSEN_STEPS):
        if hi - lo <= 1:
            break
        mid = (lo + hi) // 2
        fix = at(mid)
        if fix is None:
            lo = mid
        else:
            hi, found = mid, fix
    return found


def _singles(strategy: Strategy, target: Trigger | None, limit: int | None) -> list[_Candidate]:
    out = [_variant_candidate(v) for v in strategy.variants()]
    added = _stage_candidates(target, limit)
    if isinstance(_first_stage(strategy), ToolResultCompactionStrategy):
        # A tool-result collapse in front of one repeats the run's own first stage (its
        # own parameters are varied above): no such fix.
        added = [c for c in added if c.changes[0].parameter != "stage:tool_result_collapse"]
    out.extend(added)
    return out


def _first_stage(strategy: Strategy) -> Strategy:
    """The stage that runs first in ``strategy`` (itself for a single stage)."""
    if isinstance(strategy, PipelineStrategy) and strategy.strategies:
        return _first_stage(strategy.strategies[0])
    return strategy


#: The parameters a stage keeps more with when they are larger: loosening one keeps more
#: of the history word for word (a larger clamp cut, more recent groups kept verbatim).
LOOSENED = (
    "max_tokens",
    "keep_last_tool_call_groups",
    "keep_last_groups",
    "keep_last_turns",
    "minimum_preserved",
)
#: How many re-runs one loosened parameter may take (a bisection for the largest value
#: that still fits the target).
LOOSEN_STEPS = 7


def _stages(strategy: Strategy) -> list[tuple[str, Strategy, Callable[[Strategy], Strategy]]]:
    """Each stage of ``strategy`` one level deep, with its parameter prefix ("" for the
    strategy itself) and how to put a changed copy of it back."""
    if isinstance(strategy, PipelineStrategy):
        kids = strategy.strategies

        def put(i: int) -> Callable[[Strategy], Strategy]:
            return lambda new: PipelineStrategy(
                *kids[:i], new, *kids[i + 1 :], target=strategy.target, label=strategy.label
            )

        return [(f"{k.name}.", k, put(i)) for i, k in enumerate(kids)]
    if isinstance(strategy, TokenBudgetComposedStrategy):
        parts = strategy.strategies

        def put_c(i: int) -> Callable[[Strategy], Strategy]:
            return lambda new: replace(strategy, strategies=(*parts[:i], new, *parts[i + 1 :]))

        return [("", strategy, lambda new: new)] + [
            (f"{k.name}.", k, put_c(i)) for i, k in enumerate(parts)
        ]
    return [("", strategy, lambda new: new)]


def _dropped(plan: Plan) -> int:
    return sum(1 for a in plan.action if a == "excluded")


def _largest_fitting(
    low: int, high: int, probe: Callable[[int], _Run], most_dropped: int | None = None
) -> _Run | None:
    """The run of the largest value in ``(low, high]`` that fits with room for more than
    the next turn (and, with ``most_dropped``, drops at most that many groups: a loosened
    stage must not leave the cutting to a harsher later one), by bisection (that is
    assumed to hold up to some value and fail above it), in at most
    :data:`LOOSEN_STEPS` re-runs; None when none does."""

    def good(run: _Run) -> bool:
        # A loosened run that fires again within a turn trades one cost for another.
        room = run.turns_until_trigger is None or run.turns_until_trigger > 1
        return run.fits and room and (most_dropped is None or _dropped(run.plan) <= most_dropped)

    first = probe(high)
    if good(first):
        return first
    best: _Run | None = None
    lo, hi = low, high  # lo: good (or the start), hi: not
    for _ in range(LOOSEN_STEPS - 1):
        if hi - lo <= max(1, lo // 50):  # within 2%: close enough
            break
        mid = (lo + hi) // 2
        run = probe(mid)
        if good(run):
            best, lo = run, mid
        else:
            hi = mid
    return best


def _loosened(base: _Baseline, strategy: Strategy, limit: int, dropped: int) -> list[_Run]:
    """For a run that fits with room under its target: each stage parameter of
    :data:`LOOSENED` raised to the largest value that still fits ``limit`` without
    dropping more than the run's ``dropped`` groups (more of the history kept word for
    word), re-run; a token cut is rounded to a readable number."""
    out: list[_Run] = []
    groups = len(base.index.groups)
    for prefix, stage, put in _stages(strategy):
        if not is_dataclass(stage):
            continue
        names = {f.name for f in fields(stage)}
        config = stage.to_dict()  # a parameter left unset reads as its effective value
        for name in LOOSENED:
            value = getattr(stage, name, None) if name in names else None
            value = config.get(name) if value is None and name in names else value
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            high = limit if name == "max_tokens" else groups
            if high <= value:
                continue

            probe = _param_probe(base, (prefix, stage, put), name)
            found = _largest_fitting(value, high, probe, dropped)
            if found is not None and name == "max_tokens":
                found = _rounded(found, probe, value)
            if found is not None:
                out.append(found)
    return out


def _param_probe(
    base: _Baseline,
    where: tuple[str, Strategy, Callable[[Strategy], Strategy]],
    name: str,
) -> Callable[[int], _Run]:
    """Re-runs with the stage ``where`` names (:func:`_stages`) given ``name`` = n."""
    prefix, stage, put = where
    kind = str(stage.to_dict().get("type", ""))
    info = strategy_info(kind)

    def probe(n: int) -> _Run:
        words = change_words(name, n, kind)
        said = f"{info.label}: {words}" if prefix and info is not None else words
        change = Change(said, f"{prefix}{name}", n)
        return _run(base, put(replace(stage, **{name: n})), (change,))  # type: ignore[type-var]  # a dataclass stage (checked)

    return probe


def _rounded(found: _Run, probe: Callable[[int], _Run], floor: int) -> _Run:
    """``found`` with its token cut rounded down to a readable number (hundreds from
    1,000, tens below) when that still fits and stays above ``floor``."""
    cap = found.changes[-1].value
    nice = cap // 100 * 100 if cap >= 1000 else cap // 10 * 10
    if nice == cap or nice <= floor:
        return found
    rounded = probe(nice)
    return rounded if rounded.fits else found


def _shorter_summaries(base: _Baseline, strategy: Strategy) -> list[_Run]:
    """The summaries the compaction writes are not fixed: each summarizing stage's summary
    limit halved and quartered, re-run (a model summarizer is not re-run: those runs do
    not fit and are dropped)."""
    out: list[_Run] = []
    for where in _stages(strategy):
        limit = where[1].to_dict().get("max_summary_tokens")
        if not isinstance(limit, int) or isinstance(limit, bool):
            continue
        probe = _param_probe(base, where, "max_summary_tokens")
        out.extend(probe(n) for n in (limit // 2, limit // 4) if n >= 64)
    return out


def _sized_clamp(base: _Baseline, strategy: Strategy, target: Trigger, limit: int) -> _Run | None:
    """A clamp stage in front whose cut is as large as still fits ``limit``: it cuts only
    as much as the target needs (the fixed shares of :func:`_stage_candidates` often cut
    far more)."""
    trigger = target.negate()

    def probe(cap: int) -> _Run:
        stage = ClampStrategy(max_tokens=cap, trigger=trigger, target=target)
        words = f"add a clamp stage first (texts and tool outputs cut to {cap:,} tokens)"
        return _run(base, _front(stage)(strategy), (Change(words, "stage:clamp", cap),))

    found = _largest_fitting(64, limit, probe)
    return _rounded(found, probe, 64) if found is not None else None


def _window_clamps(base: _Baseline, strategy: Strategy, current: _Run) -> list[_Run | None]:
    """For a configuration above the declared context window: every stage's target
    lowered under it (:func:`_window_candidates`) with a clamp in front sized to that
    target (:func:`_sized_clamp`), which cuts only as much as the window needs."""
    out: list[_Run | None] = []
    for candidate in _window_candidates(base, current):
        lowered = candidate.build(strategy)
        if lowered is None:
            continue
        to = candidate.changes[0].value
        run = _sized_clamp(base, lowered, Trigger("at_most", "tokens", to), to)
        out.append(replace(run, changes=(*run.changes, *candidate.changes)) if run else None)
    return out


def _pair(a: _Candidate, b: _Candidate) -> _Candidate:
    def build(s: Strategy) -> Strategy | None:
        first = a.build(s)
        return b.build(first) if first is not None else None

    return _Candidate(a.changes + b.changes, build)


def _key(strategy: Strategy) -> str:
    return json.dumps(strategy.to_dict(), sort_keys=True, default=str)


# -- the search ----------------------------------------------------------------------------


def _rank(run: _Run) -> tuple[Any, ...]:
    """Hard requirements, then fitting, facts kept, tokens close to the target, fewest changes."""
    limit = run.target_tokens
    gap = (limit - run.plan.tokens) if (limit is not None and run.fits) else 10**12
    return (
        not run.hard_ok,
        not run.fits,
        run.changes_target,
        -round(run.recall, 3),
        gap,
        len(run.changes),
    )


def search_fixes(
    index: MessageIndex,
    strategy: Strategy,
    *,
    guards: Guards | None = None,
    tokenizer_given: bool = True,
    summaries: Mapping[str, SummaryResponse] | None = None,
    include_destructive: bool = False,
    min_recall: float = DEFAULT_MIN_RECALL,
    max_fixes: int = 5,
    max_candidates: int = MAX_CANDIDATES,
    context_window: int | None = None,
) -> FixSearch:
    """Search single and paired configuration changes that make ``strategy`` fit.

    Re-runs each candidate over ``index`` (replaying ``summaries``; no model call) and
    returns the best ``max_fixes``, ranked as the module docstring says. Destructive fixes
    are left out unless ``include_destructive`` (then they come last, labelled). With a
    declared ``context_window``, a run whose history, target or token trigger is above it
    does not fit (no fix raises the target past the window), and a configuration whose
    target is above it is offered every stage's target lowered under it.
    """
    start = time.perf_counter()
    base = _baseline(index, guards, tokenizer_given, summaries, context_window)
    current = _run(base, strategy, ())
    target = current.target
    limit = target.token_limit if target is not None else None
    seen = {_key(strategy)}
    runs: list[_Run] = []

    def attempt(candidate: _Candidate) -> _Run | None:
        if len(seen) > max_candidates:
            return None
        built = candidate.build(strategy)
        if built is None:
            return None
        key = _key(built)
        if key in seen:
            return None
        seen.add(key)
        run = _run(base, built, candidate.changes)
        runs.append(run)
        return run

    loosened: list[_Run] = []  # kept whatever the search recall says (the verdict judges)
    singles = _singles(strategy, target, limit)
    tried = [(c, r) for c in singles if (r := attempt(c)) is not None]
    room = _room_candidates(base, strategy, current) if current.fits else []
    room.extend(_window_candidates(base, current))
    for candidate in room:
        attempt(candidate)
        if candidate.changes[0].parameter == "stage_targets":
            # A lower target the first stage cannot reach alone: with a change that cuts
            # more (the later stages fire only above the triggers it keeps).
            for single in singles:
                attempt(_pair(single, candidate))
    _room_pairs(base, strategy, tried, attempt)
    if limit is not None:
        # A change that drops the system prompt does not keep the conversation: when only
        # such changes reach the target, a larger target is offered beside them.
        smallest = min(
            (r.plan.tokens for _, r in tried if r.keeps_conversation), default=current.plan.tokens
        )
        raised = False
        if smallest > limit:
            raised = _first_fitting(
                attempt,
                _retarget_candidates(
                    limit, smallest, index.total_tokens, base.growth.tokens, base.window
                ),
            )
        cheap = any(r.fits and r.keeps_conversation and r.recall >= min_recall for _, r in tried)
        if not current.fits and not cheap and current.plan.tokens > limit and not raised:
            # Every change that fits costs most of the facts (or none fits): offer the
            # target the current parameters reach, as a one-click alternative (one larger
            # target only: two that differ in the trigger alone would be one fix twice).
            _first_fitting(
                attempt,
                _own_target_candidates(limit, current.plan.tokens, index.total_tokens, base),
            )
    if limit is not None and target is not None:
        # Changes that cut only as much as the target needs: a clamp sized to it, and,
        # for a run that fits with room to spare, each stage loosened to keep more.
        clamped = any(isinstance(st, ClampStrategy) for _, st, _ in _stages(strategy))
        extra = [] if clamped else [_sized_clamp(base, strategy, target, limit)]
        if current.fits and current.plan.tokens < ROOM_SHARE * limit:
            extra.extend(_loosened(base, strategy, limit, _dropped(current.plan)))
        if not current.fits and current.plan.insertions:
            extra.extend(_shorter_summaries(base, strategy))
        if not clamped:
            extra.extend(_window_clamps(base, strategy, current))
        for run in extra:
            if run is not None and _key(run.strategy) not in seen:
                seen.add(_key(run.strategy))
                runs.append(run)
                loosened.append(run)
    # Singles that change something come first in the pool: a change whose result is the
    # run's own (a parameter the run never reaches) pairs into a repeat of the other change.
    same = _outcome(current.plan)

    def pooled(cr: tuple[_Candidate, _Run]) -> tuple[Any, ...]:
        rank = _rank(cr[1])
        return (*rank[:2], _outcome(cr[1].plan) == same, *rank[2:])

    pool = [c for c, _ in sorted(tried, key=pooled)][:PAIR_POOL]
    for i, a in enumerate(pool):
        for b in pool[i + 1 :]:
            if a.changes[0].parameter != b.changes[0].parameter:
                attempt(_pair(a, b))
    return _finish(base, current, runs, start, include_destructive, min_recall, max_fixes, loosened)


def _room_pairs(
    base: _Baseline,
    strategy: Strategy,
    tried: Sequence[tuple[_Candidate, _Run]],
    attempt: Callable[[_Candidate], _Run | None],
) -> None:
    """The best single changes that fit but fire again on the next turn (a shorter
    collapsed note that keeps more groups word for word, say), each paired with every
    stage's target lowered to leave that turn of room (:func:`_room_candidates` of its
    own run): the change keeps its gain and the run its room, within the target."""
    ranked = sorted(tried, key=lambda cr: _rank(cr[1]))
    refiring = [(c, r) for c, r in ranked if r.fits and not _run_leaves_room(r)]
    for single, run in refiring[:ROOM_PAIRS]:
        for room in _room_candidates(base, strategy, run):
            if room.changes[0].parameter == "stage_targets":
                attempt(_pair(single, room))


def _run_leaves_room(run: _Run) -> bool:
    """Whether ``run``'s result leaves room for more than the next turn."""
    return run.turns_until_trigger is None or run.turns_until_trigger > 1


def _first_fitting(
    attempt: Callable[[_Candidate], _Run | None], candidates: Sequence[_Candidate]
) -> bool:
    """Re-run ``candidates`` in order until one fits (the most room first); whether one
    did."""
    for candidate in candidates:
        run = attempt(candidate)
        if run is not None and run.fits:
            return True
    return False


def _finish(
    base: _Baseline,
    current: _Run,
    runs: list[_Run],
    start: float,
    include_destructive: bool,
    min_recall: float,
    max_fixes: int,
    loosened: Sequence[_Run] = (),
) -> FixSearch:
    measured: list[Fix] = []
    extra: list[Fix] = []  # the loosened stages: listed beside the best, not ranked out
    # A change whose result is the current one is no fix; two with the same result are one.
    # When compaction fires next is part of the result: a raised trigger keeps the plan.
    # The target is, only for a fix that raises it: a lower target that cuts no more than
    # the run did is no fix.
    outcomes: set[tuple[Any, ...]] = {
        (current.target_tokens, current.turns_until_trigger, *_outcome(current.plan))
    }
    for run in sorted((r for r in runs if r.fits), key=_rank):
        # A pair whose second change does nothing repeats a simpler fix: keep the simpler.
        limit = run.target_tokens if run.changes_target else current.target_tokens
        outcome = (limit, run.turns_until_trigger, *_outcome(run.plan))
        if outcome not in outcomes:
            outcomes.add(outcome)
            fix = _as_fix(base, run, min_recall)
            measured.append(fix)
            if any(run is r for r in loosened):
                extra.append(fix)
    measured.sort(key=_fix_order)
    safe = [f for f in measured if not f.destructive]
    risky = [f for f in measured if f.destructive]
    if not any(not f.changes_target for f in safe):
        # Every change that keeps the target costs most of the facts: the best of those
        # that keep the conversation (system prompt, latest request, provider-valid) is
        # still shown, first, with its cost, next to the larger target. A few of them, those
        # that leave room for the next turn first: the verdicts choose among them.
        costly = sorted(
            (f for f in risky if f.keeps_conversation and not f.changes_target),
            key=lambda f: (not _leaves_room(f), _fix_order(f)),
        )[:COSTLY_KEPT]
        for f in costly:
            risky.remove(f)
        safe[:0] = costly
    safe = safe[:max_fixes] + [f for f in extra if f in safe[max_fixes:]]
    hidden = 0 if include_destructive else len(risky)
    chosen = (*safe, *risky[:max_fixes]) if include_destructive else tuple(safe)
    reason = None if safe else _why_none(current, runs, len(risky), base.window)
    return FixSearch(
        fixes=chosen,
        tried=len(runs),
        hidden_destructive=hidden,
        duration_ms=(time.perf_counter() - start) * 1000.0,
        none_reason=reason,
    )


def _leaves_room(f: Fix) -> bool:
    """Whether ``f``'s result leaves room for more than the next turn."""
    return f.turns_until_trigger is None or f.turns_until_trigger > 1


def _fix_order(f: Fix) -> tuple[Any, ...]:
    """Fixes that keep the conversation first, and among them those that keep the target,
    then those that keep the triggers; then the cheap before the costly, facts kept,
    tokens close to the target, fewest changes."""
    return (
        not f.keeps_conversation,
        f.changes_target,
        f.raises_trigger,
        f.destructive,
        -round(f.recall, 3),
        f.target_tokens - f.tokens_after if f.target_tokens is not None else 0,
        len(f.changes),
    )


def _outcome(plan: Plan) -> tuple[Any, ...]:
    """What a plan did, for spotting candidates with the same result."""
    inserted = tuple((i.position, i.tokens) for i in plan.insertions)
    return (plan.tokens, tuple(plan.action), tuple(sorted(plan.replacement)), inserted)


def _why_none(
    current: _Run, runs: Iterable[_Run], destructive: int, window: int | None = None
) -> str:
    runs = list(runs)
    fitting = [r for r in runs if r.fits]
    if not fitting:
        smallest = min((r.plan.tokens for r in runs), default=current.plan.tokens)
        limit = current.target_tokens
        if window is not None and smallest > window:
            return (
                f"none of the {len(runs)} changes tried fits the {window:,}-token context "
                f"window: the smallest history any of them reached is {smallest:,} tokens, "
                "because what the guards and the stages keep (the latest request, protected "
                "groups) is larger; no larger target can help under that window"
            )
        against = f" against a target of {limit:,}" if limit is not None else ""
        return (
            f"none of the {len(runs)} changes tried fits: the smallest history any of them "
            f"reached is {smallest:,} tokens{against}, because what the guards and the stages "
            "keep (the latest request, protected groups) is larger; raise the target"
        )
    if destructive:
        return (
            f"only destructive changes fit ({destructive} found: they drop the latest request "
            "or most of the conversation's facts); ask for them explicitly, or raise the target"
        )
    return "no change fits without breaking a requirement (see the warnings of each change)"
