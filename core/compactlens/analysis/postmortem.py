"""Post-mortem of the compactions an agent already did.

For each :class:`~compactlens.model.RecordedCompaction` of a transcript whose replaced
history can be recovered: the history before it, the agent's own summary, the fact
survival of what the agent continued with (summary, plus any replacement history)
against that history, and what compactlens would have kept from the same history,
for one or more strategies, with the same fact check and its tokens; and each side's
:class:`~compactlens.analysis.Verdict` (the value every other surface shows), judged
at the agent's size: the target is the tokens the agent kept, the trigger the size of
the history it replaced, and the facts those of the whole replaced history (so the
agent's and compactlens's recall share one denominator).

Every side is measured the same way: the facts of the whole replaced history (as
:func:`compactlens.analysis.fact_survival` extracts them, once per compaction), looked
up verbatim in what the model sees after the compaction. A strategy is given as a
function of a token budget; the budget of a compaction is what the agent continued
with, counted by our tokenizer (so compactlens is asked to fit the same room), unless
the strategy ignores it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from compactlens.analysis.facts import (
    Fact,
    FactReport,
    check_facts,
    conversation_facts,
)
from compactlens.analysis.report import AnalysisOverview, CompactionReport, analyze_overview
from compactlens.analysis.verdict import RecordedRun, Verdict, verdict
from compactlens.engine.index import MessageIndex
from compactlens.engine.result import CompactionResult, TokenCounts
from compactlens.engine.run import run_strategy
from compactlens.engine.strategies.base import Strategy
from compactlens.engine.strategies.config import strategy_from_config
from compactlens.engine.strategies.sizing import sized_config
from compactlens.engine.triggers import Trigger, tokens_exceed
from compactlens.model.messages import Message, TextPart
from compactlens.model.recorded import RecordedCompaction
from compactlens.model.tokens import CharEstimator, Tokenizer, count_messages
from compactlens.summarizers.base import Summarizer
from compactlens.summarizers.extractive import ExtractiveSummarizer
from compactlens.transcript import Transcript

#: A strategy to compare with, as a function of the token budget of one compaction.
StrategyFactory = Callable[[int], Strategy]

REFERENCE_LABEL = "reference pipeline"
#: How many lost facts each outcome lists (the counts are always complete).
MAX_LOST = 20
#: What a post-mortem verdict's fact recall counts (both sides count the same facts).
POSTMORTEM_FACTS = (
    "Facts are the identifiers, paths, numbers, names and other exact values of the whole "
    "history the agent's compaction replaced (the same facts for every side); a fact counts "
    "as kept when it still appears word for word in what the model saw afterwards. "
    "Timestamps, hashes and redaction placeholders are not counted."
)


def reference_config(budget: int) -> dict[str, Any]:
    """The reference pipeline sized to ``budget`` tokens, as a strategy config.

    Tool-result collapse, summarization (offline, extractive), sliding window and
    truncation, each compacting when the history is over ``budget`` tokens: the same
    stages as the inspector's "reference" preset.
    """
    trigger = {"op": "exceed", "metric": "tokens", "n": max(1, int(budget))}
    return {
        "type": "pipeline",
        "strategies": [
            {"type": "tool_result_collapse", "trigger": trigger},
            {"type": "summarization", "trigger": trigger},
            {"type": "sliding_window", "trigger": trigger, "minimum_preserved": 1},
            {"type": "truncation", "trigger": trigger, "minimum_preserved": 2},
        ],
    }


def reference_pipeline(budget: int) -> Strategy:
    """The reference pipeline at ``budget`` tokens, with the offline extractive summarizer."""
    return strategy_from_config(reference_config(budget), summarizer=ExtractiveSummarizer())


def sized_factory(
    config: Mapping[str, Any], *, summarizer: Summarizer | None = None
) -> StrategyFactory:
    """A strategy configuration as a post-mortem strategy: at each compaction it is sized
    to the agent's budget (:func:`~compactlens.engine.strategies.sizing.sized_config`:
    every token threshold scaled so its first ``tokens > n`` trigger is the budget), so
    it is compared with the agent at equal size, as the inspector's lab configuration
    is. Summarization stages use ``summarizer`` (default: the offline extractive one)."""
    chosen = summarizer if summarizer is not None else ExtractiveSummarizer()

    def build(budget: int) -> Strategy:
        return strategy_from_config(sized_config(config, budget), summarizer=chosen)

    return build


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What one side kept from the replaced history, and how many of its facts survive."""

    label: str
    status: str
    """``compacted``, ``unchanged`` or ``cannot-fit`` for a strategy; ``recorded`` for
    the agent; ``unreadable`` when the agent's summary is encrypted."""
    tokens_after: int
    messages_after: int
    extracted: int
    survived: int
    lost: tuple[str, ...] = ()
    latest_request_lost: bool = False
    kept: tuple[Message, ...] = field(default=(), repr=False, compare=False)
    verdict: Verdict | None = field(default=None, repr=False, compare=False)
    """The side's verdict at the agent's size (None when the agent's summary is
    unreadable: there is nothing to judge)."""

    @property
    def recall(self) -> float | None:
        """``survived / extracted`` (1.0 with no facts); ``None`` when unreadable."""
        if self.status == "unreadable":
            return None
        return self.survived / self.extracted if self.extracted else 1.0

    def to_dict(self) -> dict[str, Any]:
        recall = self.recall
        return {
            "label": self.label,
            "status": self.status,
            "tokens_after": self.tokens_after,
            "messages_after": self.messages_after,
            "extracted": self.extracted,
            "survived": self.survived,
            "recall": None if recall is None else round(recall, 6),
            "latest_request_lost": self.latest_request_lost,
            "lost": list(self.lost),
            "verdict": self.verdict.to_dict() if self.verdict is not None else None,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionPostmortem:
    """One recorded compaction, measured."""

    number: int
    """1-based, in the order of the transcript."""
    recorded: RecordedCompaction = field(repr=False)
    history: tuple[Message, ...] = field(repr=False, compare=False)
    history_tokens: int
    budget: int
    """Tokens the agent continued with (our count): the room strategies are sized to."""
    agent: Outcome | None
    """``None`` when the replaced history is not in the file (nothing to measure)."""
    strategies: tuple[Outcome, ...] = ()

    @property
    def measured(self) -> bool:
        return self.agent is not None

    def at_equal_size(self, outcome: Outcome) -> bool:
        """Whether ``outcome`` fits the room the agent kept (``budget`` tokens), so its
        recall compares with the agent's at equal size; False when the strategy could
        not compact the history that far (``cannot-fit``, or more tokens than the agent)."""
        return outcome.status != "cannot-fit" and outcome.tokens_after <= max(1, self.budget)

    def size_note(self, outcome: Outcome) -> str:
        """Why ``outcome`` does not compare with the agent at equal size ("" when it does)."""
        if self.at_equal_size(outcome):
            return ""
        return (
            f"Not at equal size: the agent kept {self.budget:,} tokens, and this strategy could "
            f"not compact the history that far (its best is {outcome.tokens_after:,} tokens), "
            "so its recall is not comparable with the agent's."
        )

    def to_dict(self) -> dict[str, Any]:
        r = self.recorded
        return {
            "number": self.number,
            "index": r.index,
            "source": r.source,
            "kind": r.kind,
            "trigger": r.trigger,
            "timestamp": r.timestamp,
            "tokens_before_recorded": r.tokens_before,
            "tokens_after_recorded": r.tokens_after,
            "history_messages": len(self.history),
            "history_tokens": self.history_tokens,
            "budget": self.budget,
            "summary": r.summary,
            "note": r.note,
            "agent": self.agent.to_dict() if self.agent is not None else None,
            "strategies": [
                {**o.to_dict(), "at_equal_size": self.at_equal_size(o)} for o in self.strategies
            ],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Postmortem:
    """Every recorded compaction of one transcript, measured (JSON with :meth:`to_dict`)."""

    source: str
    format: str
    tokenizer: str
    messages: int
    compactions: tuple[CompactionPostmortem, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "tokenizer": self.tokenizer,
            "messages": self.messages,
            "compactions": [c.to_dict() for c in self.compactions],
        }


_FROM = "the replaced history"


@dataclass(frozen=True, slots=True)
class _Kept:
    """What the agent continued with, as :func:`analyze_overview` reads a result."""

    messages: tuple[Message, ...]
    tokens: TokenCounts
    status: str = "compacted"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Judging:
    """What every side of one recorded compaction is judged with."""

    history: tuple[Message, ...]
    history_tokens: int
    budget: int
    trigger: Trigger
    tokenizer: Tokenizer
    context_window: int | None = None

    def overview(self, result: Any) -> AnalysisOverview:
        """The measures of one side (``result``: what it continued with) at the agent's
        size, trigger and the model's context window."""
        return analyze_overview(
            self.history,
            result,
            triggers=self.trigger,
            tokenizer=self.tokenizer,
            context_window=self.context_window,
        )


def _judged(run: RecordedRun | CompactionResult, report: CompactionReport) -> Verdict:
    return verdict(run, report, facts_counted=POSTMORTEM_FACTS, facts_from=_FROM)


def _agent_verdict(j: _Judging, kept: Sequence[Message], facts: FactReport) -> Verdict:
    run = RecordedRun(
        tokens_before=j.history_tokens,
        tokens_after=j.budget,
        target_tokens=j.budget,
        messages_before=len(j.history),
        messages_after=len(kept),
    )
    held = _Kept(messages=tuple(kept), tokens=TokenCounts(j.history_tokens, j.budget))
    overview = j.overview(held)
    return verdict(
        run, overview.with_facts(facts), facts_counted=POSTMORTEM_FACTS, facts_from=_FROM
    )


def _strategy_verdict(j: _Judging, result: CompactionResult, facts: FactReport) -> Verdict:
    # The run was planned without its explanation: its target is the agent's size.
    ex = replace(
        result.explanation,
        target_tokens=j.budget,
        smallest_target=result.tokens_after if result.status == "cannot-fit" else None,
    )
    judged = replace(result, explanation=ex)
    overview = j.overview(judged)
    return verdict(
        judged, overview.with_facts(facts), facts_counted=POSTMORTEM_FACTS, facts_from=_FROM
    )


def _outcome(
    label: str,
    status: str,
    facts: Sequence[Fact],
    kept: Sequence[Message],
    tokens: int,
    judge: Callable[[FactReport], Verdict] | None = None,
) -> Outcome:
    report = FactReport.of(check_facts(facts, kept), ())
    return Outcome(
        label=label,
        status=status,
        tokens_after=tokens,
        messages_after=len(kept),
        extracted=report.extracted,
        survived=report.survived,
        lost=tuple(f.value for f in report.lost[:MAX_LOST]),
        latest_request_lost=report.latest_request_lost,
        kept=tuple(kept),
        verdict=judge(report) if judge is not None else None,
    )


def agent_kept(recorded: RecordedCompaction) -> tuple[Message, ...]:
    """What the agent continued with: its replacement history, else its summary."""
    if recorded.after:
        return recorded.after
    if recorded.summary:
        return (Message(role="user", parts=(TextPart(recorded.summary),)),)
    return ()


def _measure(
    number: int,
    recorded: RecordedCompaction,
    strategies: Sequence[tuple[str, StrategyFactory]],
    tokenizer: Tokenizer,
    context_window: int | None = None,
) -> CompactionPostmortem:
    history = recorded.replaced or ()
    kept = agent_kept(recorded)
    budget = sum(count_messages(kept, tokenizer)) if kept else 0
    history_tokens = sum(count_messages(history, tokenizer)) if history else 0
    if not history:
        return CompactionPostmortem(
            number=number,
            recorded=recorded,
            history=(),
            history_tokens=0,
            budget=budget,
            agent=None,
        )
    # The facts of the history are extracted once and checked against every side.
    facts = conversation_facts(history)
    readable = bool(recorded.summary) or any(m.text.strip() for m in kept)
    # Every side is judged at the agent's size, with the trigger the agent compacted at.
    j = _Judging(
        history=tuple(history),
        history_tokens=history_tokens,
        budget=max(1, budget),
        trigger=tokens_exceed(max(history_tokens, budget + 1)),
        tokenizer=tokenizer,
        context_window=context_window,
    )
    agent = _outcome(
        "agent",
        "recorded" if readable else "unreadable",
        facts,
        kept,
        budget,
        partial(_agent_verdict, j, kept) if readable else None,
    )
    index = MessageIndex.build(list(history), tokenizer)
    outcomes: list[Outcome] = []
    for label, factory in strategies:
        result = run_strategy(index, factory(max(1, budget)), tokenizer_given=True, explain=False)
        outcomes.append(
            _outcome(
                label,
                result.status,
                facts,
                result.projection,
                result.tokens_after,
                partial(_strategy_verdict, j, result),
            )
        )
    return CompactionPostmortem(
        number=number,
        recorded=recorded,
        history=tuple(history),
        history_tokens=history_tokens,
        budget=budget,
        agent=agent,
        strategies=tuple(outcomes),
    )


def postmortem(
    transcript: Transcript,
    strategies: Sequence[tuple[str, StrategyFactory]] | None = None,
    *,
    tokenizer: Tokenizer | None = None,
    context_window: int | None = None,
) -> Postmortem:
    """Measure every compaction the agent recorded in ``transcript``.

    ``strategies`` are ``(label, factory)`` pairs; a factory takes the token budget of
    a compaction and returns the strategy to run over its history (a fixed strategy:
    ``lambda _budget: strategy``). Default: the reference pipeline. Counts with
    ``tokenizer`` (default: the ``ceil(characters / 4)`` estimate). ``context_window``:
    the model's context window, as :func:`analyze` takes it (every side's verdict names
    a history over it as a cost; default: no such check).
    """
    tok = tokenizer if tokenizer is not None else CharEstimator()
    chosen = list(strategies) if strategies is not None else [(REFERENCE_LABEL, reference_pipeline)]
    measured = tuple(
        _measure(n, c, chosen, tok, context_window)
        for n, c in enumerate(transcript.compactions, start=1)
    )
    return Postmortem(
        source=transcript.source,
        format=transcript.format,
        tokenizer=getattr(tok, "name", type(tok).__name__),
        messages=len(transcript.messages),
        compactions=measured,
    )


__all__ = [
    "MAX_LOST",
    "POSTMORTEM_FACTS",
    "REFERENCE_LABEL",
    "CompactionPostmortem",
    "Outcome",
    "Postmortem",
    "StrategyFactory",
    "agent_kept",
    "postmortem",
    "reference_config",
    "reference_pipeline",
    "sized_factory",
]
