"""The cannot-fit debugger: explanations and verified single-parameter suggestions; corpus runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compactlens import (
    ExtractiveSummarizer,
    compact,
    estimate_tokens,
    explain_cannot_fit,
    validate_pairing,
)
from compactlens.model import SUMMARY_PREFIX
from compactlens.summarizers import FakeSummarizer
from compactlens.summarizers.extractive import HEADER


def test_summary_too_large_smallest_target_is_exact(b: Any) -> None:
    history = b.chat(10, size=80)
    text = "long summary " * 80
    result = compact(history, summarizer=FakeSummarizer(text=text), target_tokens=300)
    assert result.reason == "summary-too-large"
    explanation = explain_cannot_fit(history, result, target_tokens=300)
    assert explanation.reason == "summary-too-large"
    assert explanation.smallest_fitting_target == result.candidate_tokens
    target_fix = next(s for s in explanation.suggestions if s.parameter == "target_tokens")
    assert target_fix.fits and target_fix.verified_with == "replayed summary"
    # the claim is checked: one token less does not fit
    again = compact(
        history, summarizer=FakeSummarizer(text=text), target_tokens=target_fix.value - 1
    )
    assert again.reason == "summary-too-large"
    assert any("summary-too-large" in line for line in explanation.lines)


def test_protected_history_suggests_target_and_keep(b: Any) -> None:
    history = b.chat(10, size=120)
    result = compact(history, summarizer=FakeSummarizer(), target_tokens=150)
    assert result.reason == "protected-history"
    explanation = explain_cannot_fit(history, result, target_tokens=150)
    assert explanation.minimum_target_tokens == (result.candidate_tokens or 0) + 1
    by_param = {s.parameter: s for s in explanation.suggestions}
    assert by_param["target_tokens"].fits
    keep_fix = by_param.get("keep_last_messages")
    if keep_fix is not None:
        rerun = compact(
            history,
            summarizer=ExtractiveSummarizer(),
            target_tokens=150,
            keep_last_messages=keep_fix.value,
        )
        assert rerun.status == "compacted"
    assert json.dumps(explanation.to_dict())


def test_no_safe_boundary_suggests_a_smaller_keep(b: Any) -> None:
    history = b.chat(6)
    result = compact(
        history, summarizer=FakeSummarizer(), target_tokens=10_000, keep_last_messages=6
    )
    assert result.reason == "no-safe-boundary"
    explanation = explain_cannot_fit(history, result, target_tokens=10_000, keep_last_messages=6)
    assert [s.parameter for s in explanation.suggestions] == ["keep_last_messages"]
    assert explanation.suggestions[0].value == 5 and explanation.suggestions[0].fits
    assert explanation.minimum_target_tokens is None
    assert (
        "protected suffix: the newest 6 messages kept verbatim (messages 1–6)" in explanation.lines
    )


def test_no_safe_boundary_nothing_helps(b: Any) -> None:
    history = [b.sys(), b.call("stuck"), *b.chat(4, system=False)]
    result = compact(
        history, summarizer=FakeSummarizer(), target_tokens=10_000, keep_last_messages=1
    )
    explanation = explain_cannot_fit(history, result, target_tokens=10_000, keep_last_messages=1)
    assert explanation.suggestions == ()
    assert "unresolved call id stuck at 1" in explanation.lines
    assert any("no single change" in line for line in explanation.lines)


def test_rejected_output_gets_no_parameter_suggestion(b: Any) -> None:
    history = b.chat(10)
    result = compact(
        history, summarizer=FakeSummarizer(finish_reason="length"), target_tokens=10_000
    )
    explanation = explain_cannot_fit(history, result, target_tokens=10_000)
    assert explanation.suggestions == ()
    assert any("no parameter change" in line for line in explanation.lines)


def test_explain_runs_compact_itself_with_the_extractive_default(b: Any) -> None:
    explanation = explain_cannot_fit(b.chat(10, size=200), target_tokens=50)
    assert explanation.reason == "protected-history"


def test_corpus_transcripts_compact_safely(corpus_files: list[Path]) -> None:
    """Real agent transcripts: the extractive summarizer halves them without breaking pairs."""
    checked = 0
    for path in corpus_files:
        messages = json.loads(path.read_text(encoding="utf-8"))["messages"]
        try:
            before = estimate_tokens(messages)
        except TypeError:
            continue  # media: needs a custom counter
        target = max(before // 2, 1)
        result = compact(
            messages, summarizer=ExtractiveSummarizer(), target_tokens=target, keep_last_messages=4
        )
        if result.status == "compacted":
            checked += 1
            assert result.tokens.after <= target
            summary = result.messages[result.summary_index]
            assert summary["role"] == "user"
            assert summary["content"].startswith(SUMMARY_PREFIX + HEADER)
            before_problems = {(p.kind, p.call_id) for p in validate_pairing(messages)}
            for problem in validate_pairing(result.messages):
                assert problem.kind in ("unresolved_call", "orphan_result", "duplicate_id")
                assert (problem.kind, problem.call_id) in before_problems, (path.name, problem)
        else:
            assert result.reason in ("no-safe-boundary", "protected-history"), path.name
    assert checked >= len(corpus_files) // 2
