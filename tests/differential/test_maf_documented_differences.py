"""The deliberate differences docs/compat.md lists, each shown against the real MAF.

If MAF changes one of these behaviours, the matching test fails and the table needs
updating (or the difference disappears).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("agent_framework", reason="agent-framework-core (dev extra) is not installed")

from agent_framework import Message as MafMessage
from agent_framework import _compaction as maf

from compactlens import apply_compaction
from compactlens.engine.index import MessageIndex
from compactlens.engine.profiles import get_profile, profile_guards
from compactlens.engine.strategies import SummarizationStrategy
from compactlens.formats.agent_framework import to_messages
from compactlens.model.messages import SUMMARY_PREFIX
from compactlens.summarizers.testing import FakeSummarizer

from .maf_harness import SUMMARY_TEXT, FixedClient, run_maf, run_ours


def msg(role: str, *contents: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "role": role, "contents": list(contents)}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}


def result(call_id: str) -> dict[str, Any]:
    return {"type": "function_result", "call_id": call_id, "result": f"r {call_id}"}


def maf_groups(dicts: list[dict[str, Any]]) -> list[tuple[int, ...]]:
    msgs = [MafMessage.from_dict(json.loads(json.dumps(d))) for d in dicts]
    maf.annotate_message_groups(msgs)
    by_id: dict[str, list[int]] = {}
    for i, m in enumerate(msgs):
        by_id.setdefault(maf._group_id(m) or "", []).append(i)
    return sorted(tuple(v) for v in by_id.values())


def our_groups(dicts: list[dict[str, Any]]) -> list[tuple[int, ...]]:
    index = MessageIndex.build(to_messages(dicts), grouping=get_profile("maf").grouping)
    return sorted(g.indices for g in index.groups)


def test_a_result_for_another_call_is_not_part_of_this_one() -> None:
    dicts = [msg("user", text("go")), msg("assistant", call("a")), msg("tool", result("zz"))]
    assert maf_groups(dicts) == [(0,), (1, 2)]  # MAF: contiguous tool messages join
    assert our_groups(dicts) == [(0,), (1,), (2,)]  # ours: an orphan result stands alone


def test_concurrent_duplicate_call_ids() -> None:
    dicts = [
        msg("user", text("go")),
        msg("assistant", call("a")),
        msg("user", text("and again")),
        msg("assistant", call("a")),
        msg("user", text("well?")),
        msg("tool", result("a")),
    ]
    assert maf_groups(dicts) == [(0,), (1,), (2,), (3,), (4,), (5,)]  # ambiguous: unlinked
    assert our_groups(dicts) == [(0,), (1,), (2,), (3, 5), (4,)]  # the newest pending call


def test_search_tool_call_is_a_tool_call_for_us_only() -> None:
    dicts = [
        msg("user", text("find")),
        msg("assistant", {"type": "search_tool_call", "call_id": "s1"}),
        msg("assistant", text("found")),
    ]
    index = MessageIndex.build(to_messages(dicts))
    assert index.groups[1].kind.value == "tool_call"
    msgs = [MafMessage.from_dict(d) for d in dicts]
    spans = maf.group_messages(msgs)
    assert spans[1]["kind"] == "assistant_text"


def test_the_summary_message_is_a_user_message_with_our_prefix() -> None:
    dicts = [msg("user" if i % 2 == 0 else "assistant", text(f"t{i}")) for i in range(8)]
    for i, d in enumerate(dicts):
        d["message_id"] = f"m{i}"
    counts = [5] * len(dicts)

    def make(_table: Any) -> Any:
        return maf.SummarizationStrategy(client=FixedClient(), target_count=2, threshold=0)

    theirs = run_maf(dicts, counts, make, tokens=False)
    summarizer = FakeSummarizer(text=SUMMARY_TEXT)
    ours = run_ours(
        dicts, counts, SummarizationStrategy(summarizer=summarizer, target_count=2), tokens=False
    )
    assert ours == theirs  # the same messages survive; only the summary's form differs
    msgs = [MafMessage.from_dict(json.loads(json.dumps(d))) for d in dicts]
    maf.annotate_message_groups(msgs)
    asyncio.run(make(None)(msgs))
    summary = next(m for m in maf.included_messages(msgs) if m.message_id.startswith("summary"))
    assert summary.role == "assistant" and summary.text == SUMMARY_TEXT
    mine = apply_compaction(
        to_messages(dicts),
        SummarizationStrategy(summarizer=FakeSummarizer(text=SUMMARY_TEXT), target_count=2),
        guards=profile_guards("maf"),
    )
    created = [m for m in mine.messages if m.is_summary]
    assert len(created) == 1 and created[0].role == "user"
    assert created[0].text == SUMMARY_PREFIX + SUMMARY_TEXT
