"""Every corpus transcript, compacted, read back by every format's own package.

Each real transcript (canonical files and ``original_format/``) is compacted with
tool-result collapse and with summarization, then written in every format that has a
package (its own and each conversion) and read by that package (:mod:`readers`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from readers import READERS

from compactlens import (
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    apply_compaction,
    load_transcript,
    tokens_exceed,
)
from compactlens.engine import Strategy
from compactlens.summarizers.testing import FakeSummarizer

STRATEGIES: dict[str, Callable[[], Strategy]] = {
    "tool-result-collapse": lambda: ToolResultCompactionStrategy(
        skip_if_larger=False, keep_last_tool_call_groups=0, minimum_preserved=1
    ),
    "summarization": lambda: SummarizationStrategy(
        summarizer=FakeSummarizer("summary of the earlier work"),
        trigger=tokens_exceed(1),
        minimum_preserved=1,
    ),
}


def _all_corpus_files(corpus_files: list[Path]) -> list[Path]:
    originals = corpus_files[0].parent / "original_format"
    extra = sorted(p for p in originals.iterdir() if p.is_file()) if originals.is_dir() else []
    return [*corpus_files, *extra]


@pytest.mark.slow
@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_compacted_corpus_is_read_back_in_every_format(
    corpus_files: list[Path], strategy: str
) -> None:
    failures: list[str] = []
    checked = 0
    for path in _all_corpus_files(corpus_files):
        transcript = load_transcript(path)
        result = apply_compaction(list(transcript.messages), STRATEGIES[strategy]())
        compacted = transcript.with_messages(result.messages)
        for fmt, read in READERS.items():
            items, _ = compacted.to_wire(fmt)
            try:
                read(json.loads(json.dumps(items)))
            except Exception as exc:
                failures.append(f"{path.name} -> {fmt}: {type(exc).__name__}: {exc}"[:300])
            checked += 1
    assert not failures, "\n".join(failures)
    assert checked >= len(READERS)
