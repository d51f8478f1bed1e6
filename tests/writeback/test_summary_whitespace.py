"""The summary emptiness rule: JavaScript ``trim()`` whitespace, in the contract and the engine."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactlens.compact import compact
from compactlens.model.whitespace import JS_WHITESPACE, js_trim, summary_text
from compactlens.summarizers.testing import FakeSummarizer

#: Where Python's str.strip() and JavaScript's trim() disagree.
PY_ONLY = "\x1c\x1d\x1e\x1f\x85"  # strip() removes them, trim() keeps them
JS_ONLY = "\ufeff"  # trim() removes it, strip() keeps it


def _history() -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    for i in range(8):
        turns.append({"role": "user", "content": f"question {i} " + "words " * 60})
        turns.append({"role": "assistant", "content": f"answer {i} " + "words " * 60})
    return turns


def test_the_set_is_the_ecmascript_white_space_and_line_terminators() -> None:
    assert set(PY_ONLY).isdisjoint(JS_WHITESPACE)
    assert JS_ONLY in JS_WHITESPACE
    assert {"\t", "\n", "\v", "\f", "\r", " ", "\xa0", "\u2028", "\u2029", "\u3000"} <= set(
        JS_WHITESPACE
    )


@given(st.text(alphabet=st.characters(blacklist_characters=PY_ONLY + JS_ONLY)))
def test_js_trim_equals_strip_away_from_the_six_characters(text: str) -> None:
    assert js_trim(text) == text.strip()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\ufeff", ""),
        ("\ufeff summary \ufeff", "summary"),
        ("\x85", "\x85"),
        ("\x1c summary\x1f", "\x1c summary\x1f"),
        (" \n\t", ""),
        (None, ""),
        (42, ""),
    ],
)
def test_summary_text(text: object, expected: str) -> None:
    assert summary_text(text) == expected


def test_a_bom_only_summary_is_empty_for_the_contract() -> None:
    result = compact(_history(), summarizer=FakeSummarizer("\ufeff\n"), target_tokens=600)
    assert result.status == "cannot-fit"
    assert result.reason == "empty-summary"


@pytest.mark.parametrize("kept", ["\x85", "\x1c"])
def test_a_summary_python_would_strip_away_is_kept_as_javascript_does(kept: str) -> None:
    result = compact(_history(), summarizer=FakeSummarizer(f" {kept} "), target_tokens=600)
    assert result.status == "compacted", result.detail
    assert result.summary == kept


def test_the_kept_summary_is_trimmed_with_the_same_rule() -> None:
    result = compact(
        _history(), summarizer=FakeSummarizer("\ufeffthe summary\u3000"), target_tokens=600
    )
    assert result.status == "compacted", result.detail
    assert result.summary == "the summary"


def _engine_summary(text: str) -> list[str]:
    from compactlens import SummarizationStrategy, apply_compaction, tokens_exceed

    strategy = SummarizationStrategy(
        summarizer=FakeSummarizer(text), trigger=tokens_exceed(1), minimum_preserved=1
    )
    result = apply_compaction(_history(), strategy)
    return [m["content"] for m in result.messages if str(m["content"]).startswith("Previous conv")]


def test_the_summarization_strategy_rejects_a_bom_only_summary() -> None:
    assert _engine_summary("\ufeff") == []


def test_the_summarization_strategy_keeps_what_javascript_keeps() -> None:
    assert _engine_summary(" \x85 ") == ["Previous conversation summary:\n\x85"]
