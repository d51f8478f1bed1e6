"""Runs of a lab configuration over a prebuilt index.

An index is built once per (transcript, tokenizer) and a configuration is planned over
it: engine strategies through :func:`compactlens.run_strategy`, compact mode through
:func:`compactlens.compact.compact_over_index`. The pages read the result through
:mod:`compactlens_inspector.views.run`. No Streamlit here.
"""

from __future__ import annotations

import re
import time
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compactlens import (
    CompactionResult,
    Guards,
    Message,
    MessageIndex,
    Strategy,
    Summarizer,
    run_strategy,
    strategy_from_config,
)
from compactlens.analysis import (
    BudgetPart,
    Fix,
    FixSearch,
    budget_breakdown,
    compact_budget,
    search_fixes,
)
from compactlens.compact import compact_over_index
from compactlens.model import gc_paused, make_tokenizer
from compactlens.summarizers import SummaryRequest, SummaryResponse, Usage, is_offline
from compactlens_inspector.lab.config import LabConfig, SummarizerSettings
from compactlens_inspector.serving.egress import guarded_http_client
from compactlens_inspector.serving.hosting import Access
from compactlens_inspector.serving.limits import (
    LimitedSummarizer,
    RefusingSummarizer,
    SummaryLimiter,
    UniformFailures,
)

_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-*]{4,}|Bearer\s+[A-Za-z0-9._\-*]+)")


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` with API keys (given ones, and anything shaped like ``sk-...``) removed."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _SECRET.sub("[redacted]", text)


def build_index(
    messages: Sequence[Message], tokenizer: str, grouping: str = "compactlens"
) -> MessageIndex:
    """The index of ``messages``; ``grouping`` is the profile's (``maf`` groups reasoning
    the way Microsoft Agent Framework does)."""
    return MessageIndex.build(messages, make_tokenizer(tokenizer), grouping=grouping)  # type: ignore[arg-type]


# -- summarizers -------------------------------------------------------------------------------


def make_summarizer(
    settings: SummarizerSettings,
    *,
    api_key: str | None = None,
    cache: MutableMapping[str, SummaryResponse] | None = None,
    access: Access | None = None,
    limiter: SummaryLimiter | None = None,
) -> Summarizer:
    """The summarizer for ``settings``, answering repeated requests from ``cache``.

    The extractive summarizer is offline and deterministic. The OpenAI-compatible one
    is built with the key given here (never stored in settings, never shown). With an
    ``access`` (see :func:`~compactlens_inspector.serving.hosting.resolve_access`) its
    endpoint and key are the ones the hosting policy decided (a refused access sends
    nothing), and nothing else is read from the environment unless the key is the server's;
    an endpoint a visitor named is reached only through the address guard and its failures
    all read alike. With a ``limiter`` every request that is not answered from the cache
    passes it (and the server's budget it holds).
    """
    from compactlens.summarizers import CachingSummarizer

    inner: Summarizer
    if settings.kind == "openai" and access is not None and access.problem:
        inner = RefusingSummarizer(access.problem)
    elif settings.kind == "openai":
        inner = _openai(settings, api_key, access)
        if limiter is not None:
            inner = LimitedSummarizer(inner, limiter)
    else:
        from compactlens import ExtractiveSummarizer

        inner = ExtractiveSummarizer()
    return CachingSummarizer(inner, cache)


def _openai(settings: SummarizerSettings, api_key: str | None, access: Access | None) -> Summarizer:
    from compactlens import OpenAISummarizer

    timeout = 60.0
    guard = access.guard if access else None
    summarizer = OpenAISummarizer(
        settings.model or "gpt-4o-mini",
        base_url=access.base_url if access else settings.base_url or None,
        api_key=access.api_key if access else api_key or None,
        timeout=timeout,
        # The operator's other OPENAI_* settings (organization, project, custom
        # headers) go only with the operator's own key to an endpoint they allowed.
        environment=access is None or access.owner == "server",
        http_client=guarded_http_client(guard, timeout) if guard is not None else None,
    )
    if guard is None or access is None:
        return summarizer
    return UniformFailures(summarizer, access.base_url)


@dataclass(frozen=True, slots=True)
class SummaryCall:
    """One summarizer answer used by a run (for the usage display)."""

    model: str | None
    usage: Usage | None
    cached: bool
    finish_reason: str
    chars: int


class _Recorder:
    """Records the answers of a summarizer during one run (a private, per-run object)."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.calls: list[SummaryCall] = []

    @property
    def offline(self) -> bool:
        """Offline when the wrapped summarizer is (re-runs may call it again)."""
        return is_offline(self.inner)

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        response = self.inner.summarize(request)
        self.calls.append(
            SummaryCall(
                response.model,
                response.usage,
                response.cached,
                response.finish_reason,
                len(response.text),
            )
        )
        return response


# -- one run -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """A configuration planned over an index: the result, or the configuration error."""

    config: LabConfig
    result: CompactionResult | None
    error: str | None = None
    summaries: tuple[SummaryCall, ...] = ()
    compact: Any = None
    boundary: Any = None
    duration_ms: float = 0.0
    strategy: Strategy | None = None
    guards: Guards | None = None

    @property
    def status(self) -> str:
        return self.result.status if self.result is not None else "error"

    @property
    def usage(self) -> Usage | None:
        """Total usage of the summarizer calls that were not answered from the cache."""
        fresh = [c.usage for c in self.summaries if c.usage is not None and not c.cached]
        if not fresh:
            return None
        return Usage(
            sum(u.input_tokens for u in fresh),
            sum(u.output_tokens for u in fresh),
            sum(u.total_tokens for u in fresh),
        )


def run_config(
    index: MessageIndex,
    config: LabConfig,
    summarizer: Summarizer,
    *,
    secrets: Sequence[str] = (),
    explain: bool = True,
    format_name: str | None = None,
) -> RunOutcome:
    """Plan ``config`` over ``index`` (engine strategies, or ``compact()`` in compact mode).

    With ``explain`` a ``cannot-fit`` result carries its full explanation: protected
    content and the single changes that fit, found by re-running variants (which
    costs a few more plans, or summarizer calls in compact mode). Engine strategies run
    under the configuration's guards; ``format_name`` (the transcript's format) decides
    the provider when the guards leave it to the format.
    """
    start = time.perf_counter()
    with gc_paused():  # these values hold no reference cycles
        outcome = _run_config(index, config, summarizer, secrets, explain, format_name)
        if outcome.result is not None:
            # Every page that shows a run reads its per-group decisions (the decision
            # map, groups kept): built here, with the collector paused, they cost a
            # third of what they cost later in a page (30,000 groups: 0.07 s, not 0.2).
            len(outcome.result.decisions)
    return replace(outcome, duration_ms=(time.perf_counter() - start) * 1000.0)


def _run_config(
    index: MessageIndex,
    config: LabConfig,
    summarizer: Summarizer,
    secrets: Sequence[str],
    explain: bool,
    format_name: str | None,
) -> RunOutcome:
    recorder = _Recorder(summarizer)
    if config.mode == "compact":
        c = config.compact
        run = compact_over_index(
            index,
            target_tokens=c.target_tokens,
            keep_last_messages=c.keep_last_messages,
            summarizer=recorder,
            trigger_tokens=c.trigger_tokens,
            find_fixes=explain,
            redact=lambda text: redact(text, secrets),
        )
        outcome = RunOutcome(
            config, run.result, error=run.error, compact=run.compact, boundary=run.boundary
        )
    else:
        try:
            strategy = strategy_from_config(config.strategy_config(), summarizer=recorder)
            guards = config.guard_set(format_name)
            result = run_strategy(index, strategy, explain=explain, guards=guards)
        except ValueError as exc:
            return RunOutcome(config, None, error=redact(str(exc), secrets))
        outcome = RunOutcome(config, result, strategy=strategy, guards=guards)
    return replace(outcome, summaries=tuple(recorder.calls))


# -- fixes ---------------------------------------------------------------------------------------


def find_fixes(
    index: MessageIndex,
    outcome: RunOutcome,
    *,
    include_destructive: bool = False,
    context_window: int | None = None,
) -> FixSearch | None:
    """The ranked fixes of an engine run (None for compact mode or a configuration error).

    Re-runs replay the run's summaries: a fix never calls a model. ``context_window``:
    the Analysis page's (None or 0: no check); no fix raises the target past it.
    """
    if outcome.strategy is None or outcome.result is None:
        return None
    return search_fixes(
        index,
        outcome.strategy,
        guards=outcome.guards,
        summaries=outcome.result.summaries,
        include_destructive=include_destructive,
        context_window=context_window or None,
    )


def fix_config(fix: Fix, base: LabConfig) -> LabConfig:
    """``base`` changed to what ``fix`` runs: its stages, its target and its guards."""
    strategy = fix.strategy.to_dict()
    if strategy.get("type") == "pipeline":
        stages = tuple(_stage(s) for s in strategy.get("strategies", []))
        target = strategy.get("target")
    else:
        stages, target = (_stage(strategy),), None
    guards = fix.guards.to_dict()
    if base.guards is None or base.guards.get("provider") is None:
        guards["provider"] = None  # it followed the format: keep following it
    return replace(base, stages=stages, target=target, guards=guards, label="")


def _stage(config: dict[str, Any]) -> dict[str, Any]:
    """A strategy's ``to_dict()`` as a lab stage (no summarizer name, no empty values)."""
    return {k: v for k, v in config.items() if k != "summarizer" and v is not None}


# -- compact() one-shot mode -------------------------------------------------------------------


#: The waterfall part of the least summary text a ``compact()`` summary needs.
SHORTEST_SUMMARY = "shortest summary text"
SHORTEST_SUMMARY_DETAIL = "the least text any summary needs"


def budget_parts(outcome: RunOutcome, index: MessageIndex) -> list[BudgetPart]:
    """The waterfall parts of a run: the compact() candidate, or the engine projection.

    A ``compact()`` run that could not fit adds the shortest summary text it needs, so
    that the parts add up to its smallest target that fits (the one number the page, its
    fixes and the verdict name), never to a candidate one token short of any summary."""
    if outcome.config.mode == "compact" and outcome.boundary is not None:
        parts = compact_budget(outcome.boundary, index)
        smallest = outcome.compact.smallest_target if outcome.compact is not None else None
        gap = smallest - sum(p.tokens for p in parts) if smallest is not None else 0
        if gap > 0:
            parts.append(BudgetPart(SHORTEST_SUMMARY, gap, SHORTEST_SUMMARY_DETAIL))
        return parts
    if outcome.result is None:
        return []
    return budget_breakdown(outcome.result, index)
