"""One verdict per run: the level, the reasons for it, the numbers and the next step.

:func:`verdict` reads an engine :class:`~compactlens.engine.result.CompactionResult` (or
``compact()``'s :class:`~compactlens.compact.result.CompactResult`) and, optionally, the
:class:`~compactlens.analysis.report.CompactionReport` that :func:`analyze` measured for
it, and returns a :class:`Verdict`: plain, JSON-able data that every surface (the command
line, notebook cards, the inspector's pages, the HTML report) renders as it is, without
counting, judging or wording anything again.

The levels are the user's:

- ``safe`` ("Fits and safe"): the target is met, the compacted history is within the
  context window when the report declares one (``analyze(context_window=...)``), no
  provider error is introduced and no
  warning that changes the request (consecutive turns the provider joins into one lose
  nothing: they are named as a note), the latest user request and the system prompt are
  kept, compaction does not fire again on the very next turn, fact recall is at least
  ``recall_floor`` (:data:`DEFAULT_RECALL_FLOOR`, 80%: a larger loss is a named cost) and
  (when the report priced it) the next turns do not cost more with the compaction than without it;
- ``costs`` ("Fits, with costs"): it fits, but one of those checks fails or was not
  measured; each is named as a :class:`Reason`;
- ``no-fit`` ("Does not fit"): the run ended ``cannot-fit``.

The report is passed explicitly (it is not computed here: fact survival reads every changed
message, and the caller chooses the triggers, providers and prices it measures with).
Without a report the checks it would answer are *not measured*, and a verdict whose checks
were not all measured is never ``safe``.

When compaction fires again is a cost only where it can be one: a run that compacted and
leaves less room under its trigger than one typical turn adds (the median of the latest
turns, :func:`~compactlens.analysis.retrigger.growth_from_index`). An agent log with one or
two user turns is judged per agent step instead (the median of its latest groups: every
model call adds one), so "unmeasured" never stands in for "safe" there. A run that needed
no compaction has not fired; a configuration without a trigger never fires; a transcript
with too few turns and steps to measure either gives no estimate (said so). The next
step for that cost is one that helps: a target that leaves a typical turn of room under the
trigger, or, when one turn alone is larger than the trigger allows, a larger trigger
(compacting further cannot help then).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from compactlens.analysis.fixes import FixSearch, destructive
from compactlens.analysis.protocol import ProtocolProblem, provider_words
from compactlens.analysis.report import CompactionReport
from compactlens.analysis.retrigger import DEFAULT_MAX_FRACTION
from compactlens.compact.result import CompactResult
from compactlens.engine.display import NO_FIT_STEP
from compactlens.engine.result import CompactionResult
from compactlens.engine.vocabulary import money, pairing_words, plural
from compactlens.model.display import Card, card_html
from compactlens.model.errors import ConfigError, InputTypeError, UsageError
from compactlens.session.runtime import CompactionSession

Level: TypeAlias = Literal["safe", "costs", "no-fit"]

#: The headline of each level, in plain words.
HEADLINES: Mapping[Level, str] = MappingProxyType(
    {"safe": "Fits and safe", "costs": "Fits, with costs", "no-fit": "Does not fit"}
)
#: How a next step with nothing to do begins (then the reason, as prose).
NOTHING_TO_CHANGE = "Nothing to change"
#: The colour of each level (cards and widgets): green, amber, red.
LEVEL_COLORS: Mapping[Level, str] = MappingProxyType(
    {"safe": "#2BB673", "costs": "#F2A541", "no-fit": "#E4572E"}
)
#: The lowest fact recall a run may have and still be ``safe``: at most one fact in five
#: of the conversation may be lost (only those in the messages it changed can be). Green
#: means a person or an agent can go on from the compacted history without missing an
#: identifier, path or number it replaced; a compaction that loses more (the bundled coding
#: agent's reference run keeps 57%, a truncation 19%) still fits, but the loss is named as
#: a cost (amber) so the user decides whether it is acceptable. The floor is per call
#: (``recall_floor=``); the rule, with this rationale, is written down in docs/guide.md
#: ("The verdict").
DEFAULT_RECALL_FLOOR = 0.8
#: What fact recall counts, in one line.
FACT_DEFINITION = (
    "Facts are the identifiers, paths, numbers, names and other exact values of the whole "
    "conversation; only those in the messages the compaction dropped, collapsed or "
    "summarized can be lost. A fact counts as kept when it still appears word for word in "
    "the compacted history. Timestamps, hashes and redaction placeholders are counted "
    "apart, not in recall."
)
#: How the verdict names each group decision, in display order.
GROUP_LABELS: Mapping[str, str] = MappingProxyType(
    {
        "kept": "kept",
        "excluded": "dropped",
        "collapsed": "collapsed",
        "summarized": "summarized",
        "inserted": "inserted",
    }
)
#: What to do about each failed check, in plain words.
_FIXES = {
    "provider-errors": (
        "Keep tool calls and their results together (set the provider in the guards so "
        "every strategy respects its rules), then run again."
    ),
    # Only the warnings that change the request are costs (a system message moved to the
    # top); consecutive turns the provider joins are a note (HARMLESS_KINDS). No guard
    # moves a system message back: the provider guard keeps tool calls paired and the
    # first turn a user turn.
    "provider-warnings": (
        "Keep every system message where the provider keeps it: the provider moves a system "
        "message that follows the conversation's start to the top of the request, so its "
        "place in the conversation is lost. Keep the system messages at the start of the "
        "history, or keep the messages around them word for word, then run again."
    ),
    "cache": (
        "Compact less often and deeper (a lower target), so the cache is rewritten once for "
        "a larger saving."
    ),
    "history-errors": (
        "Repair the history before it is sent: give every tool call its result, put each "
        "result right after its call and remove results whose call is gone (the Transcript "
        "page lists each problem at its message). Compaction cannot repair what the log "
        "already breaks."
    ),
    "latest-request": "Keep the latest user request: turn its guard back on, then run again.",
    "system-prompt": (
        'Keep the system prompt: turn "system messages kept" back on in every stage that '
        "drops or summarizes messages, then run again."
    ),
    "context-window": (
        "Lower the target and the trigger under the context window, so the compacted "
        "history fits the model's request."
    ),
    "next-compaction": (
        "Leave room between the trigger and the target (a lower target than the trigger) "
        "so the next turn fits without compacting again."
    ),
    "fact-recall": (
        "Keep more of the history word for word: raise the target, or add a tool-result "
        "collapse stage first, so old tool results shrink before whole turns are dropped."
    ),
    "not-measured": "Analyze the run to check the rest (the Analysis page, or analyze() in code).",
    "no-trigger": (
        "Give the run's strategy as its triggers (analyze(original, result, "
        "triggers=strategy)) so the report checks when compaction fires again."
    ),
    "no-request": (
        "Check that the log was read in full: the Transcript page lists every message read, "
        "and a log whose requests were not read cannot show that the agent keeps its task."
    ),
}
#: Which cost the next step is about when a run has several, most important first: a
#: history over the declared context window (the model rejects the whole request), what
#: breaks the conversation (the latest request, a request the provider rejects, the
#: system prompt), then losing facts, then compacting again at once, then what the
#: provider would silently change, then money, then what was not measured. A run that
#: keeps 18% of its facts is told to keep more, not to set a provider.
COST_ORDER = (
    "context-window",
    "latest-request",
    "provider-errors",
    "history-errors",
    "system-prompt",
    "fact-recall",
    "next-compaction",
    "provider-warnings",
    "cache",
    "no-request",
    "no-trigger",
    "not-measured",
)
#: A run that uses less than this share of its target has room to keep more word for
#: word: its fact-recall step says so instead of "raise the target".
ROOM_SHARE = 0.9


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRun:
    """A compaction that was not run here, by its numbers: an agent's own, read from its
    log (the post-mortem judges it beside compactlens's run at the same size).
    ``status`` is ``compacted`` (what the agent did always "fits" the room it chose:
    ``target_tokens`` is that room)."""

    status: str = "compacted"
    tokens_before: int
    tokens_after: int
    target_tokens: int | None
    messages_before: int
    messages_after: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Reason:
    """One check of the verdict and its outcome: ``level`` is ``safe`` when it passed,
    ``costs`` when it failed (or was not measured) on a run that fits, ``no-fit`` for the
    target of a run that does not fit. ``code`` is stable for programs; ``text`` is the
    sentence a surface shows."""

    code: str
    level: Level
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "level": self.level, "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
class VerdictNumbers:
    """The numbers every surface shows for one run (None: not measured or not applicable).

    ``groups`` counts group decisions by plain label (``kept`` excludes inserted groups;
    None for ``compact()`` results, which replace a message range). ``facts_kept`` of
    ``facts_total`` is fact recall (see ``facts_counted``). ``provider_errors`` and
    ``provider_warnings`` are the problems the compaction introduced, for ``provider``
    (None: every provider the report checked); ``history_errors`` the errors the history
    already had and still sends (:func:`history_errors`). ``turns_until_next_compaction`` is None
    when no trigger fires within ``horizon`` turns; ``turn_tokens`` is what a typical turn
    adds (None: too few of the ``turns_measured`` user turns to tell); ``growth_unit`` is
    ``"step"`` when the log had too few user turns and both are per agent step (one model
    call) instead; ``growth_source`` says how ``turn_tokens`` was found (``"few"``: the
    largest of a log's only one or two steps, an estimate); ``token_limit``
    the most tokens the history holds before a token trigger fires (None: no token
    trigger). ``context_window``: the model's context window the report was analyzed
    with (None: none declared), and ``max_fraction`` the share of it above which the
    verdict adds a note. ``cache_extra_cost`` is what the next
    ``cache_turns`` turns cost more with the compaction than without it, in USD (negative:
    it saves).
    """

    status: str
    measured: bool
    tokens_before: int
    tokens_after: int
    target_tokens: int | None
    smallest_target: int | None
    messages_before: int
    messages_after: int
    groups: Mapping[str, int] | None
    facts_kept: int | None
    facts_total: int | None
    facts_counted: str = FACT_DEFINITION
    provider: str | None = None
    provider_errors: int | None = None
    provider_warnings: int | None = None
    history_errors: int | None = None
    turns_until_next_compaction: int | None = None
    horizon: int | None = None
    triggers: tuple[str, ...] = ()
    #: False when the report did not know the run's triggers (the next compaction was
    #: not checked, which is not "no trigger is set").
    triggers_checked: bool = True
    turn_tokens: int | None = None
    turns_measured: int | None = None
    growth_unit: str = "turn"
    growth_source: str | None = None
    #: The tokens of the largest turn (or step) ``turn_tokens`` is the median of.
    largest_turn_tokens: int | None = None
    token_limit: int | None = None
    cache_extra_cost: float | None = None
    cache_turns: int | None = None
    context_window: int | None = None
    max_fraction: float = DEFAULT_MAX_FRACTION

    @property
    def over_window(self) -> bool:
        """True when the report declared a context window and the compacted history is
        larger than it (the model would reject the request)."""
        return self.context_window is not None and self.tokens_after > self.context_window

    @property
    def fact_recall(self) -> float | None:
        """``facts_kept / facts_total``; None when no fact was counted."""
        if not self.facts_total or self.facts_kept is None:
            return None
        return self.facts_kept / self.facts_total

    @property
    def recall_text(self) -> str:
        """Fact recall as every surface words it: ``"56% (14 of 25 facts)"``, or
        ``"no facts"`` when none was counted, ``"not measured"`` without a report."""
        if self.facts_total is None:
            return "not measured"
        if not self.facts_total:
            return "no facts"
        kept = self.facts_kept or 0
        return f"{percent(kept, self.facts_total)} ({kept:,} of {self.facts_total:,} facts)"

    def to_dict(self) -> dict[str, Any]:
        recall = self.fact_recall
        return {
            "status": self.status,
            "measured": self.measured,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "target_tokens": self.target_tokens,
            "smallest_target": self.smallest_target,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "groups": dict(self.groups) if self.groups is not None else None,
            "facts_kept": self.facts_kept,
            "facts_total": self.facts_total,
            "fact_recall": round(recall, 6) if recall is not None else None,
            "facts_counted": self.facts_counted,
            "provider": self.provider,
            "provider_errors": self.provider_errors,
            "provider_warnings": self.provider_warnings,
            "history_errors": self.history_errors,
            "turns_until_next_compaction": self.turns_until_next_compaction,
            "horizon": self.horizon,
            "triggers": list(self.triggers),
            "triggers_checked": self.triggers_checked,
            "turn_tokens": self.turn_tokens,
            "turns_measured": self.turns_measured,
            "growth_unit": self.growth_unit,
            "growth_source": self.growth_source,
            "largest_turn_tokens": self.largest_turn_tokens,
            "token_limit": self.token_limit,
            "cache_extra_cost": (
                round(self.cache_extra_cost, 6) if self.cache_extra_cost is not None else None
            ),
            "cache_turns": self.cache_turns,
            # Only when the report declared a window: without one the numbers read as before.
            **(
                {"context_window": self.context_window, "max_fraction": self.max_fraction}
                if self.context_window is not None
                else {}
            ),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """What one run comes to: see the module docstring for the levels."""

    level: Level
    headline: str
    summary: str
    reasons: tuple[Reason, ...]
    numbers: VerdictNumbers
    next_step: str
    recall_floor: float = DEFAULT_RECALL_FLOOR
    #: True when :attr:`next_step` is the run's one next step, the one every surface
    #: gives: the run fits and is safe, it is ``compact()``'s or an agent's own, it fits
    #: but was not analyzed (the step is to analyze it), or
    #: :func:`~compactlens.analysis.advised` set it after the fix search. False for an
    #: engine run judged without the search, whose step may not be the one to take: the
    #: notebook cards then defer to ``debug()`` (:func:`card_step`).
    step_final: bool = field(default=False, compare=False)

    @property
    def next_step_parts(self) -> tuple[str, str]:
        """The next step as every surface shows it, (label, text): ``("Next step", what to
        do)``, or, when there is nothing to do, ``("Nothing to change", why)`` (prose,
        never "Next step: None")."""
        head, sep, rest = self.next_step.partition(": ")
        if sep and head in (NOTHING_TO_CHANGE, "Nothing to fix"):
            return head, rest
        return "Next step", self.next_step

    @property
    def step_cost(self) -> str | None:
        """The code of the cost the verdict's own next step is about (a run that fits
        with costs; None otherwise)."""
        if self.level != "costs":
            return None
        first = _first_cost(self.reasons)
        return first.code if first is not None else None

    @property
    def lowered_target(self) -> int | None:
        """The target the next step asks for when compaction would fire again on the next
        turn and a lower target can leave a typical turn of room under the token trigger
        (None otherwise)."""
        n = self.numbers
        if self.step_cost != "next-compaction" or n.token_limit is None or not n.turn_tokens:
            return None
        return n.token_limit - n.turn_tokens if n.turn_tokens < n.token_limit else None

    @property
    def next_step_line(self) -> str:
        """:attr:`next_step_parts` as one line: ``Next step: ...`` or ``Nothing to change:
        ...``."""
        label, text = self.next_step_parts
        return f"{label}: {text}"

    @property
    def costs(self) -> tuple[Reason, ...]:
        """The checks that did not pass (empty when the level is ``safe``)."""
        return tuple(r for r in self.reasons if r.level != "safe")

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "headline": self.headline,
            "summary": self.summary,
            "reasons": [r.to_dict() for r in self.reasons],
            "numbers": self.numbers.to_dict(),
            "next_step": self.next_step,
            "recall_floor": self.recall_floor,
        }

    def __repr__(self) -> str:
        return f"<Verdict {self.level}: {self.headline}; {self.summary}>"

    def _repr_html_(self) -> str:
        return card_html(verdict_card(self))


#: What a notebook card says for the next step of an engine run judged without the fix
#: search (:attr:`Verdict.step_final` False): the step to take is the one after it.
DEFERRED_STEP = NO_FIT_STEP


def card_step(v: Verdict) -> tuple[str, str]:
    """The next step a notebook card of ``v`` shows, (label, text): the verdict's own
    (:attr:`Verdict.next_step_parts`) when it is the run's one next step
    (:attr:`Verdict.step_final`), else :data:`DEFERRED_STEP`, never a second step that
    ``debug()`` for the same run contradicts."""
    if v.step_final:
        return v.next_step_parts
    return "Next step", DEFERRED_STEP


def verdict_card(v: Verdict) -> Card:
    """The notebook card of a verdict: headline, tokens against the target, group counts,
    one line per check and the next step (:func:`card_step`)."""
    n = v.numbers
    label, step = card_step(v)
    marks = {"safe": "ok", "costs": "cost", "no-fit": "does not fit"}
    return Card(
        title=f"Verdict: {v.headline}",
        status=n.status,
        status_color=LEVEL_COLORS[v.level],
        tokens_before=n.tokens_before,
        tokens_after=n.tokens_after,
        budget=n.target_tokens,
        counts=dict(n.groups) if n.groups is not None else {},
        facts=tuple((marks[r.level], r.text) for r in v.reasons),
        fix=step,
        fix_label=label,
        accent=LEVEL_COLORS[v.level],
    )


# -- the numbers ---------------------------------------------------------------------------


def group_counts(result: CompactionResult) -> Mapping[str, int]:
    """An engine run's groups by decision, as the verdict counts and names them
    (:data:`GROUP_LABELS`: ``kept`` is kept as it was; inserted summaries count apart)."""
    counts = dict.fromkeys(GROUP_LABELS.values(), 0)
    for d in result.decisions:
        counts[GROUP_LABELS[d.action]] += 1
    return MappingProxyType(counts)


def _run_numbers(result: CompactionResult | CompactResult | RecordedRun) -> dict[str, Any]:
    """What the result itself says: tokens, target, messages and groups."""
    if isinstance(result, RecordedRun):
        return {
            "status": result.status,
            "tokens_before": result.tokens_before,
            "tokens_after": result.tokens_after,
            "target_tokens": result.target_tokens,
            "smallest_target": None,
            "messages_before": result.messages_before,
            "messages_after": result.messages_after,
            "groups": None,
        }
    if isinstance(result, CompactionResult):
        ex = result.explanation
        return {
            "status": result.status,
            "tokens_before": result.tokens_before,
            "tokens_after": result.tokens_after,
            "target_tokens": ex.target_tokens,
            "smallest_target": ex.smallest_target,
            "messages_before": result.messages_before,
            "messages_after": result.messages_after,
            "groups": group_counts(result),
        }
    after = len(result.messages)
    before = after
    if result.replaced_range is not None and result.status == "compacted":
        start, end = result.replaced_range
        before = after - 1 - (result.reinserted_index is not None) + (end - start)
    # The one smallest target every surface names (the candidate plus the token a summary
    # needs when only the protected history is left), never the candidate's own tokens.
    smallest = result.smallest_target
    return {
        "status": result.status,
        "tokens_before": result.tokens.before,
        "tokens_after": result.tokens.after,
        "target_tokens": result.target_tokens,
        "smallest_target": smallest,
        "messages_before": before,
        "messages_after": after,
        "groups": None,
    }


def _for_provider(
    problems: Iterable[ProtocolProblem], provider: str | None
) -> list[ProtocolProblem]:
    """The problems a verdict counts for ``provider``: its own and those of any provider
    (tool-call pairing); every provider's when it is None."""
    if provider is None:
        return list(problems)
    return [p for p in problems if p.provider in ("any", provider)]


def _report_numbers(report: CompactionReport, provider: str | None) -> dict[str, Any]:
    """What the analysis measured: facts, introduced problems, the next compaction, cache."""
    if provider is not None and provider not in report.providers:
        raise ConfigError(
            f"the report did not check provider {provider!r} (it checked "
            f"{', '.join(report.providers) or 'none'}): analyze(..., providers=[{provider!r}])"
        )
    introduced = _for_provider(report.introduced, provider)
    cost = report.cache.cost
    growth = report.retrigger.growth
    return {
        "facts_kept": report.facts.survived,
        "facts_total": report.facts.extracted,
        "provider": provider,
        "provider_errors": sum(1 for p in introduced if p.severity == "error"),
        "provider_warnings": sum(1 for p in introduced if p.severity != "error"),
        "history_errors": len(history_errors(report, provider)),
        "turns_until_next_compaction": report.retrigger.turns_until_trigger,
        "horizon": report.retrigger.horizon,
        "triggers": report.retrigger.triggers,
        "triggers_checked": report.retrigger.checked,
        "turn_tokens": round(growth.tokens) if growth.source != "none" else None,
        "turns_measured": growth.turns_measured,
        "growth_unit": growth.unit,
        "growth_source": growth.source,
        "largest_turn_tokens": (
            round(growth.largest)
            if growth.largest is not None and growth.source in ("transcript", "steps")
            else None
        ),
        "token_limit": report.retrigger.token_limit,
        "cache_extra_cost": -cost.savings if cost is not None else None,
        "cache_turns": cost.further_turns if cost is not None else None,
        "context_window": report.retrigger.context_window or None,
        "max_fraction": report.retrigger.max_fraction,
    }


def _check_report(
    result: CompactionResult | CompactResult | RecordedRun, report: CompactionReport
) -> None:
    if isinstance(result, CompactResult):
        before, after = result.tokens.before, result.tokens.after
    else:
        before, after = result.tokens_before, result.tokens_after
    if (report.tokens_before, report.tokens_after, report.status) != (
        before,
        after,
        result.status,
    ):
        raise ConfigError(
            "the report measures another run: its tokens or status differ from the result's "
            "(analyze() the same result you pass to verdict())"
        )


# -- the words -----------------------------------------------------------------------------


def percent(part: int, whole: int) -> str:
    """``part / whole`` as a whole percentage that never rounds a loss away: ``over 99%``
    when something is missing, ``under 1%`` when something is there."""
    if whole <= 0:
        return "100%"
    share = 100 * part / whole
    if part < whole and round(share) >= 100:
        return "over 99%"
    if part > 0 and round(share) <= 0:
        return "under 1%"
    return f"{round(share)}%"


def _target_reason(n: VerdictNumbers) -> Reason:
    if n.status == "cannot-fit":
        best = n.smallest_target if n.smallest_target is not None else n.tokens_after
        target = (
            f"the target of {n.target_tokens:,}" if n.target_tokens is not None else "its target"
        )
        over = f" ({best - n.target_tokens:,} over)" if n.target_tokens is not None else ""
        return Reason(
            code="target",
            level="no-fit",
            text=f"The history does not fit: at best {best:,} tokens against {target}{over}.",
        )
    if n.status == "unchanged":
        text = f"No compaction was needed: no trigger fired at {n.tokens_before:,} tokens."
    elif n.target_tokens is None:
        text = f"Compacted from {n.tokens_before:,} to {n.tokens_after:,} tokens (no token target)."
    else:
        text = (
            f"The history fits: {n.tokens_after:,} tokens, at most the target of "
            f"{n.target_tokens:,}."
        )
    return Reason(code="target", level="safe", text=text)


def _window_reason(n: VerdictNumbers) -> Reason | None:
    """The compacted history against the declared context window (None when the report
    declared none): a cost over the window (the model rejects the request, whatever else
    passed); a note, not a cost, over ``max_fraction`` of it (the request is accepted;
    when compaction fires again is the next-compaction check's to judge); else passed."""
    window = n.context_window
    if window is None:
        return None
    used = percent(n.tokens_after, window)
    if n.over_window:
        return Reason(
            code="context-window",
            level="costs",
            text=(
                f"The compacted history ({n.tokens_after:,} tokens) is over the "
                f"{window:,}-token context window: the model would reject the request."
            ),
        )
    if n.tokens_after > n.max_fraction * window:
        return Reason(
            code="context-window",
            level="safe",
            text=(
                f"Note, not a cost: the compacted history uses {used} of the {window:,}-token "
                f"context window (more than {n.max_fraction:.0%}), so "
                f"{window - n.tokens_after:,} tokens are left for the reply and the next turns."
            ),
        )
    return Reason(
        code="context-window",
        level="safe",
        text=f"The compacted history uses {used} of the {window:,}-token context window.",
    )


def _window_step(n: VerdictNumbers) -> str:
    """What helps a run whose compacted history is over the declared context window: a
    target (and a trigger) under the window, never a larger one."""
    window = n.context_window or 0
    room = f" with room for a typical {_typical_unit(n)}" if n.turn_tokens else ""
    lower = max(1, window - n.turn_tokens) if n.turn_tokens and n.turn_tokens < window else window
    return (
        f"Lower the target to at most {lower:,} tokens (every stage's) and the trigger to at "
        f"most {window:,}{room}: the compacted history ({n.tokens_after:,} tokens) is over "
        f"the {window:,}-token context window, so the model would reject the request."
    )


def _window_no_fit_step(n: VerdictNumbers, smallest: int, fixes: FixSearch | None) -> str:
    """The step of a run that does not fit when not even the smallest history the current
    parameters reach fits the declared context window: no larger target can help."""
    window = n.context_window or 0
    why = f" ({fixes.none_reason})" if fixes is not None and fixes.none_reason else ""
    return (
        f"Nothing fits the {window:,}-token context window: at best the history is "
        f"{smallest:,} tokens{why}. Use a model with a larger context window, or cut what "
        "the guards keep (the latest tool exchange, the newest turns): raising the target "
        "cannot help."
    )


def _provider_who(n: VerdictNumbers, providers: tuple[str, ...]) -> str:
    names = [provider_words(p) for p in ((n.provider,) if n.provider else providers)]
    return " or ".join(names) if names else "the provider"


def _introduced(
    n: VerdictNumbers, report: CompactionReport, *, errors: bool
) -> list[ProtocolProblem]:
    """The problems the compaction introduced, errors or the rest, for the chosen provider
    (and those of any provider) or, with none chosen, for every provider checked."""
    return [
        p for p in _for_provider(report.introduced, n.provider) if (p.severity == "error") == errors
    ]


def _provider_reason(n: VerdictNumbers, report: CompactionReport) -> Reason:
    who = _provider_who(n, report.providers)
    errors = n.provider_errors or 0
    if errors:
        found = _introduced(n, report, errors=True)
        first = f" ({found[0].detail})" if found and found[0].detail else ""
        text = (
            f"The compaction introduces {plural(errors, 'error')} that {who} would reject{first}."
        )
        return Reason(code="provider-errors", level="costs", text=text)
    return Reason(code="provider-errors", level="safe", text=f"No new error for {who}.")


#: Problems of a log's last message that only say its tool call is still running: the
#: result comes before the agent's next model call, so the request is not rejected.
PENDING_KINDS = frozenset({"unresolved_call", "tool_result_not_next"})


def history_errors(report: CompactionReport, provider: str | None) -> list[ProtocolProblem]:
    """The errors the compacted request sends that the history already had (not
    introduced by the compaction), for ``provider`` (None: every provider checked): the
    API rejects the request as it is. A tool call still running in the last message (its
    result comes before the next model call) is not one."""
    introduced = set(report.introduced)
    last = report.messages_after - 1
    return [
        p
        for p in _for_provider(report.problems, provider)
        if p.severity == "error"
        and p not in introduced
        and not (p.kind in PENDING_KINDS and p.message_index == last)
    ]


def _history_reason(n: VerdictNumbers, report: CompactionReport) -> Reason | None:
    """Errors the history already had: not the compaction's doing, but the request is
    rejected as it is, so the run is never safe (None: there are none)."""
    found = history_errors(report, n.provider)
    if not found:
        return None
    who = _provider_who(n, report.providers)
    # Short enough for a card's line (CARD_TEXT_LIMIT): the first one named, by kind.
    one = found[0]
    first = "" if len(found) == 1 else "the first, "
    it = "it" if len(found) == 1 else "them"
    text = (
        f"The history already holds {plural(len(found), 'error')} that {who} would reject "
        f"({first}at message {one.message_index:,}: {pairing_words(one.kind)}). The "
        f"compaction did not introduce {it}, but the request is rejected as it is."
    )
    return Reason(code="history-errors", level="costs", text=text)


def _warning_reason(n: VerdictNumbers, report: CompactionReport) -> Reason:
    """The warnings the compaction introduced: a cost when one changes the request (a
    system message moved to the top, its place lost); a note, not a cost, when every one
    is harmless (:data:`~compactlens.engine.providers.HARMLESS_KINDS`: the provider joins
    consecutive turns of one role, nothing dropped or changed)."""
    who = _provider_who(n, report.providers)
    warnings = n.provider_warnings or 0
    if not warnings:
        return Reason(code="provider-warnings", level="safe", text=f"No new warning for {who}.")
    found = _introduced(n, report, errors=False)
    changing = [p for p in found if not p.harmless]
    if changing:
        named = sorted({provider_words(p.provider) for p in changing}) or [who]
        at = changing[0].message_index
        joined = len(found) - len(changing)
        also = (
            f"; {joined:,} more only join consecutive turns, which loses nothing" if joined else ""
        )
        changes = "changes" if len(changing) == 1 else "change"
        text = (
            f"The compaction introduces {plural(len(changing), 'warning')} that {changes} "
            f"the request: {' and '.join(named)} would move a system message to the top, "
            f"where its place is lost (message {at:,}){also}."
        )
        return Reason(code="provider-warnings", level="costs", text=text)
    named = sorted({provider_words(p.provider) for p in found}) or [who]
    text = (
        f"Note, not a cost: {plural(warnings, 'warning')} for {' and '.join(named)}, which "
        "joins consecutive turns of one role into one turn on its own; nothing is dropped "
        "or changed."
    )
    return Reason(code="provider-warnings", level="safe", text=text)


def _cache_reason(n: VerdictNumbers) -> Reason | None:
    """The prompt cache's side of the run (None when the report priced nothing)."""
    extra, turns = n.cache_extra_cost, n.cache_turns
    if extra is None or turns is None or n.status != "compacted":
        return None
    ahead = f"the next {plural(turns, n.growth_unit)}"
    again = n.turns_until_next_compaction
    # The estimate prices one compaction: say so when another falls within the turns priced.
    assumes = (
        " (an estimate that assumes no further compaction, but it fires again within them)"
        if again is not None and again < turns
        else ""
    )
    if extra > 0:
        text = (
            f"With the prompt cache rewritten, {ahead} cost {money(extra)} more than without "
            f"compacting{assumes}."
            if extra >= 0.005
            else f"With the prompt cache rewritten, {ahead} cost more than without compacting "
            f"(under one cent){assumes}."
        )
        return Reason(code="cache", level="costs", text=text)
    saved = -extra
    text = (
        f"The compaction saves {money(saved)} over {ahead}, the prompt cache rewrite "
        f"included{assumes}."
        if saved >= 0.005
        else f"The compaction costs no more over {ahead}, the prompt cache rewrite "
        f"included{assumes}."
    )
    return Reason(code="cache", level="safe", text=text)


def _request_reason(report: CompactionReport) -> Reason:
    """Whether the latest user request survives; not measured (so never ``safe``) for a
    history with no user request with text, which leaves nothing to keep."""
    if not any(c.fact.kind == "latest_request" for c in report.facts.checks):
        return Reason(
            code="no-request",
            level="costs",
            text=(
                "The latest user request is not checked: the history has no user request "
                "with text, so nothing shows the agent still knows what it was asked."
            ),
        )
    if report.facts.latest_request_lost:
        return Reason(
            code="latest-request",
            level="costs",
            text="The latest user request does not survive word for word.",
        )
    return Reason(code="latest-request", level="safe", text="The latest user request is kept.")


def _system_reason(report: CompactionReport) -> Reason:
    """Whether the system prompt (the agent's instructions) survives, beside the latest
    request: a compaction that drops it fits, but never safely."""
    lost = report.system_lost
    if lost:
        which = "The system prompt is" if lost == 1 else f"{lost:,} system messages are"
        text = (
            f"{which} dropped: the agent loses the instructions it was given (they do not "
            "survive word for word)."
        )
        return Reason(code="system-prompt", level="costs", text=text)
    return Reason(code="system-prompt", level="safe", text="No system message is lost.")


def _next_compaction_reason(n: VerdictNumbers) -> Reason:
    """When compaction fires again: a cost only for a run that compacted and leaves less
    room under its trigger than one typical turn (see the module docstring)."""
    turns, code = n.turns_until_next_compaction, "next-compaction"
    unit = n.growth_unit
    typical = _pace(n) if n.turn_tokens else ""
    if not n.triggers_checked:
        text = (
            "When compaction fires again is not checked: no trigger was given and the "
            "run's own are not known."
        )
        return Reason(code="no-trigger", level="costs", text=text)
    if not n.triggers:
        text = "No trigger is set for the next turns, so nothing makes compaction fire again."
        return Reason(code=code, level="safe", text=text)
    if n.status == "unchanged":
        if turns is None:
            text = f"No compaction is due within {n.horizon or 0:,} turns."
        elif n.turn_tokens is None:
            text = "No compaction is due yet."
        else:
            when = f"on the next {unit}" if turns <= 1 else f"in about {plural(turns, unit)}"
            text = f"No compaction is due yet; at this pace ({typical}) the first is {when}."
        return Reason(code=code, level="safe", text=text)
    if turns == 0:
        text = "The compacted history already reaches a trigger: compaction fires again at once."
        return Reason(code=code, level="costs", text=text)
    if n.turn_tokens is None:
        text = (
            "The next compaction is not estimated: the transcript has no user turn or agent "
            "step to measure what one adds."
        )
        return Reason(code=code, level="safe", text=text)
    if turns == 1:
        room = (
            f": the compacted history leaves {n.token_limit - n.tokens_after:,} tokens under "
            f"the trigger and {typical}"
            if n.token_limit is not None and n.token_limit >= n.tokens_after
            else f" ({typical})"
        )
        return Reason(
            code=code, level="costs", text=f"Compaction fires again on the very next {unit}{room}."
        )
    if turns is None:
        text = f"No compaction is due within {plural(n.horizon or 0, unit)}."
    else:
        text = f"The next compaction is {plural(turns, unit)} away ({typical})."
    return Reason(code=code, level="safe", text=text)


def _first_compaction_due(n: VerdictNumbers) -> str:
    """When a run that needed no compaction will first need one, as a clause for its next
    step ("", when no trigger is set or none is due within the horizon): a green "nothing
    to change" must not read against a re-trigger count of 1."""
    turns = n.turns_until_next_compaction
    if not n.triggers or turns is None:
        return ""
    unit = n.growth_unit
    when = f"on the next {unit}" if turns <= 1 else f"in about {plural(turns, unit)}"
    above = f" (the trigger fires above {n.token_limit:,} tokens)" if n.token_limit else ""
    return f"; the first compaction is due {when}{above}"


def _next_compaction_step(n: VerdictNumbers) -> str:
    """What helps a run that would compact again at once or on the next turn: a target
    that leaves a typical turn of room under the token trigger or a trigger a typical turn
    above the result (the debugger's fix search re-runs both), or, when one typical turn
    is larger than the trigger allows, a larger trigger (a lower target cannot help)."""
    limit, turn = n.token_limit, n.turn_tokens
    if limit is None or turn is None:
        return _FIXES["next-compaction"]
    unit = n.growth_unit
    window = n.context_window
    if turn < limit and window is not None and n.tokens_after + turn > window:
        # A larger trigger would let the history grow past the declared window.
        return (
            f"Lower the target to at most {limit - turn:,} tokens (every stage's): it fires "
            f"above {limit:,} and {_pace(n, tokens=False)}, so that leaves room for the next "
            f"{unit}; a larger trigger would pass the {window:,}-token context window."
        )
    if turn < limit:
        # Both changes, as the fix search re-runs them: in a pipeline whose later stages
        # fire only above the trigger, a lower target alone may not be reachable.
        return (
            f"Lower the target to at most {limit - turn:,} tokens (every stage's) or raise "
            f"the trigger to at least {n.tokens_after + turn:,}: it fires above {limit:,} "
            f"and {_pace(n, tokens=False)}, so either leaves room for the next {unit}."
        )
    return (
        f"Raise the trigger above {turn:,} tokens (a larger context budget): {_pace(n)}, "
        f"more than the trigger's {limit:,} allow, so "
        f"compaction fires on every {unit} whatever the target and compacting further cannot "
        "help."
    )


def _pace(n: VerdictNumbers, *, tokens: bool = True) -> str:
    """What one turn adds, in words: "a typical turn adds about 3,050 tokens"; for a log
    with only one or two steps, labelled as the estimate it is ("an agent step adds up to
    about 900 tokens (estimated from the larger of the log's only 2 steps)")."""
    size = f"{n.turn_tokens or 0:,}" + (" tokens" if tokens else "")
    if n.growth_source == "few":
        only = (
            "the log's only step"
            if n.turns_measured == 1
            else f"the larger of the log's only {n.turns_measured or 0} steps"
        )
        return f"an agent step adds up to about {size} (estimated from {only})"
    return f"a typical {_typical_unit(n)} adds about {size}{_hidden_turn(n)}"


#: A turn this many times the median is one the median hides (it is said).
HIDDEN_TURN_FACTOR = 5


def _hidden_turn(n: VerdictNumbers) -> str:
    """A clause for a median that hides a much larger turn ("" otherwise): "; the median
    of the 3 turns measured hides one that added 89,087 tokens", and whether a turn like
    it would fire compaction again."""
    largest, typical = n.largest_turn_tokens, n.turn_tokens
    if not largest or not typical or largest < HIDDEN_TURN_FACTOR * typical:
        return ""
    unit = _typical_unit(n)
    count = plural(n.turns_measured or 0, unit)
    room = n.token_limit - n.tokens_after if n.token_limit is not None else None
    later = (n.turns_until_next_compaction or 0) > 1  # (else it fires next turn anyway)
    fires = (
        f", and a {unit} like it would fire compaction again"
        if later and room is not None and largest > room
        else ""
    )
    return f"; the median of the {count} measured hides one that added {largest:,} tokens{fires}"


def _typical_unit(n: VerdictNumbers) -> str:
    """What ``turn_tokens`` measures, in words: a user turn, or an agent step (one model
    call: a tool call with its results, or a reply)."""
    return "agent step" if n.growth_unit == "step" else "turn"


#: The stages whose "newest ... kept" parameters keep recent groups word for word.
_KEEPS_RECENT = frozenset(
    {
        "truncation",
        "sliding_window",
        "summarization",
        "tool_result_collapse",
        "selective_tool_calls",
    }
)


def _controls(result: CompactionResult | CompactResult | RecordedRun) -> tuple[str, ...]:
    """The stages the run's configuration has, by the names its events carry (``compact``
    for ``compact()``, which has no stages; none for a recorded run): the next step names
    only controls the configuration has."""
    if isinstance(result, CompactResult):
        return ("compact",)
    if isinstance(result, RecordedRun):
        return ()
    return tuple(dict.fromkeys(e.strategy for e in result.events))


def _recall_step(n: VerdictNumbers, controls: tuple[str, ...] = ()) -> str:
    """What helps a run that loses too many facts: when it uses less than
    :data:`ROOM_SHARE` of its target, the room (raising the target cannot help a run that
    does not fill it), by the controls its configuration has (``controls``,
    :func:`_controls`); else a larger target, or collapsing tool results first when no
    stage collapses them yet."""
    target = n.target_tokens
    if "compact" in controls:
        loosen = "keep more of the newest messages verbatim (a larger “newest messages kept”)"
    else:
        ways = [
            *(["more recent groups kept verbatim"] if _KEEPS_RECENT & set(controls) else []),
            *(["a larger clamp cut"] if "clamp" in controls else []),
        ]
        loosen = f"let its stages cut less ({', '.join(ways)})" if ways else "let it cut less"
    if target is None or n.tokens_after >= ROOM_SHARE * target:
        if "compact" in controls or "tool_result_collapse" in controls:
            return (
                "Keep more of the history word for word: raise the target (the fix search "
                "finds the target at which enough facts are kept)."
            )
        return _FIXES["fact-recall"]
    searched = "" if "compact" in controls else "; the fix search tries such changes"
    return (
        f"Keep more of the history word for word: the run uses {percent(n.tokens_after, target)} "
        f"of its target ({target - n.tokens_after:,} tokens of room), so {loosen} until it "
        f"nears the target{searched}."
    )


def _recall_reason(n: VerdictNumbers, floor: float, scope: str) -> Reason:
    kept, total = n.facts_kept or 0, n.facts_total or 0
    if not total:
        return Reason(
            code="fact-recall",
            level="safe",
            text="The conversation holds no fact to check.",
        )
    share = percent(kept, total)
    counted = f"{kept:,} of {scope}'s {total:,} facts kept"
    if kept / total < floor:
        text = f"Fact recall is {share}, under the floor of {floor:.0%}: {counted}."
        return Reason(code="fact-recall", level="costs", text=text)
    return Reason(code="fact-recall", level="safe", text=f"Fact recall is {share}: {counted}.")


def _reasons(
    n: VerdictNumbers, report: CompactionReport | None, floor: float, scope: str
) -> tuple[Reason, ...]:
    target = _target_reason(n)
    if report is None:
        missing = Reason(
            code="not-measured",
            level="costs",
            text=(
                "Not checked yet: whether a provider would reject or change the request, "
                "whether the latest request and the system prompt survive, when compaction "
                "fires again and how many facts are kept (the run was not analyzed)."
            ),
        )
        return (target, missing)
    cache = _cache_reason(n)
    window = _window_reason(n)
    before = _history_reason(n, report)
    return (
        target,
        *((window,) if window is not None else ()),
        _provider_reason(n, report),
        *((before,) if before is not None else ()),
        _warning_reason(n, report),
        _request_reason(report),
        _system_reason(report),
        _next_compaction_reason(n),
        _recall_reason(n, floor, scope),
        *((cache,) if cache is not None else ()),
    )


def _summary(n: VerdictNumbers) -> str:
    tokens = f"{n.tokens_before:,} to {n.tokens_after:,} tokens"
    if n.status == "unchanged" or (n.status == "cannot-fit" and n.tokens_after == n.tokens_before):
        # Nothing was compacted (compact() leaves a history that cannot fit as it is).
        tokens = f"{n.tokens_before:,} tokens, left as they are"
    if n.status != "unchanged" and n.target_tokens is not None:
        tokens += f" (target {n.target_tokens:,})"
    bits = [tokens]
    if n.groups is not None:
        g = n.groups
        kept = f"{plural(g['kept'], 'group')} kept"
        if g["inserted"]:
            kept += f" (+{g['inserted']:,} inserted)"
        changed = [f"{g[k]:,} {k}" for k in ("dropped", "collapsed", "summarized") if g[k]]
        bits.append(", ".join([kept, *changed]))
    if n.facts_total:
        bits.append(
            f"{percent(n.facts_kept or 0, n.facts_total)} fact recall "
            f"({n.facts_kept or 0:,} of {n.facts_total:,})"
        )
    return "; ".join(bits)


def _first_cost(reasons: Iterable[Reason]) -> Reason | None:
    """The failed check a next step is about: the first by :data:`COST_ORDER`; nothing
    removes the provider's warnings, so another cost, when there is one, is the step that
    helps (None when every check passed)."""
    failed = [r for r in reasons if r.level != "safe"]
    actionable = [r for r in failed if r.code != "provider-warnings"] or failed
    return min(
        actionable,
        key=lambda r: COST_ORDER.index(r.code) if r.code in COST_ORDER else len(COST_ORDER),
        default=None,
    )


def first_cost(v: Verdict) -> Reason | None:
    """The cost the next step of ``v`` is about (:func:`_first_cost`; None when every
    check passed)."""
    return _first_cost(v.reasons)


def _next_step(
    level: Level,
    reasons: tuple[Reason, ...],
    n: VerdictNumbers,
    fixes: FixSearch | None,
    recorded: bool = False,
    controls: tuple[str, ...] = (),
    raise_to: int | None = None,
) -> str:
    """The verdict's own next step. ``raise_to``: the smallest target the run's parameters
    fit when it differs from the tokens the run reached (``compact()``'s candidate with an
    empty summary needs one more token for any summary text)."""
    if recorded and level != "safe":
        # An agent's own compaction cannot be rerun here: what can be changed is ours.
        room = f" at {n.target_tokens:,} tokens" if n.target_tokens is not None else ""
        return (
            "This compaction was the agent's own, so nothing here can rerun it: try a "
            f"configuration{room} in the Lab that avoids these costs."
        )
    if level == "safe":
        if n.status == "unchanged":
            return (
                f"{NOTHING_TO_CHANGE}: no compaction is needed yet and every check "
                f"passed{_first_compaction_due(n)}."
            )
        return f"{NOTHING_TO_CHANGE}: the run fits and every check passed."
    if level == "costs":
        first = _first_cost(reasons)
        if first is None:
            return _FIXES["not-measured"]
        if first.code == "context-window":
            return _window_step(n)
        if first.code == "next-compaction":
            return _next_compaction_step(n)
        if first.code == "fact-recall":
            return _recall_step(n, controls)
        return _FIXES.get(first.code, "Look at the costs above.")
    # The first fix that is not destructive, by the rule every surface uses (a search
    # with destructive fixes included lists them last).
    listed = fixes.fixes if fixes is not None else ()
    best = next((f for f in listed if not destructive(f)), None)
    if best is not None:
        # The fix in plain words, with its own verdict's numbers when it was judged (the
        # search's recall counts another set of facts than this verdict does).
        if best.verdict is not None:
            return apply_step(best.plain_summary, best.verdict)
        return f"Apply: {best.plain_summary} ({best.tokens_after:,} tokens)."
    smallest = n.smallest_target if n.smallest_target is not None else n.tokens_after
    if raise_to is not None:
        smallest = raise_to
    if n.context_window is not None and smallest > n.context_window:
        return _window_no_fit_step(n, smallest, fixes)
    pointer = f"Raise the target to at least {smallest:,} tokens"
    if fixes is not None and fixes.none_reason:
        return f"{pointer}: no single change fits ({fixes.none_reason})."
    return f"{pointer}, or search for a change that keeps the target (the fix search)."


def apply_step(words: str, judged: Verdict | None) -> str:
    """The next step that applies one fix (``words``: its changes in plain words;
    ``judged``: the verdict of the run it gives): "Apply: <words> (<what it gives>)."; a
    fix whose run fits with costs says so first, with its costs (:func:`cost_words`), so
    a card that shortens the sentence still shows them: "Apply, at a cost (50% fact
    recall, 10 of 20 facts): <words> (<what it gives>).", the same words on every
    surface."""
    if judged is None:
        return f"Apply: {words}."
    gives = with_result(words, judged)
    if judged.level != "costs":
        return f"Apply: {gives}."
    return f"Apply, at a cost ({cost_words(judged)}): {gives}."


def cost_words(judged: Verdict) -> str:
    """The checks the verdict ``judged`` fails, each in a few words, the worst first (by
    :data:`COST_ORDER`): "50% fact recall, 10 of 20
    facts; the system prompt dropped"."""

    def rank(code: str) -> int:
        return COST_ORDER.index(code) if code in COST_ORDER else len(COST_ORDER)

    costs = sorted(judged.costs, key=lambda r: rank(r.code))
    return "; ".join(_cost_phrase(r.code, r.text, judged) for r in costs)


def _cost_phrase(code: str, text: str, judged: Verdict) -> str:
    """One failed check in a few words (its sentence when there are none for it)."""
    n = judged.numbers
    if code == "fact-recall" and n.facts_kept is not None and n.facts_total:
        # The verdict's own rounding (never "0%" for facts that are there).
        share = percent(n.facts_kept, n.facts_total)
        return f"{share} fact recall, {n.facts_kept} of {n.facts_total} facts"
    if code == "next-compaction" and n.turns_until_next_compaction is not None:
        turns = n.turns_until_next_compaction
        if turns == 0:
            return "compaction fires again at once"
        return f"the next compaction in {plural(turns, n.growth_unit)}"
    short = {
        "latest-request": "the latest request dropped",
        "system-prompt": "the system prompt dropped",
        "provider-errors": "new provider errors",
        "history-errors": "errors already in the history",
        "provider-warnings": "new provider warnings",
        "cache": "the prompt cache rewritten",
    }
    return short.get(code, text.rstrip("."))


def with_result(words: str, judged: Verdict) -> str:
    """A fix's words with what its run gives: "<words> (<summary>)", or, when the words
    already end in parentheses (a larger target that leaves the history whole says what
    that means), "<words>. Result: <summary>"."""
    if words.endswith(")"):
        return f"{words}. Result: {judged.summary}"
    return f"{words} ({judged.summary})"


# -- the verdict ---------------------------------------------------------------------------


def verdict(
    result: CompactionResult | CompactResult | RecordedRun | CompactionSession,
    report: CompactionReport | None = None,
    *,
    provider: str | None = None,
    recall_floor: float = DEFAULT_RECALL_FLOOR,
    fixes: FixSearch | None = None,
    facts_counted: str = FACT_DEFINITION,
    facts_from: str = "the conversation",
    groups: Mapping[str, int] | None = None,
) -> Verdict:
    """The verdict of one run (see the module docstring for the levels).

    ``result``: the engine's result (``apply_compaction``, ``run_strategy``) or
    ``compact()``'s, or a :class:`~compactlens.session.CompactionSession`, judged by its
    latest compaction (``session.last_result``: analyze that one). ``report``:
    :func:`analyze` of the same result (without it the checks it answers are not measured
    and the level is never ``safe``). ``provider``:
    count only the problems this provider (and tool-call pairing) would raise; default,
    every provider the report checked. ``recall_floor``: the lowest fact recall that is
    still ``safe`` (0 to 1). ``fixes``: a :func:`search_fixes` result, whose best fix
    becomes the next step of a run that does not fit. ``facts_counted``: what the
    report's facts are, in one line, when the caller counted another set than
    :func:`analyze` does (the post-mortem: every fact of the replaced history), and
    ``facts_from`` where they come from, as the recall sentence names it. ``groups``: the
    run's groups by decision (:func:`group_counts` keys) when the result does not count
    them itself: ``compact()`` works on messages, so a caller that planned the same run
    on a message index (the inspector) passes its counts and the headline reads them.
    """
    if isinstance(result, CompactionSession):
        step = result.last_result
        if step is None:
            raise UsageError(
                "verdict(session): the session has not compacted yet (no trigger fired in "
                "any prepare() call), so there is no step to judge"
            )
        result = step
    if not isinstance(result, CompactionResult | CompactResult | RecordedRun):
        raise InputTypeError(
            "verdict() takes a CompactionResult, a CompactResult, a RecordedRun or a "
            "CompactionSession, "
            f"got {type(result).__name__}"
        )
    if report is not None and not isinstance(report, CompactionReport):
        raise InputTypeError(f"report must be a CompactionReport, got {type(report).__name__}")
    if fixes is not None and not isinstance(fixes, FixSearch):
        raise InputTypeError(f"fixes must be a FixSearch, got {type(fixes).__name__}")
    if isinstance(recall_floor, bool) or not 0 <= recall_floor <= 1:
        raise ConfigError(f"recall_floor must be a number from 0 to 1, got {recall_floor!r}")
    values = _run_numbers(result)
    if values["groups"] is None and groups is not None:
        missing = set(GROUP_LABELS.values()) - set(groups)
        if missing:
            raise ConfigError(f"groups must count every decision; missing {sorted(missing)}")
        values["groups"] = MappingProxyType({k: int(groups[k]) for k in GROUP_LABELS.values()})
    if report is not None:
        _check_report(result, report)
        values.update(_report_numbers(report, provider))
    else:
        values.update(facts_kept=None, facts_total=None, provider=provider)
    numbers = VerdictNumbers(measured=report is not None, facts_counted=facts_counted, **values)
    reasons = _reasons(numbers, report, recall_floor, facts_from)
    level: Level = (
        "no-fit"
        if numbers.status == "cannot-fit"
        else ("costs" if any(r.level != "safe" for r in reasons) else "safe")
    )
    return Verdict(
        level=level,
        headline=HEADLINES[level],
        summary=_summary(numbers),
        reasons=reasons,
        numbers=numbers,
        next_step=_next_step(
            level,
            reasons,
            numbers,
            fixes,
            recorded=isinstance(result, RecordedRun),
            controls=_controls(result),
            raise_to=result.smallest_target if isinstance(result, CompactResult) else None,
        ),
        recall_floor=recall_floor,
        step_final=(
            level == "safe"
            or (report is None and level == "costs")  # the step: analyze the run
            or isinstance(result, CompactResult | RecordedRun)
        ),
    )


__all__ = [
    "COST_ORDER",
    "DEFAULT_RECALL_FLOOR",
    "DEFERRED_STEP",
    "FACT_DEFINITION",
    "GROUP_LABELS",
    "HEADLINES",
    "LEVEL_COLORS",
    "NOTHING_TO_CHANGE",
    "Level",
    "Reason",
    "RecordedRun",
    "Verdict",
    "VerdictNumbers",
    "card_step",
    "first_cost",
    "group_counts",
    "percent",
    "verdict",
    "verdict_card",
]
