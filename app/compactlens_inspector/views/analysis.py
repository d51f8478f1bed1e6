"""The compaction analysis of a run: fact survival, prompt-cache impact, re-trigger guard and
protocol problems (:func:`compactlens.analysis.analyze`), with the settings the inspector
lets a user change (model prices, context window, turns ahead) and the views its pages,
the HTML report and the export read. No Streamlit here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from compactlens import (
    CharEstimator,
    CompactResult,
    MessageIndex,
    Tokenizer,
    Trigger,
    tokens_exceed,
)
from compactlens.analysis import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MODEL,
    DEFAULT_PRICES,
    AnalysisOverview,
    CompactionReport,
    Fact,
    FactReport,
    FixSearch,
    ModelPrices,
    Verdict,
    analyze_facts,
    analyze_overview,
    group_counts,
    latest_user_request,
    prices_for,
    verdict,
    verdict_provider,
)
from compactlens.engine import CompactionResult, always, memo_tokenizer
from compactlens_inspector.lab.config import LabConfig
from compactlens_inspector.lab.runs import RunOutcome
from compactlens_inspector.style.numbers import num, share
from compactlens_inspector.views.message import call_names
from compactlens_inspector.views.run import render_message

#: The columns of the editable price table, in order (USD per million tokens).
PRICE_COLUMNS: tuple[str, ...] = ("input", "cached_input", "cache_write", "output")

PRICES_NOTE = (
    "List prices in USD per million tokens (standard tier) as published by the providers "
    "in 2025, from compactlens' DEFAULT_PRICES. Prices change and discounts apply: every "
    "cell is editable, and the analysis uses the edited prices of the selected model."
)


@dataclass(frozen=True, slots=True)
class AnalysisSettings:
    """What the analysis depends on besides the run: prices, context window, turns ahead.

    ``prices`` is the whole (possibly edited) table as (model, prices) pairs; only the
    selected model's prices enter :meth:`key`, so editing another row re-uses the
    cached analysis.
    """

    model: str = DEFAULT_MODEL
    prices: tuple[tuple[str, ModelPrices], ...] = tuple(DEFAULT_PRICES.items())
    context_window: int | None = DEFAULT_CONTEXT_WINDOW
    further_turns: int = 10

    @property
    def table(self) -> dict[str, ModelPrices]:
        return dict(self.prices)

    @property
    def chosen(self) -> ModelPrices:
        """The selected model's prices (the default model's when it is not in the table)."""
        table = self.table
        try:
            return prices_for(self.model, table)
        except ValueError:
            return table.get(DEFAULT_MODEL) or DEFAULT_PRICES[DEFAULT_MODEL]

    @property
    def edited(self) -> bool:
        """True when any price differs from the list prices."""
        return self.table != dict(DEFAULT_PRICES)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "prices": self.chosen.to_dict(),
            "prices_edited": self.chosen != DEFAULT_PRICES.get(self.model),
            "context_window": self.context_window,
            "further_turns": self.further_turns,
        }

    def key(self) -> str:
        """A canonical string of what changes the analysis (a cache key)."""
        data = self.to_dict()
        data.pop("prices_edited")
        return json.dumps(data, sort_keys=True, separators=(",", ":"))


def price_rows(table: Mapping[str, ModelPrices]) -> list[dict[str, Any]]:
    """The price table as rows for an editable grid (``model`` plus :data:`PRICE_COLUMNS`)."""
    return [{"model": name, **p.to_dict()} for name, p in table.items()]


def prices_from_rows(
    rows: Sequence[Mapping[str, Any]],
) -> tuple[tuple[tuple[str, ModelPrices], ...], list[str]]:
    """Rows of an edited grid back to (model, prices) pairs, and one message per bad row.

    A row with an empty, negative or non-numeric price is reported and left out.
    """
    out: list[tuple[str, ModelPrices]] = []
    errors: list[str] = []
    for row in rows:
        name = str(row.get("model") or "").strip()
        if not name:
            continue
        values: dict[str, float] = {}
        bad = ""
        for column in PRICE_COLUMNS:
            raw = row.get(column)
            try:
                value = float(raw) if raw is not None else math.nan
            except (TypeError, ValueError):
                value = math.nan
            if not math.isfinite(value) or value < 0:
                bad = column
                break
            values[column] = value
        if bad:
            errors.append(f"{name}: {bad} must be a number >= 0")
            continue
        out.append((name, ModelPrices(**values)))
    return tuple(out), errors


def analysis_triggers(config: LabConfig) -> Trigger | Mapping[str, Any] | list[Trigger]:
    """The triggers that start the configuration (what the re-trigger guard projects)."""
    if config.mode == "compact":
        n = config.compact.trigger_tokens
        return [always] if n is None else [tokens_exceed(n)]
    return config.strategy_config()


def analysis_tokenizer(index: MessageIndex) -> Tokenizer:
    """The index's tokenizer, answering known texts from the index's own counts."""
    if type(index.tokenizer) is CharEstimator:
        return index.tokenizer
    return memo_tokenizer(index)


def analysed_result(outcome: RunOutcome) -> Any:
    """What a run's analysis reads: in ``compact()`` mode the real ``CompactResult`` (its
    replaced range and summarizer usage), otherwise the engine result (None: no result)."""
    if outcome.config.mode == "compact" and outcome.compact is not None:
        return outcome.compact
    return outcome.result


def judge(
    outcome: RunOutcome, report: CompactionReport | None, fixes: FixSearch | None = None
) -> Verdict | None:
    """The one verdict of a run (:func:`compactlens.verdict`) every surface of the
    inspector shows: of :func:`analysed_result`, with ``report`` (its analysis; None: the
    checks it answers read "not measured") and the guards' provider when the report
    checked it; ``fixes``, a fix search whose best fix is the next step of a run that does
    not fit. None for a configuration error.

    An engine run planned without its explanation (the live preview) is judged with the
    target and smallest target that explanation would hold (the configuration's target;
    the tokens the run reached)."""
    judged = analysed_result(outcome)
    if judged is None:
        return None
    # The transcript's own API when its messages say (a Claude Code log: Anthropic), else
    # the guards' provider: the same rule as every other surface's verdict.
    provider = verdict_provider(
        report.own_provider if report is not None else None,
        outcome.guards.provider if outcome.guards is not None else None,
    )
    if report is None or provider not in report.providers:
        provider = None
    if isinstance(judged, CompactionResult) and judged.status != "unchanged":
        ex = judged.explanation
        if ex.target_tokens is None:
            smallest = judged.tokens_after if judged.status == "cannot-fit" else None
            filled = replace(
                ex, target_tokens=outcome.config.target_tokens, smallest_target=smallest
            )
            judged = replace(judged, explanation=filled)
    # compact() counts messages, not groups: its plan's groups, as the page's cards show.
    groups = (
        group_counts(outcome.result)
        if isinstance(judged, CompactResult) and outcome.result is not None
        else None
    )
    return verdict(judged, report, provider=provider, fixes=fixes, groups=groups)


def run_overview(
    index: MessageIndex, outcome: RunOutcome, settings: AnalysisSettings
) -> AnalysisOverview | None:
    """The quick part of a run's analysis (:func:`compactlens.analysis.analyze_overview`:
    tokens, prompt cache, re-trigger, protocol; None for a configuration error)."""
    if outcome.result is None:
        return None
    return analyze_overview(
        index.messages,
        analysed_result(outcome),
        triggers=analysis_triggers(outcome.config),
        context_window=settings.context_window,
        prices=settings.chosen,
        model=settings.model,
        further_turns=settings.further_turns,
        tokenizer=analysis_tokenizer(index),
    )


def run_facts(
    index: MessageIndex, outcome: RunOutcome, fact_cache: dict[int, list[Fact]] | None = None
) -> FactReport | None:
    """Fact survival of a run (:func:`compactlens.analysis.analyze_facts`; the slow part).
    ``fact_cache``: one dict per transcript, so a new configuration extracts no fact it
    extracted before. It does not depend on the analysis settings."""
    if outcome.result is None:
        return None
    return analyze_facts(index.messages, analysed_result(outcome), fact_cache=fact_cache)


def run_analysis(
    index: MessageIndex,
    outcome: RunOutcome,
    settings: AnalysisSettings,
    fact_cache: dict[int, list[Fact]] | None = None,
) -> CompactionReport | None:
    """:func:`compactlens.analysis.analyze` of a run (None for a configuration error):
    :func:`run_overview` completed with :func:`run_facts`."""
    overview = run_overview(index, outcome, settings)
    facts = run_facts(index, outcome, fact_cache)
    if overview is None or facts is None:
        return None
    return overview.with_facts(facts)


# -- views ---------------------------------------------------------------------------------------

LatestState = Literal["none", "kept", "survived", "lost"]


@dataclass(frozen=True, slots=True)
class LatestRequest:
    """What happened to the latest user request (the message an agent is working on)."""

    index: int | None
    state: LatestState
    text: str

    @property
    def words(self) -> str:
        where = f"message {self.index}" if self.index is not None else ""
        return {
            "none": "There is no user request with text in this history.",
            "kept": f"The latest user request ({where}) is kept verbatim.",
            "survived": f"The latest user request ({where}) was compacted, and its text "
            "survives verbatim in the compacted history.",
            "lost": f"The latest user request ({where}) was compacted and its text does not "
            "survive verbatim: the model may not know what it is working on.",
        }[self.state]


def latest_request(index: MessageIndex, report: CompactionReport) -> LatestRequest:
    at = latest_user_request(index.messages)
    if at is None:
        return LatestRequest(None, "none", "")
    text = index.messages[at].text
    if at not in report.facts.affected_messages:
        return LatestRequest(at, "kept", text)
    return LatestRequest(at, "lost" if report.facts.latest_request_lost else "survived", text)


def lost_fact_rows(report: CompactionReport) -> list[dict[str, Any]]:
    """One row per lost fact: its text, kind, source message and where in it."""
    return [
        {
            "fact": f.value,
            "kind": f.kind.replace("_", " "),
            "message": f.message_index,
            "role": f.role,
            "found in": f.source.replace("_", " "),
        }
        for f in report.facts.lost
    ]


def kind_rows(report: CompactionReport) -> list[dict[str, Any]]:
    """Recall per fact kind (``recall`` in percent)."""
    return [
        {
            "kind": k.kind.replace("_", " "),
            "extracted": k.extracted,
            "survived": k.survived,
            "recall": round(k.recall * 100),
        }
        for k in report.facts.by_kind()
    ]


def problem_rows(
    report: CompactionReport | AnalysisOverview,
    roles: Sequence[str],
    *,
    introduced_only: bool = False,
) -> list[dict[str, Any]]:
    """Protocol problems of the compacted request, with where they are and whether the
    compaction introduced them (``roles``: the compacted messages' roles, for the location)."""
    introduced = set(report.introduced)
    rows: list[dict[str, Any]] = []
    for p in report.problems:
        new = p in introduced
        if introduced_only and not new:
            continue
        role = roles[p.message_index] if 0 <= p.message_index < len(roles) else ""
        rows.append(
            {
                "provider": p.provider,
                "kind": p.kind.replace("_", " "),
                "severity": p.severity,
                "location": f"message {p.message_index}" + (f" ({role})" if role else ""),
                "message": p.message_index,
                "call id": p.call_id or "",
                "introduced": new,
                "detail": p.detail,
            }
        )
    return rows


def turns_text(report: CompactionReport | AnalysisOverview) -> str:
    """Turns until a trigger fires again, in a few words."""
    r = report.retrigger
    if not r.triggers:
        return "no trigger"
    if r.growth.source == "none" and r.turns_until_trigger is None:
        # Too few user turns to tell a typical turn: not estimated, as the verdict says
        # (a dash: the card's help says why, and "not estimated" is cut in a narrow card).
        return "—"
    # An agent log is projected per agent step (too few user turns): say so in the card.
    unit = "" if r.growth.unit == "turn" else " step" if r.turns_until_trigger == 1 else " steps"
    if r.turns_until_trigger is None:
        return f"> {num(r.horizon)}{unit}"
    return f"{num(r.turns_until_trigger)}{unit}"


def recall_text(report: CompactionReport) -> str:
    facts = report.facts
    return share(facts.recall) if facts.extracted else "—"


def source_text(index: MessageIndex, message_index: int) -> str:
    """The source message of a fact as plain text (shown inert, never as Markdown)."""
    return render_message(index.messages[message_index], message_index, call_names(index))


def analysis_json(report: CompactionReport, settings: AnalysisSettings) -> str:
    """The analysis as JSON: the settings it used and :meth:`CompactionReport.to_dict`."""
    doc = {"settings": settings.to_dict(), "analysis": report.to_dict()}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


# -- the analysis as the verdict judges it ---------------------------------------------------

#: The verdict's checks of protocol problems.
PROTOCOL_CHECKS = ("provider-errors", "provider-warnings")

#: The verdict check that judges each of the analysis' own findings, by how the finding
#: begins (the findings are the analysis' sentences; the verdict says which are costs).
_FINDING_CHECKS = (
    ("the latest user request", "latest-request"),
    ("the compacted history already triggers", "next-compaction"),
    ("compaction would fire again", "next-compaction"),
    ("the first compaction is due", "next-compaction"),
    ("the system prompt is dropped", "system-prompt"),
    ("compaction introduced", "provider-errors"),
    ("at these prices", "cache"),
    ("the compacted history uses", "context-window"),
)


def finding_check(finding: str) -> str | None:
    """The verdict check that judges ``finding`` (None: no check does, so it is a note)."""
    if " lost (recall " in finding:
        return "fact-recall"
    return next((code for start, code in _FINDING_CHECKS if finding.startswith(start)), None)


def split_findings(findings: Sequence[str], judged: Verdict | None) -> tuple[list[str], list[str]]:
    """(costs, notes): the findings whose verdict check names a cost, and the others. With
    no verdict every finding is a note: only the verdict says what a cost is."""
    failed = {r.code for r in judged.reasons if r.level != "safe"} if judged else set()
    costs = [f for f in findings if finding_check(f) in failed]
    return costs, [f for f in findings if f not in costs]


@dataclass(frozen=True, slots=True)
class ProtocolCard:
    """The new protocol problems as the verdict judges them: the count, whether they are
    a cost (warning colour) or a note (neutral), and the verdict's own sentences."""

    count: int
    cost: bool
    words: tuple[str, ...]

    @property
    def delta(self) -> str | None:
        """The card's second line: ``a cost`` or ``a note, not a cost`` (none for none)."""
        if not self.count:
            return None
        return "a cost" if self.cost else "a note, not a cost"


def protocol_card(judged: Verdict | None) -> ProtocolCard:
    """The verdict's protocol checks in short (none when there is no verdict)."""
    if judged is None:
        return ProtocolCard(0, False, ())
    n = judged.numbers
    reasons = [r for r in judged.reasons if r.code in PROTOCOL_CHECKS]
    return ProtocolCard(
        count=(n.provider_errors or 0) + (n.provider_warnings or 0),
        cost=any(r.level != "safe" for r in reasons),
        words=tuple(r.text for r in reasons),
    )
