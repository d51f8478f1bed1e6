"""DataFrames: one row per group of an index, one per decision of a result, one per
transcript of a corpus report; the numbers are the library's own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    MessageIndex,
    PipelineStrategy,
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    load_transcript,
    tokens_exceed,
)
from compactlens.analysis import analyze, run_corpus_report, search_fixes
from compactlens.engine.display import result_card

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"


@pytest.fixture(scope="module")
def index() -> MessageIndex:
    return MessageIndex.build(
        load_transcript(SAMPLES / "coding_agent.json").messages, CharEstimator()
    )


def test_index_frame_has_one_row_per_group(index: MessageIndex) -> None:
    frame = index.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert len(frame) == index.total_groups
    assert frame["tokens"].sum() == index.total_tokens
    assert frame["messages"].sum() == index.total_messages
    assert list(frame["kind"]) == [g.kind.value for g in index.groups]
    assert frame["turn"].dtype == "Int64"
    calls = frame[frame["kind"] == "tool_call"]
    assert (calls["tools"] != "").all()
    by_tool = frame[frame["tools"].str.contains("bash")]
    assert len(by_tool) == sum(1 for g in index.groups if "bash" in g.tool_names)


def test_result_frame_has_one_row_per_decision_with_stage_and_reason(
    index: MessageIndex,
) -> None:
    over = tokens_exceed(3000)
    pipeline = PipelineStrategy(
        ToolResultCompactionStrategy(trigger=over),
        SummarizationStrategy(ExtractiveSummarizer(), trigger=over),
        TruncationStrategy(trigger=over, minimum_preserved=2),
    )
    result = apply_compaction(index.messages, pipeline, CharEstimator())
    frame = result.to_pandas()
    assert len(frame) == len(result.decisions)
    assert list(frame["decision"]) == [d.action for d in result.decisions]
    assert list(frame["stage"]) == [d.strategy for d in result.decisions]
    assert frame["reason"].map(bool).all()
    counts = frame["decision"].value_counts().to_dict()
    assert counts.get("kept", 0) == sum(1 for d in result.decisions if d.action == "kept")
    kept_tokens = frame.loc[frame["decision"] != "excluded", "tokens_after"].sum()
    assert kept_tokens <= result.tokens_after
    assert len(set(frame["stage"])) >= 2
    assert frame["decision_label"].value_counts().to_dict() == result_card(result).counts


def test_result_frame_labels_decisions_as_the_card_does(index: MessageIndex) -> None:
    # One vocabulary: the label column counts what the result card counts, in its words
    # ("dropped", never "excluded"); the code column stays for programs.
    strategy = TruncationStrategy(trigger=tokens_exceed(3000), minimum_preserved=2)
    result = apply_compaction(index.messages, strategy, CharEstimator())
    frame = result.to_pandas()
    codes = frame["decision"].value_counts().to_dict()
    labels = frame["decision_label"].value_counts().to_dict()
    assert codes["excluded"] > 0
    assert labels == result_card(result).counts
    assert "excluded" not in labels and labels["dropped"] == codes["excluded"]


def test_corpus_report_frame_has_one_row_per_transcript(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("coding_agent.json", "shopping_assistant.json"):
        shutil.copy(SAMPLES / name, folder / name)
    report = run_corpus_report(
        folder,
        {"compact": {"target_tokens": 2000, "keep_last_messages": 4}},
        jobs=1,
        output=tmp_path / "out.csv",
    )
    frame = report.to_pandas()
    assert sorted(frame["file"]) == sorted(row.file for row in report.rows)
    assert list(frame["tokens_after"]) == [row.tokens_after for row in report.rows]
    assert frame["tokens_before"].dtype == "Int64"
    assert "CorpusReport" in repr(report)
    assert report._repr_html_().startswith('<div class="compactlens-card"')


def test_transcript_frame_has_one_row_per_message() -> None:
    transcript = load_transcript(SAMPLES / "coding_agent.json")
    frame = transcript.to_pandas()
    assert len(frame) == len(transcript.messages)
    assert list(frame["role"]) == [m.role for m in transcript.messages]
    assert frame["chars"].sum() == sum(len(m.text) for m in transcript.messages)
    calls = sum(len(m.tool_calls) for m in transcript.messages)
    named = sum(len(c.split(", ")) for c in frame["tool_calls"] if c)
    assert calls > 0 and named == calls
    assert frame["tool_results"].sum() == sum(len(m.tool_results) for m in transcript.messages)


def test_report_frame_has_one_row_per_fact_checked() -> None:
    transcript = load_transcript(SAMPLES / "coding_agent.json")
    strategy = TruncationStrategy(tokens_exceed(3000), minimum_preserved=2)
    report = analyze(transcript, apply_compaction(transcript.messages, strategy))
    frame = report.to_pandas()
    assert len(frame) == report.facts.extracted > 0
    assert int(frame["survived"].sum()) == report.facts.survived
    assert str(frame["message"].dtype) == "Int64"


def test_fix_search_frame_has_one_row_per_fix_in_rank_order() -> None:
    stuck = load_transcript(SAMPLES / "cannot_fit_16k.json")
    strategy = TruncationStrategy(tokens_exceed(16000), minimum_preserved=4)
    result = apply_compaction(stuck.messages, strategy, CharEstimator())
    index = MessageIndex.build(stuck.messages, CharEstimator())
    search = search_fixes(index, strategy, summaries=result.summaries)
    frame = search.to_pandas()
    assert search.fixes
    assert list(frame["rank"]) == list(range(1, len(search.fixes) + 1))
    assert list(frame["change"]) == [f.summary for f in search.fixes]
    assert list(frame["tokens_after"]) == [f.tokens_after for f in search.fixes]
    assert str(frame["turns_until_trigger"].dtype) == "Int64"
