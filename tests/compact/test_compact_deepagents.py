"""Scenarios from the @deepagents/compaction contract (the deepagents profile of compact()).

The npm package is not published (``npm view @deepagents/compaction``: 404); its source
(JanuaryLabs/deepagents, packages/compaction/src) was read to learn the rules, and these
tests are written from them, with no Node: the estimator on the messages as given, the
replaced range, the replay of the latest request, the 2,048-token output allowance,
exactly one summarizer request per call, the five cannot-fit reasons, and the three
differences found against it (instructions appended verbatim, numbers in the estimate as
JavaScript writes them, reused call ids). Token arithmetic is done by hand from the JSON
text the caller would send (``JSON.stringify``: no spaces, non-ASCII kept).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from compactlens import compact, estimate_tokens
from compactlens.compact import MAX_SUMMARY_TOKENS, estimate_canonical_tokens
from compactlens.compact.result import CANNOT_FIT_REASONS
from compactlens.engine.profiles import profile_guards
from compactlens.model import SUMMARY_PREFIX
from compactlens.model.jsjson import js_number
from compactlens.summarizers import SUMMARY_PROMPT, FakeSummarizer


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


# ---------------------------------------------------------------- the three differences
# Found against the upstream source (packages/compaction/src/compact.ts and messages.ts):
# the instructions are appended verbatim, the estimate is the length of JSON.stringify
# (numbers written as JavaScript writes them), and a call id used again later links the
# first call to the last result.


@pytest.mark.parametrize(
    "instructions",
    ["  Keep ticket ids like ABC-12.\n", " \n\t "],
    ids=["surrounding-whitespace", "whitespace-only"],
)
def test_instructions_are_appended_exactly_as_given(instructions: str) -> None:
    """compact.ts: ``instructions ? `${PROMPT}\\n\\nAdditional preservation
    requirements:\\n${instructions}` : PROMPT`` (no trim; any non-empty string appends)."""
    fake = FakeSummarizer(text="sum")
    compact(history(6), summarizer=fake, target_tokens=10_000, instructions=instructions)
    expected = f"{SUMMARY_PROMPT}\n\nAdditional preservation requirements:\n{instructions}"
    assert fake.calls[0].prompt == expected
    plain = FakeSummarizer(text="sum")
    compact(history(6), summarizer=plain, target_tokens=10_000, instructions="")
    assert plain.calls[0].prompt == SUMMARY_PROMPT  # "" is falsy in JavaScript too


def test_the_estimate_writes_numbers_as_javascript_does() -> None:
    """AI SDK messages with numbers in tool inputs and JSON results: JSON.stringify writes
    1.0 as 1, 1e-07 as 1e-7, 1e+16 in full, -0.0 as 0, NaN as null."""
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": "total?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool-call",
                    "toolCallId": "c1",
                    "toolName": "sum",
                    "input": {"a": 1.0, "b": 1e-07},
                }
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "sum",
                    "output": {"type": "json", "value": {"t": 1e16, "z": -0.0, "n": float("nan")}},
                }
            ],
        },
    ]
    js = (
        '[{"role":"user","content":"total?"},'
        '{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c1",'
        '"toolName":"sum","input":{"a":1,"b":1e-7}}]},'
        '{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","toolName":"sum",'
        '"output":{"type":"json","value":{"t":10000000000000000,"z":0,"n":null}}}]}]'
    )
    assert estimate_tokens(msgs, format="ai-sdk") == math.ceil(len(js) / 4)
    result = compact(
        [*msgs, {"role": "assistant", "content": "3"}] * 2,
        summarizer=FakeSummarizer(text="sum"),
        target_tokens=10_000,
        keep_last_messages=1,
        format="ai-sdk",
    )
    assert result.tokens.before == math.ceil((2 * len(js) - 2 + 2 * 35 + 2) / 4)


@pytest.mark.parametrize("answered", [True, False], ids=["answered", "left-open"])
def test_a_reused_call_id_links_the_first_call_to_the_last_result(answered: bool) -> None:
    """messages.ts links every message carrying ``tool:<id>``, first to last; an open link
    pins its first message. Here call_A is used at 2 and again at 6."""

    def call(i: str) -> dict[str, Any]:
        fn = {"name": "grep", "arguments": "{}"}
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": i, "type": "function", "function": fn}]}  # fmt: skip

    def result(i: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": i, "content": "ok"}

    msgs = [
        {"role": "system", "content": "sys"},
        user("u1"),
        call("call_A"),
        result("call_A"),
        asst("done 1"),
        user("u2"),
        call("call_A"),
        *([result("call_A")] if answered else []),
        asst("done 2"),
        user("u3"),
        asst("ok"),
    ]
    # With a result linked to its own call only, a cut before message 6 would be safe.
    result_ = compact(msgs, summarizer=FakeSummarizer(text="sum"), target_tokens=10_000,
                      keep_last_messages=4)  # fmt: skip
    assert result_.status == "compacted"
    assert result_.replaced_range == (1, 2)  # no cut between the first call and the last use
    assert result_.reinserted_index is None  # the latest request (u3) is not in it
    assert result_.messages[0] is msgs[0]
    assert all(a is b for a, b in zip(result_.messages[2:], msgs[2:], strict=True))


@given(hs.floats(allow_nan=False, allow_infinity=False))
def test_javascript_numbers_read_back_to_the_same_double(x: float) -> None:
    text = js_number(x)
    assert float(text) == x
    if x.is_integer() and abs(x) < 1e21:
        assert text.lstrip("-").isdigit()  # 1.0 is "1", 1e16 is written in full
    assert not text.startswith("-0") or text.startswith("-0.")
