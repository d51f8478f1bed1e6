"""The export files: compacted transcript, events JSONL, configuration JSON, snippet, report,
analysis JSON.

Plain functions returning bytes or text; the Export page only offers them for download.
No API key is ever part of an export. No Streamlit here.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any

from compactlens import MessageIndex
from compactlens.analysis import CompactionReport, Verdict
from compactlens_inspector.exports.report import build_report
from compactlens_inspector.exports.snippet import config_to_snippet, safe_base_url
from compactlens_inspector.lab.config import LabConfig, SummarizerSettings
from compactlens_inspector.lab.runs import RunOutcome
from compactlens_inspector.serving.loader import LoadedTranscript
from compactlens_inspector.views.analysis import AnalysisSettings
from compactlens_inspector.views.analysis import analysis_json as _analysis_json


def stem(name: str) -> str:
    """A file-name-safe stem of a transcript name."""
    base = PurePath(name).stem or "transcript"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in base)
    return safe[:80] or "transcript"


def compacted_transcript(loaded: LoadedTranscript, outcome: RunOutcome) -> bytes:
    """The compacted transcript in the format it was loaded in."""
    if outcome.result is None:
        raise ValueError(outcome.error or "the configuration has an error")
    return loaded.emit(outcome.result.projection)


def events_jsonl(outcome: RunOutcome) -> str:
    """One JSON object per line: ``started``, each stage event, then ``completed``/``failed``."""
    r = outcome.result
    if r is None:
        return json.dumps({"type": "error", "error": outcome.error}) + "\n"
    lines: list[dict[str, Any]] = [
        {
            "type": "started",
            "strategy": r.strategy,
            "tokenizer": r.tokenizer,
            "tokens_before": r.tokens_before,
            "messages_before": r.messages_before,
        }
    ]
    for e in r.events:
        lines.append({"type": "stage", **e.to_dict()})
    lines.append(
        {
            "type": "failed" if r.status == "cannot-fit" else "completed",
            "status": r.status,
            "reason": r.reason,
            "tokens_before": r.tokens_before,
            "tokens_after": r.tokens_after,
            "messages_after": r.messages_after,
            "duration_ms": round(r.duration_ms, 3),
        }
    )
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def config_json(config: LabConfig, *, tokenizer: str, summarizer: SummarizerSettings) -> str:
    """The configuration as JSON: the inspector's form and the compactlens strategy config."""
    summ = summarizer.to_dict()
    if "base_url" in summ:
        summ["base_url"] = safe_base_url(summ["base_url"])
    doc: dict[str, Any] = {
        "inspector": config.to_dict(),
        "tokenizer": tokenizer,
        "summarizer": summ,
    }
    if config.mode == "pipeline" and config.stages:
        doc["strategy"] = config.strategy_config()
    return json.dumps(doc, indent=2) + "\n"


def snippet(
    config: LabConfig, *, tokenizer: str, summarizer: SummarizerSettings, transcript_name: str
) -> str:
    return config_to_snippet(
        config, tokenizer=tokenizer, summarizer=summarizer, transcript_path=transcript_name
    )


def analysis_json(report: CompactionReport, settings: AnalysisSettings) -> str:
    """The analysis (facts, cache and cost, re-trigger, protocol) and its settings as JSON."""
    return _analysis_json(report, settings)


def report_html(
    loaded: LoadedTranscript,
    index: MessageIndex,
    outcome: RunOutcome,
    *,
    summarizer: SummarizerSettings,
    analysis: CompactionReport | None = None,
    analysis_settings: AnalysisSettings | None = None,
    verdict: Verdict | None = None,
) -> str:
    return build_report(
        loaded,
        index,
        outcome,
        summarizer=summarizer,
        analysis=analysis,
        analysis_settings=analysis_settings,
        verdict=verdict,
    )
