"""``analyze(original, result)``: fact survival, cache impact, re-trigger guard, protocol.

:func:`analyze` accepts the engine's :class:`~compactlens.engine.result.CompactionResult`,
``compact()``'s :class:`~compactlens.compact.result.CompactResult`, or any object with
``messages`` (and optionally ``status`` / ``reason``), and returns a
:class:`CompactionReport` whose ``to_dict()`` ``json.dumps`` accepts.

Which original messages were *affected* (removed, collapsed or summarized) comes from
the result's group decisions, from ``compact()``'s replaced range (minus the latest
user message it re-inserts), or, for any other result, from an order-preserving match
of the compacted messages against the original ones.

Token counts for the cache and growth estimates use ``tokenizer`` (default: the
tokenizer the engine result names, else the character estimate); ``tokens_before`` /
``tokens_after`` and the re-trigger's starting tokens are the result's own numbers,
which are the ones its triggers compare.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from compactlens.analysis.cache import (
    DEFAULT_MODEL,
    DEFAULT_PRICES,
    CacheImpact,
    ModelPrices,
    cache_impact,
    prices_for,
    summarizer_cost,
)
from compactlens.analysis.facts import Fact, FactReport, fact_survival, normalize_space
from compactlens.analysis.judge import judge_survival
from compactlens.analysis.protocol import (
    ProtocolProblem,
    check_protocol,
    chosen_providers,
    own_provider,
)
from compactlens.analysis.retrigger import (
    DEFAULT_HORIZON,
    DEFAULT_MAX_FRACTION,
    Growth,
    HistoryMetrics,
    RetriggerEstimate,
    estimate_retrigger,
    growth_from_index,
    strategy_triggers,
)
from compactlens.engine.index import MessageIndex
from compactlens.engine.result import CompactionResult
from compactlens.engine.strategies.base import Strategy
from compactlens.engine.triggers import Trigger, tokens_exceed
from compactlens.engine.vocabulary import plural
from compactlens.formats.caller import CallerMessages, from_caller
from compactlens.model.display import card_html, card_text
from compactlens.model.errors import ConfigError, InputTypeError
from compactlens.model.gc_pause import gc_paused
from compactlens.model.messages import Message
from compactlens.model.tokens import ENCODINGS, Tokenizer, make_tokenizer
from compactlens.summarizers.base import Summarizer

_AFFECTING = ("excluded", "collapsed", "summarized")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSource:
    """What a fix search over :attr:`CompactionReport.run` needs, kept when
    :func:`analyze` was given the run's strategy as its triggers: the original messages,
    that strategy and the tokenizer the report counted with (None: the estimate). Its
    notebook card then shows the run's one next step (the one ``debug()`` gives) instead
    of pointing to ``debug()``; ``memo`` keeps that step once computed."""

    messages: tuple[Message, ...]
    strategy: Strategy
    tokenizer: Tokenizer | None
    memo: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """Everything :func:`analyze` measured about one compaction.

    ``problems`` are the protocol problems of the compacted request; ``introduced``
    those of them the original request did not already have. ``warnings`` collects
    the findings worth a user's attention, in words.
    """

    status: str
    reason: str | None
    strategy: str | None
    tokenizer: str
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    facts: FactReport
    cache: CacheImpact
    retrigger: RetriggerEstimate
    problems: tuple[ProtocolProblem, ...]
    introduced: tuple[ProtocolProblem, ...]
    providers: tuple[str, ...]
    warnings: tuple[str, ...]
    #: Which providers were checked and why ("checked for openai-responses, the
    #: transcript's own API").
    providers_note: str = ""
    #: System (or developer) messages of the original that do not survive word for word in
    #: the compacted history (:func:`system_prompt_lost`): the agent's instructions.
    system_lost: int = 0
    #: The API the transcript was sent to, when its messages say
    #: (:func:`~compactlens.analysis.protocol.own_provider`); the verdict counts for it.
    own_provider: str | None = None
    #: The run :func:`analyze` measured (not part of the data: its notebook card renders
    #: the verdict of this run and this report, so the card's colour is the verdict's level).
    run: Any = field(default=None, compare=False, repr=False)
    #: The run's original messages and strategy (not part of the data: the card's next
    #: step comes from a fix search over them), or None when the report was not given
    #: the strategy.
    source: RunSource | None = field(default=None, compare=False, repr=False)

    @property
    def errors(self) -> tuple[ProtocolProblem, ...]:
        """Error-level protocol problems of the compacted request."""
        return tuple(p for p in self.problems if p.severity == "error")

    def to_dict(self, *, max_lost: int | None = None) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "strategy": self.strategy,
            "tokenizer": self.tokenizer,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "facts": self.facts.to_dict(max_lost=max_lost),
            "cache": self.cache.to_dict(),
            "retrigger": self.retrigger.to_dict(),
            "providers": list(self.providers),
            "providers_note": self.providers_note,
            "system_lost": self.system_lost,
            "own_provider": self.own_provider,
            "problems": [p.to_dict() for p in self.problems],
            "introduced_problems": [p.to_dict() for p in self.introduced],
            "warnings": list(self.warnings),
        }

    def to_json(self, *, indent: int | None = 2, max_lost: int | None = None) -> str:
        return json.dumps(self.to_dict(max_lost=max_lost), indent=indent, ensure_ascii=False)

    def __repr__(self) -> str:
        from compactlens.analysis.display import report_card

        return card_text(report_card(self, search=False))  # the text names no step

    def _repr_html_(self) -> str:
        from compactlens.analysis.display import report_card

        return card_html(report_card(self))

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` with one row per fact checked: kind, value, the message
        it came from (index and role), the part it was in, and whether it survived."""
        from compactlens.analysis.display import fact_frame

        return fact_frame(self)


@dataclass(frozen=True, slots=True)
class AnalysisOverview:
    """The quick part of :func:`analyze`: every measure but fact survival.

    Fact survival reads every affected message's text (seconds on a long transcript);
    the rest of the analysis reads counts, so a page can show it first.
    :meth:`with_facts` completes it into the :class:`CompactionReport` that
    :func:`analyze` returns. ``affected`` are the original indices of the removed,
    collapsed or summarized messages (the ones fact survival reads).
    """

    status: str
    reason: str | None
    strategy: str | None
    tokenizer: str
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    affected: tuple[int, ...]
    cache: CacheImpact
    retrigger: RetriggerEstimate
    problems: tuple[ProtocolProblem, ...]
    introduced: tuple[ProtocolProblem, ...]
    providers: tuple[str, ...]
    warnings: tuple[str, ...]
    providers_note: str = ""
    system_lost: int = 0
    own_provider: str | None = None

    def with_facts(self, facts: FactReport) -> CompactionReport:
        """The whole report: this overview plus ``facts`` (whose findings come first)."""
        return CompactionReport(
            status=self.status,
            reason=self.reason,
            strategy=self.strategy,
            tokenizer=self.tokenizer,
            messages_before=self.messages_before,
            messages_after=self.messages_after,
            tokens_before=self.tokens_before,
            tokens_after=self.tokens_after,
            facts=facts,
            cache=self.cache,
            retrigger=self.retrigger,
            problems=self.problems,
            introduced=self.introduced,
            providers=self.providers,
            warnings=(*fact_warnings(facts), *self.warnings),
            providers_note=self.providers_note,
            system_lost=self.system_lost,
            own_provider=self.own_provider,
        )


def fact_warnings(facts: FactReport) -> tuple[str, ...]:
    """The findings of fact survival, in words (the first of a report's warnings)."""
    out: list[str] = []
    if facts.latest_request_lost:
        out.append("the latest user request does not survive verbatim")
    lost = len(facts.lost)
    if lost:
        out.append(
            f"{lost:,} of the conversation's {plural(facts.extracted, 'fact')} "
            f"{'was' if lost == 1 else 'were'} lost "
            f"(recall {facts.recall:.0%})"
        )
    return tuple(out)


def system_prompt_lost(original: Sequence[Message], compacted: Sequence[Message]) -> int:
    """How many of ``original``'s system (or developer) messages with text do not survive
    in ``compacted``: neither kept as they are nor found word for word (whitespace aside)
    in a compacted message. Checked beside the latest user request: both are what a
    compaction must never lose without saying so."""
    kept = set(compacted)
    missing = [m for m in original if m.is_system and m.text.strip() and m not in kept]
    if not missing:
        return 0
    text = normalize_space("\n".join(m.text for m in compacted))
    return sum(1 for m in missing if normalize_space(m.text) not in text)


@dataclass(frozen=True, slots=True)
class _Outcome:
    """A compaction result of any kind, reduced to what the analysis reads."""

    status: str
    reason: str | None
    strategy: str | None
    tokenizer: str | None
    projection: tuple[Message, ...]
    affected: tuple[int, ...]
    tokens_before: int | None
    tokens_after: int | None
    usage: Any
    #: The run's own triggers, used when analyze() is given none (None: not known).
    default_triggers: tuple[Trigger, ...] | None


def unmatched_indices(original: Sequence[Message], compacted: Sequence[Message]) -> tuple[int, ...]:
    """Original indices with no match in ``compacted``, matching in order (equal messages)."""
    positions: dict[Message, list[int]] = {}
    for k, m in enumerate(compacted):
        positions.setdefault(m, []).append(k)
    out: list[int] = []
    j = 0
    for i, m in enumerate(original):
        found = positions.get(m)
        if found:
            at = bisect.bisect_left(found, j)
            if at < len(found):
                j = found[at] + 1
                continue
        out.append(i)
    return tuple(out)


def _projection(items: Sequence[Any], caller: CallerMessages) -> tuple[Message, ...]:
    if all(isinstance(m, Message) for m in items):
        return tuple(items)
    return from_caller(items, format=caller.format).messages


def _adapt(result: Any, caller: CallerMessages) -> _Outcome:
    original = caller.messages
    if isinstance(result, CompactionResult):
        touched = sorted(
            {k for d in result.decisions if d.action in _AFFECTING for k in d.message_indices}
        )
        return _Outcome(
            status=result.status,
            reason=result.reason,
            strategy=result.strategy,
            tokenizer=result.tokenizer,
            projection=tuple(result.projection),
            affected=tuple(touched),
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            usage=None,
            default_triggers=result.triggers,
        )
    if not hasattr(result, "messages"):
        raise InputTypeError(
            f"expected a CompactionResult, a CompactResult or an object with messages, "
            f"got {type(result).__name__}"
        )
    projection = _projection(list(result.messages), caller)
    tokens = getattr(result, "tokens", None)
    replaced = getattr(result, "replaced_range", None)
    status = str(getattr(result, "status", "compacted"))
    if replaced is not None and hasattr(tokens, "before"):  # compact()'s CompactResult
        start, end = replaced
        reinserted = getattr(result, "reinserted_index", None)
        affected = tuple(i for i in range(start, end) if i != reinserted)
    elif hasattr(tokens, "before") and status != "compacted":
        affected = ()
    else:
        affected = unmatched_indices(original, projection)
    target = getattr(result, "target_tokens", None)
    default_triggers = (
        (tokens_exceed(target),)
        if isinstance(target, int) and not isinstance(target, bool) and target > 0
        else ()
    )
    return _Outcome(
        status=status,
        reason=getattr(result, "reason", None),
        strategy="compact" if hasattr(result, "replaced_range") else None,
        tokenizer=None,
        projection=projection,
        affected=affected,
        tokens_before=getattr(tokens, "before", None),
        tokens_after=getattr(tokens, "after", None),
        usage=getattr(result, "usage", None),
        default_triggers=default_triggers,
    )


def _tokenizer_for(name: str | None) -> Tokenizer:
    """The named encoding's tokenizer; the estimate for any other name (or none)."""
    return make_tokenizer(name if name is not None and name in ENCODINGS else "estimate")


def _original_caller(original: Any) -> CallerMessages:
    if isinstance(original, CallerMessages):
        return original
    if not isinstance(original, Sequence) and hasattr(original, "messages"):
        original = original.messages  # a Transcript or a similar holder
    return from_caller(original)


def _triggers(
    value: Any, fallback: tuple[Trigger, ...] | None, tokenizer_given: bool
) -> tuple[Trigger, ...] | None:
    """The triggers given, else the run's own (``fallback``); None when neither is known."""
    if value is None:
        return fallback
    if isinstance(value, Trigger):
        return (value,)
    if isinstance(value, Mapping) or hasattr(value, "to_dict"):
        return strategy_triggers(value, tokenizer_given=tokenizer_given)
    out: list[Trigger] = []
    for item in value:
        if not isinstance(item, Trigger):
            raise InputTypeError(f"triggers must be Trigger objects, got {type(item).__name__}")
        out.append(item)
    return tuple(out)


def _growth(value: Any, index: MessageIndex) -> Growth:
    measured = growth_from_index(index)
    if value is None:
        return measured
    if isinstance(value, Growth):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"growth_per_turn must be a number of tokens >= 0, got {value!r}")
    return Growth(
        tokens=float(value),
        messages=measured.messages,
        groups=measured.groups,
        tool_call_groups=measured.tool_call_groups,
        source="given",
        turns_measured=measured.turns_measured,
    )


def _prices(
    prices: ModelPrices | str | None, model: str | None, table: Mapping[str, ModelPrices]
) -> tuple[ModelPrices, str]:
    if isinstance(prices, ModelPrices):
        return prices, model or "custom"
    name = prices if isinstance(prices, str) else (model or DEFAULT_MODEL)
    return prices_for(name, table), name


def _problem_key(p: ProtocolProblem, messages: Sequence[Message]) -> tuple[Any, ...]:
    at = messages[p.message_index] if 0 <= p.message_index < len(messages) else None
    return (p.provider, p.kind, p.call_id, at)


@dataclass(frozen=True, slots=True, kw_only=True)
class _OverviewSettings:
    """The measuring choices of :func:`analyze` and :func:`analyze_overview` (their
    keyword arguments but the judge and the fact cache), passed on as one value."""

    triggers: Trigger | Iterable[Trigger] | Mapping[str, Any] | Any
    context_window: int | None
    prices: ModelPrices | str | None
    further_turns: int
    growth_per_turn: float | Growth | None
    tokenizer: Tokenizer | None
    model: str | None
    price_table: Mapping[str, ModelPrices]
    providers: Iterable[str] | None
    max_fraction: float
    horizon: int


@gc_paused()
def analyze(
    original: Any,
    result: Any,
    *,
    triggers: Trigger | Iterable[Trigger] | Mapping[str, Any] | Any = None,
    context_window: int | None = None,
    prices: ModelPrices | str | None = None,
    further_turns: int = 10,
    growth_per_turn: float | Growth | None = None,
    judge: Summarizer | None = None,
    tokenizer: Tokenizer | None = None,
    model: str | None = None,
    price_table: Mapping[str, ModelPrices] = DEFAULT_PRICES,
    providers: Iterable[str] | None = None,
    max_fraction: float = DEFAULT_MAX_FRACTION,
    horizon: int = DEFAULT_HORIZON,
    fact_cache: dict[int, list[Fact]] | None = None,
) -> CompactionReport:
    """Measure one compaction of ``original`` (wire dicts, messages or a transcript).

    ``triggers``: the configured triggers (a :class:`Trigger`, several, a strategy or
    its ``to_dict()``); default: the run's own for engine results (``result.triggers``,
    as the engine read them from its strategy; when unknown the re-trigger is reported
    as not checked), ``tokens > target_tokens`` for ``compact()`` results. ``prices``:
    :class:`ModelPrices` or a model name looked up in ``price_table`` (default ``model``
    or ``gpt-4o``). ``growth_per_turn``: tokens one turn adds (or a :class:`Growth`);
    default: measured on ``original``. ``judge``: an optional summarizer asked for a
    graded, clearly labelled score. ``fact_cache``:
    a dict kept by the caller for every analysis of the same ``original`` (facts are
    extracted once per original message; see :func:`~compactlens.analysis.fact_survival`).
    ``providers``: the APIs protocol problems are checked for; default: the transcript's
    own API when ``original`` was read from a format written for one (a Codex rollout:
    ``openai-responses``), else ``openai-chat`` and ``anthropic``; the report's
    ``providers_note`` says which and why.

    The same as :func:`analyze_overview` completed with :func:`analyze_facts` (a page
    can show the overview while fact survival is computed).
    """
    caller = _original_caller(original)
    outcome = _adapt(result, caller)
    settings = _OverviewSettings(
        triggers=triggers,
        context_window=context_window,
        prices=prices,
        further_turns=further_turns,
        growth_per_turn=growth_per_turn,
        tokenizer=tokenizer,
        model=model,
        price_table=price_table,
        providers=providers,
        max_fraction=max_fraction,
        horizon=horizon,
    )
    overview = _overview(caller, outcome, settings)
    source = (
        RunSource(messages=tuple(caller.messages), strategy=triggers, tokenizer=tokenizer)
        if isinstance(triggers, Strategy) and isinstance(result, CompactionResult)
        else None
    )
    return replace(
        overview.with_facts(_facts(caller, outcome, judge, fact_cache)), run=result, source=source
    )


@gc_paused()
def analyze_facts(
    original: Any,
    result: Any,
    *,
    judge: Summarizer | None = None,
    fact_cache: dict[int, list[Fact]] | None = None,
) -> FactReport:
    """Fact survival of one compaction: the ``facts`` of :func:`analyze`'s report."""
    caller = _original_caller(original)
    return _facts(caller, _adapt(result, caller), judge, fact_cache)


def _facts(
    caller: CallerMessages,
    outcome: _Outcome,
    judge: Summarizer | None,
    fact_cache: dict[int, list[Fact]] | None,
) -> FactReport:
    original_msgs = caller.messages
    projection = outcome.projection
    judge_score = None
    if judge is not None and outcome.affected:
        removed = [original_msgs[i] for i in outcome.affected]
        judge_score = judge_survival(judge, removed, projection)
    return fact_survival(
        original_msgs, projection, outcome.affected, judge=judge_score, cache=fact_cache
    )


@gc_paused()
def analyze_overview(
    original: Any,
    result: Any,
    *,
    triggers: Trigger | Iterable[Trigger] | Mapping[str, Any] | Any = None,
    context_window: int | None = None,
    prices: ModelPrices | str | None = None,
    further_turns: int = 10,
    growth_per_turn: float | Growth | None = None,
    tokenizer: Tokenizer | None = None,
    model: str | None = None,
    price_table: Mapping[str, ModelPrices] = DEFAULT_PRICES,
    providers: Iterable[str] | None = None,
    max_fraction: float = DEFAULT_MAX_FRACTION,
    horizon: int = DEFAULT_HORIZON,
) -> AnalysisOverview:
    """Every measure of :func:`analyze` but fact survival (same arguments, same values):
    tokens, the prompt cache, the re-trigger guard and protocol problems."""
    settings = _OverviewSettings(
        triggers=triggers,
        context_window=context_window,
        prices=prices,
        further_turns=further_turns,
        growth_per_turn=growth_per_turn,
        tokenizer=tokenizer,
        model=model,
        price_table=price_table,
        providers=providers,
        max_fraction=max_fraction,
        horizon=horizon,
    )
    caller = _original_caller(original)
    return _overview(caller, _adapt(result, caller), settings)


def _overview(
    caller: CallerMessages, outcome: _Outcome, settings: _OverviewSettings
) -> AnalysisOverview:
    tok = (
        settings.tokenizer if settings.tokenizer is not None else _tokenizer_for(outcome.tokenizer)
    )
    original_msgs = caller.messages
    projection = outcome.projection
    original_index = MessageIndex.build(original_msgs, tok)
    compacted_index = MessageIndex.build(projection, tok)

    growth = _growth(settings.growth_per_turn, original_index)
    chosen_prices, model_name = _prices(settings.prices, settings.model, settings.price_table)
    usage = outcome.usage
    compaction_cost = 0.0
    if usage is not None and hasattr(usage, "input_tokens"):
        compaction_cost = summarizer_cost(
            int(usage.input_tokens), int(usage.output_tokens), chosen_prices
        )
    cache = cache_impact(
        original_msgs,
        projection,
        original_counts=original_index.message_tokens,
        compacted_counts=compacted_index.message_tokens,
        prices=chosen_prices,
        model=model_name,
        further_turns=settings.further_turns,
        growth_tokens=max(0, round(growth.tokens)),
        compaction_cost=compaction_cost,
    )

    tokens_before = (
        outcome.tokens_before if outcome.tokens_before is not None else original_index.total_tokens
    )
    tokens_after = (
        outcome.tokens_after if outcome.tokens_after is not None else compacted_index.total_tokens
    )
    chosen_triggers = _triggers(
        settings.triggers, outcome.default_triggers, tokenizer_given=outcome.tokenizer != "estimate"
    )
    retrigger = estimate_retrigger(
        HistoryMetrics.of(compacted_index, tokens=tokens_after),
        chosen_triggers or (),
        growth,
        context_window=settings.context_window,
        max_fraction=settings.max_fraction,
        horizon=settings.horizon,
    )
    if chosen_triggers is None:
        retrigger = replace(retrigger, checked=False)

    chosen, providers_note = chosen_providers(settings.providers, caller)
    problems = check_protocol(projection, chosen, index=compacted_index)
    before = {
        _problem_key(p, original_msgs)
        for p in check_protocol(original_msgs, chosen, index=original_index)
    }
    introduced = tuple(p for p in problems if _problem_key(p, projection) not in before)

    system_lost = system_prompt_lost(original_msgs, projection)
    warnings: list[str] = list(retrigger.warnings)
    if outcome.status == "unchanged" and retrigger.turns_until_trigger == 1:
        # Nothing compacted yet: the next trigger is the first compaction, not a loop, and
        # there is no gap between a trigger and a target to widen.
        warnings = [
            f"the first compaction is due on the next turn ({retrigger.firing_trigger})"
            if w.startswith("compaction would fire again")
            else w
            for w in warnings
        ]
    if system_lost:
        lost = f"{system_lost} system message{'' if system_lost == 1 else 's'}"
        warnings.append(f"the system prompt is dropped ({lost} lost)")
    introduced_errors = [p for p in introduced if p.severity == "error"]
    if introduced_errors:
        kinds = sorted({f"{p.provider}:{p.kind}" for p in introduced_errors})
        warnings.append(
            f"compaction introduced {len(introduced_errors)} protocol errors ({', '.join(kinds)})"
        )
    if cache.cost is not None and cache.cost.break_even_turn is None and outcome.affected:
        warnings.append("at these prices the compaction never pays for its cache rewrite")

    return AnalysisOverview(
        status=outcome.status,
        reason=outcome.reason,
        strategy=outcome.strategy,
        tokenizer=original_index.tokenizer_name,
        messages_before=len(original_msgs),
        messages_after=len(projection),
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        affected=outcome.affected,
        cache=cache,
        retrigger=retrigger,
        problems=problems,
        introduced=introduced,
        providers=chosen,
        warnings=tuple(warnings),
        providers_note=providers_note,
        system_lost=system_lost,
        own_provider=own_provider(caller),
    )
