"""Scenarios from the @deepagents/compaction contract (the deepagents profile of compact()).

Written from the contract, not from its code (the npm package is not reachable here):
the estimator on the messages as given, the replaced range, the replay of the latest
request, the 2,048-token output allowance, exactly one summarizer request per call, and
the five cannot-fit reasons. Token arithmetic is done by hand from the JSON text the
caller would send (``JSON.stringify``: no spaces, non-ASCII kept).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from compactlens import compact, estimate_tokens
from compactlens.compact import MAX_SUMMARY_TOKENS, estimate_canonical_tokens
from compactlens.compact.result import CANNOT_FIT_REASONS
from compactlens.engine.profiles import profile_guards
from compactlens.model import SUMMARY_PREFIX
from compactlens.summarizers import FakeSummarizer


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def asst(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def history(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    for t in range(turns):
        out += [user(f"u{t} " + "a" * 60), asst(f"a{t} " + "b" * 60)]
    return out


def stringify_units(messages: list[dict[str, str]]) -> int:
    """JSON.stringify length, written out by hand for role/content string messages."""
    total = 2 + max(0, len(messages) - 1)  # [ ] and the commas between objects
    for m in messages:
        body = m["content"].replace("\\", "\\\\").replace('"', '\\"')
        units = sum(2 if ord(ch) > 0xFFFF else 1 for ch in body)
        total += len('{"role":"') + len(m["role"]) + len('","content":"') + units + len('"}')
    return total


def test_the_estimator_measures_the_json_as_given() -> None:
    assert estimate_tokens([user("hello")]) == 9  # 35 UTF-16 units / 4, rounded up
    assert estimate_canonical_tokens([user("hello")]) == 15  # our canonical JSON is longer
    for msgs in ([user('say "hi" \\ ok')], [user("héllo 😀"), asst("x" * 13)]):
        assert estimate_tokens(msgs) == math.ceil(stringify_units(msgs) / 4)
    assert estimate_tokens([]) == 0  # no messages, no tokens (not the 2 units of "[]")


def test_tokens_before_and_after_use_the_wire_estimate() -> None:
    msgs = history(6)
    result = compact(msgs, summarizer=FakeSummarizer(text="sum"), target_tokens=10_000)
    assert result.status == "compacted"
    assert result.tokens.before == estimate_tokens(msgs)
    assert result.tokens.after == estimate_tokens(result.messages)


def test_the_replaced_range_and_the_latest_request_replay() -> None:
    msgs = history(6)  # 13 messages; the latest user request is message 11
    fake = FakeSummarizer(text="sum")
    result = compact(msgs, summarizer=fake, target_tokens=10_000, keep_last_messages=1)
    assert result.replaced_range == (1, 12)
    assert [m is msgs[i] for i, m in enumerate(fake.calls[0].messages, 1)] == [False] * 11
    assert result.messages[0] is msgs[0]
    assert result.messages[1]["role"] == "user"
    assert result.messages[1]["content"] == SUMMARY_PREFIX + "sum"
    assert result.messages[2] is msgs[11]  # replayed verbatim right after the summary
    assert result.messages[3:] == msgs[12:]
    assert result.reinserted_index == 11
    assert profile_guards("deepagents").keep_latest_request is True


def test_output_allowance_is_at_most_2048_and_one_request_per_call() -> None:
    msgs = history(8)
    fake = FakeSummarizer(text="sum")
    compact(msgs, summarizer=fake, target_tokens=1_000_000)
    assert fake.call_count == 1 and fake.calls[0].max_output_tokens == MAX_SUMMARY_TOKENS
    empty = compact(msgs, summarizer=FakeSummarizer(), target_tokens=1).candidate_tokens
    assert isinstance(empty, int)
    tight = FakeSummarizer(text="")
    rejected = compact(msgs, summarizer=tight, target_tokens=empty + 5)
    assert tight.call_count == 1 and tight.calls[0].max_output_tokens == 5
    assert rejected.reason == "empty-summary"  # no retry after a rejected answer


@pytest.mark.parametrize("reason", CANNOT_FIT_REASONS)
def test_each_cannot_fit_reason(reason: str) -> None:
    msgs = history(6)
    empty = compact(msgs, summarizer=FakeSummarizer(), target_tokens=1).candidate_tokens
    assert isinstance(empty, int)
    fake: FakeSummarizer
    target = 10_000
    given: list[dict[str, Any]] = msgs
    if reason == "no-safe-boundary":
        given, fake = [msgs[0], msgs[1]], FakeSummarizer()
    elif reason == "protected-history":
        fake, target = FakeSummarizer(), empty
    elif reason == "incomplete-summary":
        fake = FakeSummarizer(finish_reason="length")
    elif reason == "empty-summary":
        fake = FakeSummarizer(text=" \n\t ")
    else:
        fake, target = FakeSummarizer(text="w" * 400), empty + 10
    result = compact(given, summarizer=fake, target_tokens=target)
    assert result.status == "cannot-fit" and result.reason == reason
    assert result.messages == given  # nothing changes on cannot-fit
    assert fake.call_count == (1 if reason in CANNOT_FIT_REASONS[2:] else 0)
