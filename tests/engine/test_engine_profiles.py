"""Profiles (compactlens, maf, deepagents) and the issue-11 defects: hosted and MCP tool
calls, the reasoning flag, the oversized oldest group, the sliding-window system case."""

from __future__ import annotations

import random
from typing import Any

import pytest

from compactlens import apply_compaction
from compactlens.engine.guards import Guards
from compactlens.engine.index import GroupKind, MessageIndex
from compactlens.engine.profiles import (
    PROFILE_NAMES,
    FloorCharEstimator,
    check_profile,
    get_profile,
    profile_guards,
    profile_tokenizer,
)
from compactlens.engine.strategies import (
    PipelineStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    SummarizationStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
)
from compactlens.engine.strategies.config import strategy_from_config, with_profile
from compactlens.formats import agent_framework, anthropic, openai_responses
from compactlens.model.messages import Message, OpaquePart, ReasoningPart, TextPart
from compactlens.model.tokens import CharEstimator
from compactlens.summarizers.testing import FakeSummarizer

MAF_GUARDS = profile_guards("maf")


def chat(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "rules"}]
    for t in range(turns):
        out.append({"role": "user", "content": f"question {t} " + "x" * 40})
        out.append({"role": "assistant", "content": f"answer {t} " + "y" * 40})
    return out


# --------------------------------------------------------------------------- profiles


def test_profile_table_and_errors() -> None:
    assert PROFILE_NAMES == ("compactlens", "maf", "deepagents")
    assert get_profile().name == "compactlens"
    maf, ours = get_profile("maf"), get_profile("compactlens")
    assert (maf.truncation_minimum_preserved, ours.truncation_minimum_preserved) == (1, 32)
    assert (maf.summarization_minimum_preserved, ours.summarization_minimum_preserved) == (1, 4)
    assert (maf.skip_if_larger, maf.drop_system_if_needed) == (False, True)
    with pytest.raises(ValueError, match="unknown profile 'langchain'"):
        check_profile("langchain")
    with pytest.raises(ValueError, match="unknown profile"):
        TruncationStrategy(max_n=10, compact_to=5, profile="Maf")


def test_profile_guards_keep_latest_request_only_where_the_peer_does() -> None:
    assert profile_guards("maf").keep_latest_request is False
    assert profile_guards("deepagents").keep_latest_request is True
    assert profile_guards().keep_latest_request is True
    base = Guards(keep_tools=frozenset({"read"}), pins=frozenset({3}))
    got = profile_guards("maf", base)
    assert got.keep_tools == base.keep_tools and got.pins == base.pins
    assert got.keep_latest_request is False


def test_profile_tokenizers() -> None:
    floor = profile_tokenizer("maf")
    assert isinstance(floor, FloorCharEstimator)
    assert [floor.count_tokens(t) for t in ("", "ab", "abcdefg")] == [0, 1, 1]
    assert isinstance(profile_tokenizer("deepagents"), CharEstimator)
    assert CharEstimator().count_tokens("abcdefg") == 2


def test_reference_keywords_give_maf_results_under_the_maf_profile() -> None:
    convo = chat(4)  # 9 messages, 5 groups of which 4 non-system
    ours = apply_compaction(convo, TruncationStrategy(max_n=6, compact_to=4))
    assert ours.status == "cannot-fit"  # minimum_preserved 32 keeps everything
    maf = apply_compaction(
        convo, TruncationStrategy(max_n=6, compact_to=4, profile="maf"), guards=MAF_GUARDS
    )
    assert maf.status == "compacted"
    assert maf.messages == [convo[0], convo[6], convo[7], convo[8]]
    explicit = TruncationStrategy(max_n=6, compact_to=4, minimum_preserved=8, profile="maf")
    assert explicit.preserved == 8  # a given value beats the profile's default
    summ = SummarizationStrategy(summarizer=FakeSummarizer(), target_count=2, threshold=0)
    assert summ.preserved == 4 and with_profile(summ, "maf").preserved == 1  # type: ignore[attr-defined]


def test_to_dict_keeps_default_profile_output_and_names_a_given_profile() -> None:
    plain = TruncationStrategy(max_n=6, compact_to=4).to_dict()
    assert plain["minimum_preserved"] == 32 and "profile" not in plain
    maf = TruncationStrategy(max_n=6, compact_to=4, profile="maf").to_dict()
    assert maf["minimum_preserved"] == 1 and maf["profile"] == "maf"
    collapse = ToolResultCompactionStrategy(profile="maf").to_dict()
    assert collapse["skip_if_larger"] is False


def test_config_profile_key_and_with_profile_reach_every_stage() -> None:
    built = strategy_from_config(
        {
            "type": "token_budget",
            "token_budget": 100,
            "profile": "maf",
            "strategies": [
                {"type": "tool_result_collapse"},
                {"type": "truncation", "max_n": 10, "compact_to": 5, "minimum_preserved": 3},
            ],
        }
    )
    assert isinstance(built, TokenBudgetComposedStrategy)
    assert built.drop_system_if_needed is True
    collapse, trunc = built.strategies
    assert isinstance(collapse, ToolResultCompactionStrategy) and collapse.skips_larger is False
    assert isinstance(trunc, TruncationStrategy) and trunc.preserved == 3
    with pytest.raises(ValueError, match=r"strategy\.profile: unknown profile 'x'"):
        strategy_from_config({"type": "truncation", "max_n": 2, "compact_to": 1, "profile": "x"})
    pipe = with_profile(PipelineStrategy(TruncationStrategy(max_n=4, compact_to=2)), "maf")
    assert isinstance(pipe, PipelineStrategy)
    assert pipe.strategies[0].preserved == 1  # type: ignore[attr-defined]
    own = TruncationStrategy(max_n=4, compact_to=2, profile="compactlens")
    assert with_profile(own, "maf") is own  # a stage's own profile wins
    by_argument = strategy_from_config(
        {"type": "truncation", "max_n": 2, "compact_to": 1}, profile="maf"
    )
    assert by_argument.preserved == 1  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- hosted calls


def af(role: str, *contents: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "role": role, "contents": list(contents)}


def mcp_exchange(k: int) -> dict[str, Any]:
    return af(
        "assistant",
        {
            "type": "mcp_server_tool_call",
            "call_id": f"mcp{k}",
            "tool_name": "lookup",
            "arguments": {"q": k},
        },
        {"type": "mcp_server_tool_result", "call_id": f"mcp{k}", "output": f"found {k} " * 20},
    )


def test_mcp_call_and_result_form_a_tool_call_group_that_strategies_shrink() -> None:
    convo = [
        af("user", {"type": "text", "text": "look it up"}),
        mcp_exchange(1),
        mcp_exchange(2),
        af("assistant", {"type": "text", "text": "done"}),
    ]
    msgs = agent_framework.to_messages(convo)
    ix = MessageIndex.build(msgs)
    kinds = [g.kind for g in ix.groups]
    assert kinds == [
        GroupKind.USER,
        GroupKind.TOOL_CALL,
        GroupKind.TOOL_CALL,
        GroupKind.ASSISTANT_TEXT,
    ]
    assert "hosted" in ix.groups[1].flags and "reasoning" not in ix.groups[1].flags
    assert not ix.problems  # a hosted call is no unresolved function call
    dropped = apply_compaction(msgs, SelectiveToolCallCompactionStrategy(), guards=MAF_GUARDS)
    assert [m for m in dropped.messages] == [msgs[0], msgs[2], msgs[3]]
    collapsed = apply_compaction(msgs, ToolResultCompactionStrategy(), guards=MAF_GUARDS)
    line = collapsed.messages[1]
    assert isinstance(line, Message) and line.text.startswith("[Tool results: lookup: found 1")
    assert collapsed.tokens_after < collapsed.tokens_before


def test_hosted_result_in_a_later_message_joins_its_call_by_id() -> None:
    convo = [
        af("user", {"type": "text", "text": "run it"}),
        af("assistant", {"type": "code_interpreter_tool_call", "call_id": "ci1"}),
        af("user", {"type": "text", "text": "meanwhile"}),
        af("assistant", {"type": "code_interpreter_tool_result", "call_id": "ci1"}),
        af("assistant", {"type": "shell_tool_call", "call_id": "sh1", "commands": ["ls"]}),
    ]
    ix = MessageIndex.build(agent_framework.to_messages(convo))
    assert [g.indices for g in ix.groups] == [(0,), (1, 3), (2,), (4,)]
    assert ix.groups[1].kind is GroupKind.TOOL_CALL and ix.groups[3].kind is GroupKind.TOOL_CALL


def test_anthropic_server_tool_and_responses_hosted_items_are_tool_calls() -> None:
    claude = anthropic.to_messages(
        [
            {"role": "user", "content": "search"},
            {
                "role": "assistant",
                "content": [
                    {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
                    {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
                ],
            },
            {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}]},
            {"role": "assistant", "content": "found it"},
        ]
    )
    ix = MessageIndex.build(claude)
    assert [(g.kind, g.indices) for g in ix.groups] == [
        (GroupKind.USER, (0,)),
        (GroupKind.TOOL_CALL, (1,)),
        (GroupKind.ASSISTANT_TEXT, (2, 3)),  # redacted thinking is still reasoning
    ]
    responses = openai_responses.to_messages(
        [
            {"type": "message", "role": "user", "content": "go"},
            {"type": "reasoning", "summary": [], "encrypted_content": "zzz"},
            {"type": "mcp_call", "id": "m1", "name": "q", "arguments": "{}", "output": "ok"},
        ]
    )
    ix = MessageIndex.build(responses)
    assert [(g.kind, g.indices) for g in ix.groups] == [
        (GroupKind.USER, (0,)),
        (GroupKind.TOOL_CALL, (1, 2)),  # reasoning before a hosted call joins it
    ]
    assert "reasoning" in ix.groups[1].flags


def test_opaque_content_that_is_not_reasoning_is_not_glued_to_the_next_answer() -> None:
    msgs = [
        Message("user", (TextPart("hi"),)),
        Message("assistant", (OpaquePart("agent-framework", "usage", "{}"),)),
        Message("assistant", (TextPart("hello"),)),
    ]
    assert not msgs[1].is_reasoning_only
    assert [g.indices for g in MessageIndex.build(msgs).groups] == [(0,), (1,), (2,)]


def test_reasoning_beside_a_call_marks_the_group() -> None:
    convo = [
        af("user", {"type": "text", "text": "weather?"}),
        af(
            "assistant",
            {"type": "text_reasoning", "text": "I should call the tool"},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": {}},
        ),
        af("tool", {"type": "function_result", "call_id": "c1", "result": "sunny"}),
    ]
    ix = MessageIndex.build(agent_framework.to_messages(convo))
    assert ix.groups[1].kind is GroupKind.TOOL_CALL and "reasoning" in ix.groups[1].flags
    assert "reasoning" not in ix.groups[0].flags


def test_maf_grouping_only_changes_reasoning_only_messages() -> None:
    def think(t: str) -> Message:
        return Message("assistant", (ReasoningPart(t),))

    msgs = [
        Message("user", (TextPart("q"),)),
        think("a"),
        Message("assistant", (TextPart("answer"),)),
        think("b"),
    ]
    ours = MessageIndex.build(msgs)
    maf = MessageIndex.build(msgs, grouping="maf")
    assert [g.indices for g in ours.groups] == [(0,), (1, 2), (3,)]
    assert [g.indices for g in maf.groups] == [(0,), (1,), (2,), (3,)]
    rng = random.Random(11)
    for _ in range(200):  # without reasoning-only messages both groupings agree
        plain = [
            Message(rng.choice(("user", "assistant", "system")), (TextPart(str(i)),))
            for i in range(rng.randint(0, 12))
        ]
        a, b = MessageIndex.build(plain), MessageIndex.build(plain, grouping="maf")
        assert [g.indices for g in a.groups] == [g.indices for g in b.groups]


# --------------------------------------------------------------------------- defects


def long_first_turn() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "paste: " + "z" * 4000},  # ~1,000 tokens alone
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": "fine"},
        {"role": "user", "content": "third"},
        {"role": "assistant", "content": "good"},
    ]


def test_oversized_oldest_group_is_a_true_reason_by_default() -> None:
    strategy = SummarizationStrategy(
        summarizer=FakeSummarizer(), target_count=2, threshold=0, max_input_tokens=500
    )
    res = apply_compaction(long_first_turn(), strategy)
    assert res.status == "cannot-fit"
    assert res.reason is not None and "exceeds max_input_tokens=500" in res.reason
    assert "protected content remains" not in res.reason


def test_oversized_oldest_group_is_skipped_under_maf() -> None:
    summarizer = FakeSummarizer(text="S")
    strategy = SummarizationStrategy(
        summarizer=summarizer, target_count=2, threshold=0, max_input_tokens=500, profile="maf"
    )
    convo = long_first_turn()
    res = apply_compaction(convo, strategy, guards=MAF_GUARDS)
    assert summarizer.call_count == 1
    assert res.messages[0] is convo[0]  # the oversized group stays
    assert res.messages[1]["content"].endswith("S")  # the later groups are summarized
    assert res.messages[2:] == convo[4:]


def test_sliding_window_without_preserve_system_drops_system_within_k_groups() -> None:
    convo = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    res = apply_compaction(
        convo, SlidingWindowStrategy(keep_last_groups=3, preserve_system=False), guards=MAF_GUARDS
    )
    assert res.messages == convo[1:]
    kept = apply_compaction(convo, SlidingWindowStrategy(keep_last_groups=3))
    assert kept.status == "unchanged"
