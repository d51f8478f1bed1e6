"""Every strategy, with a few settings, over every real transcript of the shared corpus.

The corpus is read-only and lives outside the repository (``<repo root>/../shared/corpus``
or ``$COMPACTLENS_CORPUS``); these tests are skipped with the reason when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from strategies_helpers import assert_not_mutated, check_all, snapshot

from compactlens import (
    MessageIndex,
    PipelineStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    Strategy,
    SummarizationStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    run_strategy,
    tokens_exceed,
)
from compactlens.formats import from_caller
from compactlens.summarizers import FakeSummarizer

#: Fractions of a transcript's token count used as limits.
FRACTIONS = (0.9, 0.5, 0.1)


def settings_for(total: int) -> list[tuple[str, Strategy, int | None]]:
    """(label, strategy, token limit promised when compacted) for one transcript."""
    out: list[tuple[str, Strategy, int | None]] = []
    for f in FRACTIONS:
        n = max(1, int(total * f))
        out += [
            (f"truncation@{f}", TruncationStrategy(trigger=tokens_exceed(n)), n),
            (
                f"truncation_mp1@{f}",
                TruncationStrategy(trigger=tokens_exceed(n), minimum_preserved=1),
                n,
            ),
            (f"window@{f}", SlidingWindowStrategy(trigger=tokens_exceed(n)), n),
            (
                f"tool_results@{f}",
                ToolResultCompactionStrategy(trigger=tokens_exceed(n)),
                n,
            ),
            (
                f"selective@{f}",
                SelectiveToolCallCompactionStrategy(trigger=tokens_exceed(n)),
                n,
            ),
            (
                f"summarization@{f}",
                SummarizationStrategy(
                    FakeSummarizer(text="The agent investigated and edited files."),
                    trigger=tokens_exceed(n),
                ),
                n,
            ),
            (
                f"budget@{f}",
                TokenBudgetComposedStrategy(
                    n,
                    strategies=(
                        ToolResultCompactionStrategy(formatter="names"),
                        SelectiveToolCallCompactionStrategy(),
                    ),
                ),
                n,
            ),
        ]
    out += [
        ("window_turns1", SlidingWindowStrategy(keep_last_turns=1), None),
        ("window_groups5", SlidingWindowStrategy(keep_last_groups=5), None),
        ("tool_results_all", ToolResultCompactionStrategy(), None),
        (
            "tool_names_keep0",
            ToolResultCompactionStrategy(formatter="names", keep_last_tool_call_groups=0),
            None,
        ),
        ("selective_all", SelectiveToolCallCompactionStrategy(), None),
        (
            "pipeline",
            PipelineStrategy(
                ToolResultCompactionStrategy(trigger=tokens_exceed(max(1, total // 2))),
                SummarizationStrategy(
                    FakeSummarizer(raises=RuntimeError("offline")),
                    trigger=tokens_exceed(max(1, total // 3)),
                ),
                TruncationStrategy(trigger=tokens_exceed(max(1, total // 4)), minimum_preserved=2),
            ),
            None,
        ),
    ]
    return out


@pytest.mark.slow
def test_every_strategy_on_every_corpus_transcript(corpus_files: list[Path]) -> None:
    failures: list[str] = []
    for path in corpus_files:
        data = json.loads(path.read_text(encoding="utf-8"))
        wire: list[Any] = data["messages"]
        before = snapshot(wire)
        caller = from_caller(wire)
        index = MessageIndex.build(caller.messages)
        assert index.total_messages == len(wire) > 0
        for label, strategy, limit in settings_for(index.total_tokens):
            res = run_strategy(index, strategy, caller=caller)
            try:
                check_all(wire, res)
                if res.status == "compacted" and limit is not None:
                    assert res.tokens_after <= limit, "target not met"
            except AssertionError as exc:
                failures.append(f"{path.name} / {label}: {exc}")
        assert_not_mutated(before, wire)
    assert not failures, "\n".join(failures)


def test_corpus_transcripts_index_cleanly(corpus_files: list[Path]) -> None:
    """The README promises contiguous, unique-id pairing: only dangling calls are flagged."""
    for path in corpus_files:
        wire = json.loads(path.read_text(encoding="utf-8"))["messages"]
        index = MessageIndex.build(from_caller(wire).messages)
        kinds = {p.kind for p in index.problems}
        assert kinds <= {"unresolved_call"}, (path.name, kinds)
        for group in index.groups:
            assert group.indices == tuple(range(group.first, group.last + 1)), path.name
