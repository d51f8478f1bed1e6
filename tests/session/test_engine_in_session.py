"""Engine triggers and strategies inside a CompactionSession."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from compactlens import (
    CompactionSession,
    SlidingWindowStrategy,
    TruncationStrategy,
    tokens_exceed,
    turns_exceed,
    validate_pairing,
)
from compactlens.summarizers import FakeSummarizer


def _history(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful agent."}]
    for t in range(turns):
        out.append({"role": "user", "content": f"question {t} " + "x" * 200})
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{t}",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": json.dumps({"q": t})},
                    }
                ],
            }
        )
        out.append({"role": "tool", "tool_call_id": f"call_{t}", "content": "y" * 300})
        out.append({"role": "assistant", "content": f"answer {t}"})
    return out


def test_engine_turn_trigger_fires_in_a_session() -> None:
    events: list[Any] = []
    session = CompactionSession(
        triggers=[turns_exceed(5)],
        target_tokens=100_000,
        strategy=SlidingWindowStrategy(keep_last_turns=3),
        on_event=events.append,
    )
    small = _history(5)
    assert session.prepare(small) == small  # 5 turns: not more than 5
    assert events == []
    big = _history(8)
    out = session.prepare(big)
    assert [type(e).__name__ for e in events] == ["CompactionStarted", "CompactionCompleted"]
    users = [m for m in out if m["role"] == "user"]
    assert [u["content"].split()[1] for u in users] == ["5", "6", "7"]
    assert out[0] is big[0]  # the system message is the caller's own object


def test_strategy_factory_follows_the_session_target() -> None:
    history = _history(30)
    before = copy.deepcopy(history)
    session = CompactionSession(
        triggers=[tokens_exceed(5_000)],
        target_tokens=3_000,
        strategy=lambda target: TruncationStrategy(tokens_exceed(target), minimum_preserved=2),
    )
    out = session.prepare(history)
    assert history == before
    assert len(out) < len(history)
    assert session.last_result.tokens.after <= 3_000
    assert not [p for p in validate_pairing(out) if p.kind in ("orphan_result", "split_pair")]
    # The checkpoint is reused for the next request that extends the same history.
    extended = [*history, {"role": "user", "content": "one more"}]
    again = session.prepare(extended)
    assert again[-1] is extended[-1]
    assert len(again) == len(out) + 1


def test_engine_strategy_that_cannot_fit_reports_protected_history() -> None:
    events: list[Any] = []
    session = CompactionSession(
        triggers=[tokens_exceed(1_000)],
        target_tokens=900,
        strategy=TruncationStrategy(tokens_exceed(900), minimum_preserved=32),
        on_event=events.append,
    )
    history = _history(10)
    out = session.prepare(history)
    assert out == history
    failed = [e for e in events if type(e).__name__ == "CompactionFailed"]
    assert len(failed) == 1
    assert failed[0].reason == "protected-history"


def test_session_rejects_bad_engine_threshold() -> None:
    with pytest.raises(ValueError):
        CompactionSession(
            triggers=[tokens_exceed(0)], target_tokens=10, summarizer=FakeSummarizer("s")
        )


def test_an_engine_strategy_is_accepted_directly() -> None:
    session = CompactionSession(
        triggers=[turns_exceed(5)],
        target_tokens=100_000,
        strategy=SlidingWindowStrategy(keep_last_turns=2),
    )
    out = session.prepare(_history(8))
    assert [m["content"].split()[1] for m in out if m["role"] == "user"] == ["6", "7"]
