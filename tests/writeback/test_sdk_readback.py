"""Compacted and converted transcripts are read back by each format's own package.

For every format we write that has a package (see :mod:`readers`), a transcript in
that format is compacted with strategies that create messages (tool-result collapse,
summarization, the one-shot ``compact()``), dumped in its own format, and read back
by the real parser or types. Conversions between these formats are read back too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from readers import READERS
from sources import source_documents, web_search_document

from compactlens import (
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    apply_compaction,
    compact,
    load_transcript,
    tokens_exceed,
)
from compactlens.engine import Strategy
from compactlens.summarizers.testing import FakeSummarizer

SOURCES = source_documents()
FORMATS = sorted(SOURCES)
SUMMARY = "The build failed in test_utils; parse() was fixed and the suite passes."


def _collapse() -> Strategy:
    return ToolResultCompactionStrategy(
        skip_if_larger=False, keep_last_tool_call_groups=0, minimum_preserved=1
    )


def _summarize() -> Strategy:
    return SummarizationStrategy(
        summarizer=FakeSummarizer(SUMMARY), trigger=tokens_exceed(1), minimum_preserved=1
    )


STRATEGIES: dict[str, Callable[[], Strategy]] = {
    "tool-result-collapse": _collapse,
    "summarization": _summarize,
}


def _as_json(value: Any) -> Any:
    """What a reader of the written file gets."""
    return json.loads(json.dumps(value))


def _document(fmt: str) -> Any:
    return SOURCES[fmt][1]


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_input_is_accepted_by_its_own_package(fmt: str) -> None:
    assert READERS[fmt](_as_json(_document(fmt))) > 0


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("fmt", FORMATS)
def test_compacted_output_is_read_back_by_the_formats_package(fmt: str, strategy: str) -> None:
    transcript = load_transcript(_document(fmt), fmt)
    result = apply_compaction(list(transcript.messages), STRATEGIES[strategy]())
    created = [m for m in result.messages if m.wire is None]
    assert created, f"{strategy} created no message for {fmt}: nothing to check"
    document, _ = transcript.with_messages(result.messages).to_document()
    read = READERS[fmt](_as_json(document))
    assert read >= len(created)


def _count(messages: Any) -> int:
    return len(json.dumps(messages, default=str)) // 4


@pytest.mark.parametrize("fmt", FORMATS)
def test_one_shot_compact_output_is_read_back(fmt: str) -> None:
    # The AI SDK parts fixture is media almost everywhere (pins); the web search one is not.
    document = web_search_document() if fmt == "ai-sdk" else _document(fmt)
    transcript = load_transcript(document, fmt)
    items, _ = transcript.to_wire()
    if fmt == "claude-code":
        items = [i for i in items if i.get("type") in ("user", "assistant")]
    result = compact(
        items,
        summarizer=FakeSummarizer(SUMMARY),
        target_tokens=_count(items),
        keep_last_messages=2,
        count_tokens=_count,
        format=fmt,
    )
    assert result.status == "compacted", result.detail
    assert READERS[fmt](_as_json(result.messages)) == len(result.messages)


@pytest.mark.parametrize(("source", "target"), [(s, t) for s in FORMATS for t in FORMATS if s != t])
def test_conversions_are_read_back_by_the_target_formats_package(source: str, target: str) -> None:
    converted = load_transcript(_document(source), source).convert(target)
    document, _ = converted.to_document()
    assert READERS[target](_as_json(document)) > 0
