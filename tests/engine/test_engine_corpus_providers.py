"""Every strategy x every provider over every corpus transcript: no protocol error
introduced, and the latest user request kept (the guards' defaults)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from compactlens import (
    ClampStrategy,
    Guards,
    MessageIndex,
    PipelineStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    load_transcript,
    run_strategy,
    tokens_exceed,
)
from compactlens.engine import PROVIDERS, latest_request_index
from compactlens.engine.providers import errors_only, provider_problems
from compactlens.model import Message
from compactlens.summarizers import ExtractiveSummarizer


def strategies(budget: int) -> dict[str, Any]:
    over = tokens_exceed(budget)
    return {
        "truncation": TruncationStrategy(trigger=over, minimum_preserved=0),
        "sliding_window": SlidingWindowStrategy(trigger=over, minimum_preserved=0),
        "tool_collapse": ToolResultCompactionStrategy(keep_last_tool_call_groups=0),
        "selective": SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=0),
        "summarization": SummarizationStrategy(
            ExtractiveSummarizer(), trigger=over, minimum_preserved=1
        ),
        "clamp_then_truncation": PipelineStrategy(
            ClampStrategy(max_tokens=max(1, budget // 8)),
            TruncationStrategy(trigger=over, minimum_preserved=0),
        ),
    }


def errors(messages: tuple[Message, ...] | list[Message], provider: str) -> Counter[str]:
    found = provider_problems(messages, [provider])  # type: ignore[list-item]
    return Counter(p.kind for p in errors_only(found))


def test_no_strategy_introduces_a_provider_error_on_the_corpus(corpus_files: list[Path]) -> None:
    runs = 0
    for path in corpus_files:
        messages = load_transcript(path).messages
        index = MessageIndex.build(messages)
        latest = latest_request_index(messages)
        before = {p: errors(messages, p) for p in PROVIDERS}
        for share in (2, 10):
            for name, strategy in strategies(max(1, index.total_tokens // share)).items():
                for provider in PROVIDERS:
                    result = run_strategy(
                        index,
                        strategy,
                        tokenizer_given=False,
                        guards=Guards(provider=provider),  # type: ignore[arg-type]
                    )
                    runs += 1
                    introduced = errors(result.projection, provider) - before[provider]
                    where = (path.name, name, share, provider)
                    assert not introduced, (where, introduced)
                    if latest is not None:
                        assert messages[latest] in result.projection, where
    assert runs > 0
    print(f"{runs} runs, 0 provider errors introduced")


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_claude_code_truncation_opens_with_a_user_turn(
    corpus_files: list[Path], provider: str
) -> None:
    files = [p for p in corpus_files if p.name.startswith("claude_code")]
    if not files:
        pytest.skip("no Claude Code transcript in the corpus")
    for path in files:
        messages = load_transcript(path).messages
        index = MessageIndex.build(messages)
        strategy = TruncationStrategy(
            trigger=tokens_exceed(max(1, index.total_tokens // 3)), minimum_preserved=1
        )
        both = (
            Guards(provider=provider),  # type: ignore[arg-type]
            Guards(provider=provider, keep_latest_request=False),  # type: ignore[arg-type]
        )
        for guards in both:
            result = run_strategy(index, strategy, tokenizer_given=False, guards=guards)
            first = next(m for m in result.projection if not m.is_system)
            assert first.role == "user" and not first.tool_results, path.name
