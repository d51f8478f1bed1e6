"""The collector is paused during a compaction and left as the caller had it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from strategies_helpers import assistant, user

from compactlens import TruncationStrategy, apply_compaction, load_transcript, tokens_exceed
from compactlens.model.gc_pause import gc_paused


class _Spy:
    """A tokenizer that records whether the collector ran while it counted."""

    name = "spy"

    def __init__(self) -> None:
        self.seen: list[bool] = []

    def count_tokens(self, text: str) -> int:
        self.seen.append(gc.isenabled())
        return len(text)


@pytest.fixture
def restore_gc() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_collector_is_off_during_the_call_and_back_on_after(restore_gc: None) -> None:
    gc.enable()
    spy = _Spy()
    convo = [user("a" * 50), assistant("b" * 50), user("c" * 50), assistant("d")]
    apply_compaction(convo, TruncationStrategy(tokens_exceed(60), minimum_preserved=1), spy)
    assert spy.seen and not any(spy.seen)
    assert gc.isenabled()


def test_a_caller_that_disabled_the_collector_keeps_it_disabled(restore_gc: None) -> None:
    gc.disable()
    apply_compaction([user("x")], TruncationStrategy(tokens_exceed(5)))
    load_transcript([{"role": "user", "content": "x"}])
    assert not gc.isenabled()


def test_the_collector_comes_back_after_an_error(restore_gc: None) -> None:
    gc.enable()
    with pytest.raises(ValueError), gc_paused():
        assert not gc.isenabled()
        raise ValueError("boom")
    assert gc.isenabled()
    with pytest.raises(ValueError):
        load_transcript(b"not json")
    assert gc.isenabled()
