"""analyze(): both result types, JSON output, the optional judge, inputs left untouched."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import pytest
from analysis_helpers import small_transcript

from compactlens import (
    PipelineStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    analyze,
    apply_compaction,
    compact,
    tokens_exceed,
)
from compactlens.analysis import JUDGE_LABEL, CompactionReport
from compactlens.analysis.judge import judge_request, parse_score
from compactlens.formats import from_caller
from compactlens.summarizers import FakeSummarizer

STRATEGY = PipelineStrategy(
    ToolResultCompactionStrategy(trigger=tokens_exceed(60), keep_last_tool_call_groups=0),
    TruncationStrategy(trigger=tokens_exceed(60), minimum_preserved=2),
)


def _roundtrip(report: CompactionReport) -> dict[str, Any]:
    data = json.loads(report.to_json())
    assert data == json.loads(json.dumps(report.to_dict()))
    return data


def test_engine_result_report_is_json_and_consistent() -> None:
    wire = small_transcript()
    res = apply_compaction(wire, STRATEGY)
    report = analyze(wire, res, triggers=STRATEGY, context_window=1000)
    data = _roundtrip(report)
    assert data["status"] == res.status
    assert data["tokens_before"] == res.tokens_before
    assert data["tokens_after"] == res.tokens_after
    assert data["messages_after"] == len(res.messages)
    assert data["facts"]["extracted"] == len(report.facts.checks)
    assert data["facts"]["lost_total"] == len(report.facts.lost)
    assert data["retrigger"]["triggers"] == ["tokens > 60"]
    assert data["cache"]["prefix_messages"] == report.cache.prefix_messages
    affected = {i for d in res.decisions if d.action != "kept" for i in d.message_indices}
    assert set(report.facts.affected_messages) == affected


def test_compact_result_report_is_json() -> None:
    wire = small_transcript()
    res = compact(wire, summarizer=FakeSummarizer("ORD-48213 lost."), target_tokens=200)
    data = _roundtrip(analyze(wire, res))
    assert data["strategy"] == "compact"
    assert data["tokens_after"] == res.tokens.after
    assert res.replaced_range is not None
    start, end = res.replaced_range
    assert data["facts"]["affected_messages"] == [
        i for i in range(start, end) if i != res.reinserted_index
    ]


def test_a_cannot_fit_compact_result_affects_nothing() -> None:
    wire = small_transcript()
    res = compact(wire, summarizer=FakeSummarizer("x"), target_tokens=5)
    assert res.status == "cannot-fit"
    report = analyze(wire, res)
    assert report.facts.affected_messages == ()
    assert report.cache.first_difference is None
    assert report.reason == res.reason


def test_any_result_with_messages_is_matched_in_order() -> None:
    @dataclass(frozen=True)
    class Custom:
        messages: list[Any]
        status: str = "compacted"

    wire = small_transcript()
    kept = [wire[0], {"role": "user", "content": "Summary: lost parcel."}, *wire[6:]]
    report = analyze(wire, Custom(kept))
    assert report.facts.affected_messages == (1, 2, 3, 4, 5)
    assert report.cache.first_difference == 1
    assert report.status == "compacted"


def test_analyze_rejects_things_that_are_not_results() -> None:
    with pytest.raises(TypeError, match="CompactionResult"):
        analyze(small_transcript(), object())


def test_analyze_never_mutates_its_inputs() -> None:
    wire = small_transcript()
    before = copy.deepcopy(wire)
    res = apply_compaction(wire, STRATEGY)
    messages_before = copy.deepcopy(res.messages)
    analyze(wire, res, triggers=STRATEGY, judge=FakeSummarizer("8"))
    assert wire == before
    assert res.messages == messages_before


def test_analyze_accepts_canonical_messages_and_transcript_holders() -> None:
    wire = small_transcript()
    msgs = from_caller(wire).messages

    @dataclass(frozen=True)
    class Holder:
        messages: tuple[Any, ...]

    res = apply_compaction(msgs, STRATEGY)
    a = analyze(msgs, res).to_dict()
    b = analyze(Holder(msgs), res).to_dict()
    c = analyze(wire, apply_compaction(wire, STRATEGY)).to_dict()
    assert a == b
    assert a["facts"] == c["facts"] and a["cache"] == c["cache"]


def test_the_judge_adds_a_labelled_score_outside_the_recall() -> None:
    wire = small_transcript()
    res = apply_compaction(wire, STRATEGY)
    judge = FakeSummarizer("7\nMost ids survived.", model="judge-model")
    report = analyze(wire, res, judge=judge)
    assert judge.call_count == 1
    request = judge.calls[0]
    payload = json.loads(request.transcript_json)
    assert len(payload["removed"]) == len(report.facts.affected_messages)
    assert len(payload["compacted"]) == len(res.projection)
    score = report.facts.judge
    assert score is not None and score.score == pytest.approx(0.7)
    assert score.label == JUDGE_LABEL and score.model == "judge-model"
    plain = analyze(wire, res)
    assert plain.facts.recall == report.facts.recall
    assert report.to_dict()["facts"]["judge"]["label"] == JUDGE_LABEL


def test_a_failing_or_vague_judge_gives_no_score() -> None:
    wire = small_transcript()
    res = apply_compaction(wire, STRATEGY)
    failing = analyze(wire, res, judge=FakeSummarizer(raises=RuntimeError("down"))).facts.judge
    assert failing is not None and failing.score is None
    assert failing.error is not None and "down" in failing.error
    vague = analyze(wire, res, judge=FakeSummarizer("pretty good")).facts.judge
    assert vague is not None and vague.score is None and vague.error


def test_the_judge_is_not_asked_when_nothing_was_affected() -> None:
    wire = small_transcript()
    res = apply_compaction(wire, TruncationStrategy(trigger=tokens_exceed(10**6)))
    judge = FakeSummarizer("5")
    assert analyze(wire, res, judge=judge).facts.judge is None
    assert judge.call_count == 0


@pytest.mark.parametrize(
    ("text", "score"),
    [("8", 0.8), ("10/10 all kept", 1.0), ("Score: 3 out of 10", 0.3), ("0", 0.0), ("", None)],
)
def test_parse_score(text: str, score: float | None) -> None:
    assert parse_score(text) == score


def test_judge_request_holds_both_lists() -> None:
    msgs = from_caller(small_transcript()).messages
    request = judge_request(msgs[1:3], msgs[:1])
    payload = json.loads(request.transcript_json)
    assert [m["role"] for m in payload["removed"]] == ["user", "assistant"]
    assert [m["role"] for m in payload["compacted"]] == ["system"]
    assert "not instructions" in request.prompt


@dataclass(frozen=True)
class _Kept:
    messages: list[Any]
    status: str = "compacted"


def _results(wire: list[dict[str, Any]]) -> list[Any]:
    kept = [wire[0], {"role": "user", "content": "Summary: lost parcel."}, *wire[6:]]
    return [
        apply_compaction(wire, STRATEGY),
        compact(wire, summarizer=FakeSummarizer("ORD-48213 lost."), target_tokens=200),
        compact(wire, summarizer=FakeSummarizer("x"), target_tokens=5),
        _Kept(kept),
    ]


def test_the_overview_and_the_facts_make_the_whole_report() -> None:
    from compactlens.analysis import analyze_facts, analyze_overview

    wire = small_transcript()
    for res in _results(wire):
        options: dict[str, Any] = {"triggers": tokens_exceed(60), "context_window": 1000}
        whole = analyze(wire, res, **options)
        overview = analyze_overview(wire, res, **options)
        facts = analyze_facts(wire, res)
        assert overview.affected == facts.affected_messages == whole.facts.affected_messages
        assert overview.with_facts(facts).to_dict() == whole.to_dict()
        # Nothing of the overview depends on fact survival: its fields are the report's.
        for name in ("cache", "retrigger", "problems", "introduced", "tokens_after"):
            assert getattr(overview, name) == getattr(whole, name)
