"""Notebook views of analysis values: the display cards of a compaction report and a corpus
report, and the corpus report's DataFrame."""

from __future__ import annotations

from collections import Counter
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from compactlens.analysis.protocol import provider_words
from compactlens.engine.vocabulary import plural
from compactlens.model import Card, data_frame

if TYPE_CHECKING:
    from compactlens.analysis.corpus import CorpusReport, CorpusRow
    from compactlens.analysis.fixes import FixSearch
    from compactlens.analysis.report import CompactionReport
    from compactlens.analysis.verdict import Verdict


def report_card(report: CompactionReport, *, search: bool = True) -> Card:
    """The notebook card of ``report``, coloured and headed by the verdict of its run.
    ``search``: give the run's next step from the fix search when the report kept the
    strategy (:func:`~compactlens.analysis.searched_step`); False for the one-line text,
    which shows no step."""
    facts = report.facts
    cache = report.cache
    retrigger = report.retrigger
    turns = retrigger.turns_until_trigger
    tokens = plural(cache.prefix_tokens, "token")
    if cache.prefix_messages == 0:
        cached = "nothing stays cached"
    elif cache.prefix_messages == 1:  # not "the first 1 message"
        cached = f"the first message ({tokens}) stays cached"
    else:
        cached = f"the first {cache.prefix_messages:,} messages ({tokens}) stay cached"
    horizon = (
        f"not within {retrigger.horizon:,} turns"
        if retrigger.checked
        else "not checked (no trigger given)"
    )
    lines = [
        ("facts kept", f"{facts.survived:,} of {facts.extracted:,} ({facts.recall:.0%})"),
        ("prompt cache", cached),
        ("next trigger", f"in {plural(turns, 'turn')}" if turns is not None else horizon),
        ("new protocol problems", _introduced_words(report)),
    ]
    card = Card(
        title="CompactionReport",
        status=report.status,
        tokens_before=report.tokens_before,
        tokens_after=report.tokens_after,
        facts=tuple(lines),
        reason=report.warnings[0] if report.warnings else (report.reason or ""),
    )
    judged = _verdict_of(report)
    if judged is None:
        return card
    from compactlens.analysis.fix_verdicts import searched_step
    from compactlens.analysis.verdict import LEVEL_COLORS, card_step

    # The verdict of the run this report measured: its level colours the badge and the
    # edge, its headline is the badge. Its next step is the run's one: the verdict's own
    # when it needs no fix search, else the search's when the report kept the run's
    # strategy (analyze(..., triggers=strategy)), else the pointer to debug().
    searched = searched_step(report, judged) if search and not judged.step_final else None
    label, step = searched if searched is not None else card_step(judged)
    return replace(
        card,
        status=judged.headline,
        status_color=LEVEL_COLORS[judged.level],
        accent=LEVEL_COLORS[judged.level],
        fix=step,
        fix_label=label,
    )


def _verdict_of(report: CompactionReport) -> Verdict | None:
    """The verdict of ``report.run`` with ``report`` (None when the report was built
    without its run, or for another run)."""
    from compactlens.analysis.verdict import verdict
    from compactlens.model.errors import CompactlensError

    if report.run is None:
        return None
    try:
        return verdict(report.run, report)
    except CompactlensError:
        return None


def _introduced_words(report: CompactionReport) -> str:
    """The protocol problems the compaction introduced, errors (requests a provider
    rejects) apart from warnings (requests it silently changes), for the providers
    checked, in words: "0 errors, 75 warnings (OpenAI Chat Completions and Anthropic)"."""
    errors = sum(1 for p in report.introduced if p.severity == "error")
    warnings = len(report.introduced) - errors
    counted = f"{plural(errors, 'error')}, {plural(warnings, 'warning')}"
    names = [provider_words(p) for p in report.providers]
    if not names:
        return counted
    who = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{counted} ({who})"


def corpus_card(report: CorpusReport) -> Card:
    statuses = Counter(row.status for row in report.rows)
    before = sum(row.tokens_before or 0 for row in report.rows)
    after = sum(row.tokens_after or 0 for row in report.rows)
    lines = [
        ("transcripts", f"{len(report.rows):,} ({report.processed:,} run now)"),
        ("statuses", ", ".join(f"{n:,} {status}" for status, n in statuses.most_common())),
        ("engine", f"{report.engine}, {report.jobs:,} jobs, {report.duration_s:.1f} s"),
    ]
    failed = report.failed
    return Card(
        title="CorpusReport",
        tokens_before=before,
        tokens_after=after,
        facts=tuple(lines),
        reason=f"{failed[0].file}: {failed[0].error}" if failed else "",
    )


def corpus_frame(rows: tuple[CorpusRow, ...]) -> Any:
    """One row per transcript, the columns of the corpus table."""
    from compactlens.analysis.corpus import CorpusRow

    columns = [f.name for f in fields(CorpusRow)]
    integers = [
        name for name in columns if name.startswith(("messages_", "tokens_", "facts_", "cache_"))
    ]
    integers += ["break_even_turn", "turns_until_trigger", "problems", "problems_introduced"]
    return data_frame([row.to_dict() for row in rows], columns, integers=integers)


#: Columns of a compaction report's frame: one row per fact checked.
FACT_COLUMNS = ("kind", "value", "message", "role", "source", "survived")
#: Columns of a fix search's frame: one row per ranked fix.
FIX_COLUMNS = (
    "rank",
    "change",
    "fits",
    "tokens_after",
    "target_tokens",
    "recall",
    "request_kept",
    "errors_introduced",
    "groups_dropped",
    "groups_changed",
    "turns_until_trigger",
    "destructive",
)


def fact_frame(report: CompactionReport) -> Any:
    rows = [
        {
            "kind": str(check.fact.kind),
            "value": check.fact.value,
            "message": check.fact.message_index,
            "role": check.fact.role,
            "source": str(check.fact.source),
            "survived": check.survived,
        }
        for check in report.facts.checks
    ]
    return data_frame(rows, FACT_COLUMNS, integers=("message",))


def fix_frame(search: FixSearch) -> Any:
    rows = [
        {
            "rank": rank,
            "change": fix.summary,
            "fits": fix.fits,
            "tokens_after": fix.tokens_after,
            "target_tokens": fix.target_tokens,
            "recall": fix.recall,
            "request_kept": fix.request_kept,
            "errors_introduced": fix.errors_introduced,
            "groups_dropped": fix.groups_dropped,
            "groups_changed": fix.groups_changed,
            "turns_until_trigger": fix.turns_until_trigger,
            "destructive": fix.destructive,
        }
        for rank, fix in enumerate(search.fixes, 1)
    ]
    return data_frame(rows, FIX_COLUMNS, integers=("target_tokens", "turns_until_trigger"))
