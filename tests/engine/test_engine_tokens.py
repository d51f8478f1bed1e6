"""Token counting: the estimator, exact offline tiktoken counts, and counting once."""

from __future__ import annotations

import dataclasses
import math
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from strategies_helpers import (
    CountingTokenizer,
    index_of,
    long_chat,
    tool_chat,
    weather_transcript,
)

from compactlens import (
    CharEstimator,
    PipelineStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    Strategy,
    SummarizationStrategy,
    TiktokenTokenizer,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    run_strategy,
    tokens_exceed,
)
from compactlens.engine.guards import NO_GUARDS
from compactlens.formats import from_caller
from compactlens.model import message_text
from compactlens.model import tokens as tokens_module
from compactlens.summarizers import FakeSummarizer

SAMPLES = [
    "hello world",
    "",
    " ",
    "Ünïcödé 𝔘 🙂 tabs\t\tand\r\nnewlines   spaces",
    'def f(x):\n    return {"a": [1, 2, 3]}  # comment',
    "1234567890 12345 3.14159 -42",
    "<|endoftext|> is counted as ordinary text",
    "日本語のテキストと中文文本",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
]


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Refuse every connection that would leave 127.0.0.1, and record attempts."""
    attempts: list[Any] = []
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if host not in ("127.0.0.1", "::1", "localhost") and self.family != socket.AF_UNIX:
            attempts.append(address)
            raise OSError(f"network access attempted in a test: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield attempts


# --------------------------------------------------------------------------- estimator


@pytest.mark.parametrize("length", [0, 1, 3, 4, 5, 8, 9, 1001])
def test_char_estimator_is_ceil_len_over_four(length: int) -> None:
    text = "é" * length
    expected = 0 if length == 0 else -(-length // 4)
    assert CharEstimator().count_tokens(text) == expected
    assert CharEstimator().count_many([text, text]) == [expected, expected]


def test_char_estimator_other_ratio_and_validation() -> None:
    assert CharEstimator(chars_per_token=2.0).count_tokens("abcde") == 3
    with pytest.raises(ValueError):
        CharEstimator(chars_per_token=0)


def test_index_counts_role_name_and_parts_with_the_estimator() -> None:
    index = index_of(weather_transcript())
    for m, count in zip(index.messages, index.message_tokens, strict=True):
        assert count == math.ceil(len(message_text(m)) / 4)
    # The tool call's name and arguments count, not just the content.
    call_message = index.messages[2]
    assert "get_weather" in message_text(call_message)
    assert '{"city": "Paris"}' in message_text(call_message)


# --------------------------------------------------------------------------- tiktoken


@pytest.mark.parametrize(
    ("encoding", "ids"),
    [("cl100k_base", [15339, 1917]), ("o200k_base", [24912, 2375])],
)
def test_tiktoken_known_token_ids(encoding: str, ids: list[int]) -> None:
    tok = TiktokenTokenizer(encoding)
    assert tok.name == encoding
    assert tok._encoding.encode_ordinary("hello world") == ids
    assert tok.count_tokens("hello world") == len(ids)
    assert tok.count_tokens("") == 0


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_tiktoken_counts_match_an_independent_implementation(encoding: str) -> None:
    """bpe-openai's Rust tokenizer is a separate implementation of the same encodings."""
    bindings = pytest.importorskip("bpe_openai._bindings")
    reference = bindings.tokenizer_for_encoding(encoding)
    tok = TiktokenTokenizer(encoding)
    for text in SAMPLES:
        assert tok.count_tokens(text) == reference.count(text), text
    assert tok.count_many(SAMPLES) == [reference.count(t) for t in SAMPLES]


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
    ],
)
def test_model_names_map_to_their_encoding(model: str, encoding: str) -> None:
    tok = TiktokenTokenizer(model)
    assert tok.encoding_name == encoding
    assert tok.count_tokens("hello world") == TiktokenTokenizer(encoding).count_tokens(
        "hello world"
    )


def test_unknown_encoding_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown encoding or model"):
        TiktokenTokenizer("llama-3")


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_tiktoken_loads_offline_from_an_installed_package(
    encoding: str, no_network: list[Any]
) -> None:
    tokens_module._build_encoding.cache_clear()
    tok = TiktokenTokenizer(encoding)
    assert no_network == []
    assert tok.source.endswith((".tiktoken", ".tiktoken.gz"))
    assert tok.count_tokens("hello world") == 2


def test_offline_ranks_are_hash_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tokens_module.ENCODINGS["cl100k_base"]
    monkeypatch.setitem(
        tokens_module.ENCODINGS, "cl100k_base", dataclasses.replace(spec, sha256="0" * 64)
    )
    with pytest.raises(tokens_module.EncodingUnavailableError, match="does not match"):
        tokens_module.load_offline_ranks("cl100k_base")


def test_tiktoken_adds_per_message_overhead() -> None:
    tok = TiktokenTokenizer("o200k_base")
    index = index_of(weather_transcript(), tok)
    for m, count in zip(index.messages, index.message_tokens, strict=True):
        assert count == tok.count_tokens(message_text(m)) + 3
    assert index.tokenizer_name == "o200k_base"


def test_a_tokenizer_returning_garbage_is_rejected() -> None:
    class Bad:
        def count_tokens(self, text: str) -> int:
            return -1

    with pytest.raises(ValueError):
        index_of([{"role": "user", "content": "x"}], Bad())


# --------------------------------------------------------------------------- counted once


def test_each_message_is_counted_once_at_index_build() -> None:
    convo = tool_chat(4) + long_chat(3)
    tok = CountingTokenizer([])
    index = index_of(convo, tok)
    assert len(tok.counted) == len(convo)
    assert sorted(tok.counted) == sorted(message_text(m) for m in index.messages)


def test_rerunning_strategies_never_retokenizes_the_transcript() -> None:
    convo = tool_chat(6) + long_chat(4, with_system=False)
    tok = CountingTokenizer([])
    index = index_of(convo, tok)
    originals = {message_text(m) for m in index.messages}
    tok.counted.clear()
    total = index.total_tokens
    strategies: list[Strategy] = [
        TruncationStrategy(trigger=tokens_exceed(total // 2), minimum_preserved=1),
        TruncationStrategy(trigger=tokens_exceed(total // 3), minimum_preserved=2),
        SlidingWindowStrategy(keep_last_turns=2),
        SlidingWindowStrategy(keep_last_groups=3),
        SelectiveToolCallCompactionStrategy(trigger=tokens_exceed(total // 2)),
        ToolResultCompactionStrategy(trigger=tokens_exceed(total // 2)),
        ToolResultCompactionStrategy(formatter="names"),
        SummarizationStrategy(FakeSummarizer(text="short"), trigger=tokens_exceed(total // 2)),
        PipelineStrategy(
            ToolResultCompactionStrategy(trigger=tokens_exceed(total // 2)),
            TruncationStrategy(trigger=tokens_exceed(total // 4), minimum_preserved=1),
        ),
        TokenBudgetComposedStrategy(
            total // 5, strategies=(SlidingWindowStrategy(keep_last_turns=1),)
        ),
    ]
    for _ in range(2):
        for strategy in strategies:
            res = run_strategy(index, strategy)
            assert res.status != "unchanged", strategy.name
    # Only the new lines (collapsed tool groups, summaries) were ever counted again.
    assert tok.counted, "expected the new collapsed/summary lines to be counted"
    assert not originals & set(tok.counted)
    for text in tok.counted:
        assert text.startswith(("assistant\n[Tool", "user\nPrevious conversation summary:"))


def test_apply_compaction_counts_with_the_given_tokenizer() -> None:
    convo = long_chat(5)
    tok = TiktokenTokenizer("cl100k_base")
    res = apply_compaction(
        convo,
        TruncationStrategy(trigger=tokens_exceed(100), minimum_preserved=1),
        tok,
        guards=NO_GUARDS,
    )
    assert res.tokenizer == "cl100k_base"
    expected = sum(
        tok.count_tokens(message_text(m)) + 3 for m in from_caller(res.messages).messages
    )
    assert res.tokens_after == expected <= 100
