"""The index's memo of collapsed lines: a second plan over the same index reuses them.

A plan over an index that a plan with the same collapse settings used before must give
exactly the result a fresh index gives; other settings, other tokenizers and custom
formatters must not be served a line built for something else; the memo stays out of
the index's value (equality, pickles, copies) and within its bound.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from strategies_helpers import call, calls, result, stable, transcripts, user

from compactlens import (
    CharEstimator,
    Message,
    MessageIndex,
    PipelineStrategy,
    SlidingWindowStrategy,
    ToolResultCompactionStrategy,
    run_strategy,
    tokens_exceed,
)
from compactlens.engine.line_memo import LineMemo
from compactlens.formats import from_caller
from compactlens.model.messages import text_message


def _same(a: Any, b: Any) -> None:
    assert json.dumps(a.messages, ensure_ascii=False) == json.dumps(b.messages, ensure_ascii=False)
    assert a.projection == b.projection
    assert stable(a.to_dict()) == stable(b.to_dict())


def _collapse(**kwargs: Any) -> ToolResultCompactionStrategy:
    return ToolResultCompactionStrategy(keep_last_tool_call_groups=1, **kwargs)


@settings(max_examples=60, deadline=None)
@given(
    convo=transcripts(),
    first=st.sampled_from([{}, {"max_chars": 40}, {"formatter": "names"}, {"profile": "maf"}]),
    second=st.sampled_from([{}, {"max_chars": 40}, {"formatter": "names"}, {"profile": "maf"}]),
    budget=st.integers(1, 400),
)
def test_a_plan_after_another_gives_what_a_fresh_index_gives(
    convo: list[dict[str, Any]], first: dict[str, Any], second: dict[str, Any], budget: int
) -> None:
    caller = from_caller(convo)
    messages = caller.messages
    shared = MessageIndex.build(messages)
    run_strategy(shared, _collapse(**first), caller=caller)
    trigger = tokens_exceed(budget)
    for strategy in (
        _collapse(**second),
        PipelineStrategy(
            _collapse(trigger=trigger, **second),
            SlidingWindowStrategy(trigger=trigger, minimum_preserved=1),
        ),
    ):
        again = run_strategy(shared, strategy, caller=caller)
        _same(again, run_strategy(MessageIndex.build(messages), strategy, caller=caller))


def _tool_convo(groups: int) -> list[dict[str, Any]]:
    convo: list[dict[str, Any]] = []
    spaced = "a   long\n\n   line " * 40  # folds to a shorter line than the group
    for g in range(groups):
        convo += [user(f"turn {g}"), calls(call(f"c{g}", "grep")), result(f"c{g}", spaced)]
    return [*convo, user("last")]


def test_the_second_plan_reuses_the_lines_of_the_first() -> None:
    index = MessageIndex.build(from_caller(_tool_convo(5)).messages)
    first = run_strategy(index, _collapse())
    assert len(index.lines) == 4
    second = run_strategy(index, _collapse())
    lines = [m for m in first.messages if m.text.startswith("[Tool results")]
    assert len(lines) == 4
    assert all(any(m is line for m in second.messages) for line in lines)
    # Other settings are other lines: a cut line is not served for a whole one.
    cut = run_strategy(index, _collapse(max_chars=32))
    assert not any(m is line for line in lines for m in cut.messages)


def test_a_custom_formatter_is_asked_on_every_plan() -> None:
    seen: list[int] = []

    def count(messages: Sequence[Message]) -> str:
        seen.append(len(messages))
        return f"[{len(seen)} calls so far]"

    index = MessageIndex.build(from_caller(_tool_convo(3)).messages)
    run_strategy(index, _collapse(formatter=count))
    again = run_strategy(index, _collapse(formatter=count))
    assert len(seen) == 4 and len(index.lines) == 0
    assert any(m.text == "[4 calls so far]" for m in again.messages)


def test_the_memo_is_no_part_of_the_index_value() -> None:
    messages = from_caller(_tool_convo(3)).messages
    used = MessageIndex.build(messages, CharEstimator())
    run_strategy(used, _collapse())
    fresh = MessageIndex.build(messages, CharEstimator())
    assert len(used.lines) == 2 and len(fresh.lines) == 0
    assert used == fresh and repr(used) == repr(fresh)
    for copied in (pickle.loads(pickle.dumps(used)), copy.deepcopy(used), copy.copy(used)):
        assert copied == used
        assert len(copied.lines) == 0 or copied.lines is used.lines  # copy.copy shares it
    assert pickle.loads(pickle.dumps(used)).lines.max_chars == used.lines.max_chars


def test_the_memo_starts_over_when_full() -> None:
    memo = LineMemo(max_chars=10)
    line = text_message("assistant", "1234")
    memo.put("a", line, 1, 4)
    memo.put("b", line, 1, 4)
    assert memo.get("a") == (line, 1) and len(memo) == 2
    memo.put("c", line, 1, 4)  # 12 characters would pass 10
    assert memo.get("a") is None and memo.get("c") == (line, 1) and len(memo) == 1
    memo.put("d", text_message("assistant", "x" * 11), 3, 11)  # larger than all: not kept
    assert memo.get("d") is None and len(memo) == 1
