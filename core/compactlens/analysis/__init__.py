"""Compaction analysis: fact survival, prompt-cache impact, re-trigger guard, protocol checks.

:func:`analyze` measures one compaction result; :func:`verdict` turns a result and that
report into the one verdict every surface shows; :func:`run_corpus_report` runs one
configuration over a folder of transcripts and writes a table.
"""

from __future__ import annotations

from compactlens.analysis.budget import (
    BudgetPart,
    budget_breakdown,
    compact_budget,
    protection_label,
    unique_protections,
)
from compactlens.analysis.cache import (
    DEFAULT_MODEL,
    DEFAULT_PRICES,
    CacheImpact,
    CostEstimate,
    ModelPrices,
    cache_impact,
    common_prefix,
    estimate_cost,
    price_table,
    prices_for,
)
from compactlens.analysis.corpus import (
    CorpusConfig,
    CorpusReport,
    CorpusRow,
    read_rows,
    run_corpus_report,
    write_rows,
)
from compactlens.analysis.facts import (
    FACT_KIND_LABELS,
    FACT_KINDS,
    MINOR_KIND_LABELS,
    Fact,
    FactCheck,
    FactReport,
    extract_facts,
    fact_survival,
    latest_user_request,
    minor_kind,
)
from compactlens.analysis.fix_verdicts import (
    improves,
    judge_fix,
    judge_fixes,
    judge_run,
    listed_fixes,
    next_step,
)
from compactlens.analysis.fixes import (
    DEFAULT_MIN_RECALL,
    Change,
    Fix,
    FixSearch,
    measure,
    retarget,
    search_fixes,
)
from compactlens.analysis.judge import JUDGE_LABEL, JudgeScore, judge_survival
from compactlens.analysis.postmortem import (
    REFERENCE_LABEL,
    CompactionPostmortem,
    Outcome,
    Postmortem,
    StrategyFactory,
    agent_kept,
    postmortem,
    reference_config,
    reference_pipeline,
)
from compactlens.analysis.protocol import PROVIDERS, ProtocolProblem, check_protocol
from compactlens.analysis.report import (
    AnalysisOverview,
    CompactionReport,
    analyze,
    analyze_facts,
    analyze_overview,
)
from compactlens.analysis.retrigger import (
    Growth,
    HistoryMetrics,
    RetriggerEstimate,
    estimate_retrigger,
    growth_from_index,
    strategy_triggers,
)
from compactlens.analysis.verdict import Level as VerdictLevel
from compactlens.analysis.verdict import Reason, Verdict, VerdictNumbers, percent, verdict

__all__ = [
    "DEFAULT_MIN_RECALL",
    "DEFAULT_MODEL",
    "DEFAULT_PRICES",
    "FACT_KINDS",
    "FACT_KIND_LABELS",
    "JUDGE_LABEL",
    "MINOR_KIND_LABELS",
    "PROVIDERS",
    "REFERENCE_LABEL",
    "AnalysisOverview",
    "BudgetPart",
    "CacheImpact",
    "Change",
    "CompactionPostmortem",
    "CompactionReport",
    "CorpusConfig",
    "CorpusReport",
    "CorpusRow",
    "CostEstimate",
    "Fact",
    "FactCheck",
    "FactReport",
    "Fix",
    "FixSearch",
    "Growth",
    "HistoryMetrics",
    "JudgeScore",
    "ModelPrices",
    "Outcome",
    "Postmortem",
    "ProtocolProblem",
    "Reason",
    "RetriggerEstimate",
    "StrategyFactory",
    "Verdict",
    "VerdictLevel",
    "VerdictNumbers",
    "agent_kept",
    "analyze",
    "analyze_facts",
    "analyze_overview",
    "budget_breakdown",
    "cache_impact",
    "check_protocol",
    "common_prefix",
    "compact_budget",
    "estimate_cost",
    "estimate_retrigger",
    "extract_facts",
    "fact_survival",
    "growth_from_index",
    "improves",
    "judge_fix",
    "judge_fixes",
    "judge_run",
    "judge_survival",
    "latest_user_request",
    "listed_fixes",
    "measure",
    "minor_kind",
    "next_step",
    "percent",
    "postmortem",
    "price_table",
    "prices_for",
    "protection_label",
    "read_rows",
    "reference_config",
    "reference_pipeline",
    "retarget",
    "run_corpus_report",
    "search_fixes",
    "strategy_triggers",
    "unique_protections",
    "verdict",
    "write_rows",
]
