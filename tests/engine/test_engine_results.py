"""The result contract: kinds, identity, no mutation, decisions, events, explanation, JSON."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from strategies_helpers import (
    assert_not_mutated,
    call,
    calls,
    check_all,
    index_of,
    long_chat,
    reasoning,
    result,
    snapshot,
    system,
    to_messages,
    tool_chat,
    user,
    weather_transcript,
)

from compactlens import (
    CompactionResult,
    Message,
    PipelineStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    Strategy,
    SummarizationStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    apply_compaction_async,
    run_strategy,
    strategy_from_config,
    tokens_exceed,
)
from compactlens.engine import tokens_at_most
from compactlens.engine.guards import NO_GUARDS
from compactlens.engine.vocabulary import protection_words
from compactlens.formats import from_caller
from compactlens.summarizers import FakeSummarizer


def all_strategies(limit: int) -> dict[str, Callable[[], Strategy]]:
    """One factory per strategy kind (fresh summarizers each time)."""
    return {
        "truncation": lambda: TruncationStrategy(trigger=tokens_exceed(limit), minimum_preserved=1),
        "sliding_window": lambda: SlidingWindowStrategy(trigger=tokens_exceed(limit)),
        "sliding_window_turns": lambda: SlidingWindowStrategy(keep_last_turns=1),
        "sliding_window_groups": lambda: SlidingWindowStrategy(keep_last_groups=2),
        "tool_results": lambda: ToolResultCompactionStrategy(trigger=tokens_exceed(limit)),
        "tool_results_all": lambda: ToolResultCompactionStrategy(),
        "selective": lambda: SelectiveToolCallCompactionStrategy(trigger=tokens_exceed(limit)),
        "summarization": lambda: SummarizationStrategy(
            FakeSummarizer(text="summary"), trigger=tokens_exceed(limit), minimum_preserved=2
        ),
        "pipeline": lambda: PipelineStrategy(
            ToolResultCompactionStrategy(trigger=tokens_exceed(limit)),
            TruncationStrategy(trigger=tokens_exceed(limit), minimum_preserved=1),
        ),
        "token_budget": lambda: TokenBudgetComposedStrategy(
            limit, strategies=(ToolResultCompactionStrategy(),)
        ),
    }


NAMES = list(all_strategies(1))
#: The strategies above whose target is ``tokens <= limit``.
TOKEN_TARGETS = {
    "truncation",
    "sliding_window",
    "tool_results",
    "selective",
    "summarization",
    "pipeline",
    "token_budget",
}


def awkward_transcript() -> list[dict[str, Any]]:
    """Every pairing oddity at once."""
    return [
        system("Be careful. " * 10),
        user("start " * 20),
        reasoning("planning " * 10),
        calls(call("p1", "get_weather"), call("p2", "search_docs")),
        result("p2", "docs " * 30),
        user("interrupting " * 5),
        result("p1", "sunny " * 30),
        calls(call("dup", "first")),
        calls(call("dup", "second")),
        result("dup", "for second " * 10),
        result("dup", "for first " * 10),
        result("ghost", "orphan " * 10),
        calls(call("open", "finish")),
        user("next " * 20),
        calls(call("z", "run")),
        result("z", "done " * 30),
    ]


TRANSCRIPTS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "weather": weather_transcript,
    "awkward": awkward_transcript,
    "tools": lambda: tool_chat(5),
    "chat": lambda: long_chat(5),
}


@pytest.mark.parametrize("transcript", list(TRANSCRIPTS))
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("as_messages", [False, True])
def test_every_strategy_keeps_the_contract(transcript: str, name: str, as_messages: bool) -> None:
    convo = TRANSCRIPTS[transcript]()
    items: list[Any] = to_messages(convo) if as_messages else convo
    limit = max(1, index_of(convo).total_tokens // 2)
    strategy = all_strategies(limit)[name]()
    before = snapshot(items)
    res = apply_compaction(items, strategy)
    assert_not_mutated(before, items)
    check_all(items, res)
    assert res.status in ("unchanged", "compacted", "cannot-fit")
    if res.status == "compacted" and name in TOKEN_TARGETS:
        assert res.tokens_after <= limit
    json.loads(res.to_json())


@pytest.mark.parametrize("name", NAMES)
def test_empty_input(name: str) -> None:
    res = apply_compaction([], all_strategies(10)[name]())
    assert res.status == "unchanged"
    assert res.messages == [] and res.projection == ()
    assert res.tokens_before == res.tokens_after == 0
    assert res.decisions == ()
    json.loads(res.to_json())


@pytest.mark.parametrize("name", NAMES)
def test_only_system_messages(name: str) -> None:
    convo = [system("rule one " * 20), system("rule two " * 20)]
    res = apply_compaction(convo, all_strategies(5)[name]())
    check_all(convo, res)
    assert res.messages == convo
    assert res.status in ("unchanged", "cannot-fit")
    if res.status == "cannot-fit":
        assert res.reason


@pytest.mark.parametrize("name", NAMES)
def test_single_group_over_budget(name: str) -> None:
    convo = [system("s"), user("x" * 2000)]
    res = apply_compaction(convo, all_strategies(50)[name]())
    check_all(convo, res)
    assert res.status in ("unchanged", "cannot-fit")
    assert res.messages == convo
    if name in ("truncation", "sliding_window", "token_budget", "pipeline"):
        assert res.status == "cannot-fit"
        assert res.explanation.smallest_target == res.tokens_after
        assert res.explanation.target_tokens == 50


def test_unchanged_messages_are_the_same_objects_and_new_ones_are_wire_dicts() -> None:
    convo = weather_transcript()
    res = apply_compaction(convo, ToolResultCompactionStrategy())
    originals = {id(m) for m in convo}
    new = [m for m in res.messages if id(m) not in originals]
    assert new == [res.messages[2]]
    assert isinstance(new[0], dict) and new[0]["role"] == "assistant"
    assert from_caller(new).messages[0].text.startswith("[Tool results:")


def test_message_input_gives_message_output() -> None:
    msgs = to_messages(weather_transcript())
    res = apply_compaction(msgs, TruncationStrategy(trigger=tokens_exceed(60), minimum_preserved=2))
    assert all(isinstance(m, Message) for m in res.messages)
    assert all(any(m is x for x in msgs) for m in res.messages)
    assert res.projection == tuple(res.messages)


def test_decisions_cover_every_group() -> None:
    convo = long_chat(6)
    index = index_of(convo)
    res = apply_compaction(
        convo, SummarizationStrategy(FakeSummarizer(text="s"), trigger=tokens_exceed(100))
    )
    by_group = [d for d in res.decisions if d.group_id is not None]
    assert [d.group_id for d in by_group] == [g.id for g in index.groups]
    for d, g in zip(by_group, index.groups, strict=True):
        assert d.kind == g.kind.value
        assert d.message_indices == g.indices
        assert d.position == g.first
        assert d.turn == g.turn
        assert d.tokens_before == g.tokens
        if d.action == "kept":
            assert d.tokens_after == g.tokens
        else:
            assert d.tokens_after == 0 and d.strategy == "summarization" and d.reason
    inserted = [d for d in res.decisions if d.action == "inserted"]
    assert len(inserted) == 1
    # Decisions are in output order: the inserted summary comes right before group 1.
    order = [d.group_id for d in res.decisions]
    assert order[:3] == [0, None, 1]
    assert sum(d.tokens_after for d in res.decisions) == res.tokens_after


def test_collapsed_decisions_report_the_replacement_tokens() -> None:
    convo = weather_transcript()
    res = apply_compaction(convo, ToolResultCompactionStrategy(formatter="names"))
    collapsed = [d for d in res.decisions if d.action == "collapsed"]
    assert len(collapsed) == 1
    assert 0 < collapsed[0].tokens_after < collapsed[0].tokens_before
    assert sum(d.tokens_after for d in res.decisions) == res.tokens_after


def test_events_record_triggers_targets_and_token_flow() -> None:
    convo = long_chat(6)
    total = index_of(convo).total_tokens
    res = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(total // 2), minimum_preserved=1)
    )
    (event,) = res.events
    assert event.stage == 0
    assert event.strategy == "truncation"
    assert event.event == "applied"
    assert event.trigger == f"tokens > {total // 2}"
    assert event.target == f"tokens <= {total // 2}"
    assert event.trigger_values == {"tokens": total}
    assert (event.tokens_before, event.tokens_after) == (total, res.tokens_after)
    assert (event.messages_before, event.messages_after) == (len(convo), len(res.messages))
    assert event.groups_changed == sum(1 for d in res.decisions if d.action == "excluded")
    assert event.target_met and event.duration_ms >= 0
    assert event.to_dict()["event"] == "applied"


def test_events_for_nested_stages_are_numbered_in_order() -> None:
    convo = tool_chat(4, size=400)
    total = index_of(convo).total_tokens
    strategy = TokenBudgetComposedStrategy(
        total // 3,
        strategies=(
            PipelineStrategy(
                ToolResultCompactionStrategy(formatter="names"),
                SlidingWindowStrategy(keep_last_groups=2),
            ),
        ),
    )
    res = apply_compaction(convo, strategy)
    assert [(e.stage, e.strategy, e.depth) for e in res.events] == [
        (0, "token_budget", 0),
        (1, "pipeline", 1),
        (2, "tool_result_collapse", 2),
        (3, "sliding_window", 2),
    ]
    for earlier, later in zip(res.events[2:], res.events[3:], strict=False):
        assert later.tokens_before == earlier.tokens_after


def test_stages_protecting_for_the_same_reason_are_listed_once() -> None:
    # Two truncation stages keep the newest 3 and 5 groups; the first leaves 3, so both
    # protect those 3: the explanation names the reason once, over the same 3 groups with
    # their tokens counted once, as a single stage keeping 3 does.
    convo = long_chat(6)
    limit = index_of(convo).total_tokens // 4
    strategy = PipelineStrategy(
        TruncationStrategy(trigger=tokens_exceed(limit), minimum_preserved=3),
        TruncationStrategy(trigger=tokens_exceed(limit), minimum_preserved=5),
    )
    res = apply_compaction(convo, strategy)
    assert res.status == "cannot-fit"
    whys = [p.why for p in res.explanation.protected]
    assert whys.count("minimum_preserved") == 1 and whys.count("system") == 1
    kept = {p.why: p for p in res.explanation.protected}["minimum_preserved"]
    alone = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(limit), minimum_preserved=3)
    )
    newest = {p.why: p for p in alone.explanation.protected}["minimum_preserved"]
    assert kept.group_ids == newest.group_ids and len(kept.group_ids) == 3
    assert kept.tokens == newest.tokens
    assert res.explanation.summary.count(protection_words("minimum_preserved")) == 1


def test_cannot_fit_explains_protected_content_and_working_fixes() -> None:
    convo = long_chat(6)
    total = index_of(convo).total_tokens
    limit = total // 4
    strategy = TruncationStrategy(trigger=tokens_exceed(limit), minimum_preserved=8)
    res = apply_compaction(convo, strategy)
    assert res.status == "cannot-fit"
    assert res.reason and "Truncation" in res.reason
    why = {p.why: p for p in res.explanation.protected}
    assert len(why["minimum_preserved"].group_ids) == 8
    assert why["system"].group_ids == (0,)
    assert why["minimum_preserved"].tokens + why["system"].tokens == res.tokens_after
    assert res.explanation.target_tokens == limit
    assert res.explanation.smallest_target == res.tokens_after > limit
    suggestions = {s.parameter: s for s in res.explanation.suggestions}
    # The suggested minimum_preserved really meets the target when re-run...
    fix = suggestions["minimum_preserved"]
    fixed = apply_compaction(convo, dataclasses.replace(strategy, minimum_preserved=fix.value))
    assert fixed.status == "compacted" and fixed.tokens_after == fix.tokens_after <= limit
    assert fix.spare_tokens == limit - fix.tokens_after
    # ...and it is the gentlest such change: one more preserved group would not fit.
    closer = apply_compaction(convo, dataclasses.replace(strategy, minimum_preserved=fix.value + 1))
    assert closer.status == "cannot-fit"
    # The smallest target really is reachable with the same parameters.
    reachable = apply_compaction(
        convo,
        dataclasses.replace(strategy, target=tokens_at_most(res.explanation.smallest_target)),
    )
    assert reachable.status == "compacted"
    assert suggestions["target_tokens"].value == res.explanation.smallest_target
    # The summary names the protection in words, not by its parameter name.
    assert protection_words("minimum_preserved") in res.explanation.summary
    assert "minimum_preserved" not in res.explanation.summary


def test_compacted_and_unchanged_explanations() -> None:
    convo = long_chat(4)
    total = index_of(convo).total_tokens
    res = apply_compaction(convo, TruncationStrategy(trigger=tokens_exceed(total)))
    assert res.status == "unchanged" and res.reason is None
    assert res.explanation.summary
    res = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(total // 2), minimum_preserved=1)
    )
    assert res.status == "compacted" and res.reason is None
    assert res.explanation.target_tokens == total // 2
    assert res.tokens_saved == res.tokens_before - res.tokens_after > 0


def test_to_dict_and_json() -> None:
    convo = tool_chat(3)
    res = apply_compaction(
        convo,
        PipelineStrategy(
            ToolResultCompactionStrategy(),
            SummarizationStrategy(FakeSummarizer(text="é 🙂"), trigger=tokens_exceed(20)),
        ),
        guards=NO_GUARDS,
    )
    data = json.loads(res.to_json())
    assert data["status"] == res.status
    assert data["tokens_before"] == res.tokens_before
    assert data["tokens_after"] == res.tokens_after
    assert len(data["decisions"]) == len(res.decisions)
    assert len(data["events"]) == len(res.events)
    assert data["messages"] == res.messages
    assert "é 🙂" in res.to_json()
    slim = json.loads(res.to_json(include_messages=False, indent=None))
    assert "messages" not in slim
    msg_res = apply_compaction(to_messages(convo), ToolResultCompactionStrategy(), guards=NO_GUARDS)
    assert json.loads(msg_res.to_json())["messages"][0] == convo[0]


def test_async_twin_matches() -> None:
    convo = weather_transcript()
    strategy = TruncationStrategy(trigger=tokens_exceed(60), minimum_preserved=2)
    sync = apply_compaction(convo, strategy)
    res: CompactionResult = asyncio.run(apply_compaction_async(convo, strategy))
    assert res.status == sync.status
    assert res.tokens_after == sync.tokens_after
    assert all(a is b for a, b in zip(res.messages, sync.messages, strict=True))


def test_run_strategy_over_a_prebuilt_index() -> None:
    convo = long_chat(6)
    caller = from_caller(convo)
    index = index_of(convo)
    limit = index.total_tokens // 2
    a = run_strategy(index, TruncationStrategy(trigger=tokens_exceed(limit), minimum_preserved=1))
    b = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(limit), minimum_preserved=1)
    )
    assert [m.wire for m in a.projection] == b.messages
    c = run_strategy(
        index,
        TruncationStrategy(trigger=tokens_exceed(limit), minimum_preserved=1),
        caller=caller,
    )
    assert all(x is y for x, y in zip(c.messages, b.messages, strict=True))


@pytest.mark.parametrize("name", NAMES)
def test_config_round_trip_gives_the_same_result(name: str) -> None:
    convo = awkward_transcript()
    limit = index_of(convo).total_tokens // 2
    strategy = all_strategies(limit)[name]()
    rebuilt = strategy_from_config(strategy.to_dict(), summarizer=FakeSummarizer(text="summary"))
    assert rebuilt.to_dict() == strategy.to_dict()
    a = apply_compaction(convo, strategy)
    b = apply_compaction(convo, rebuilt)
    assert a.status == b.status
    assert a.messages == b.messages
    assert a.tokens_after == b.tokens_after


@pytest.mark.parametrize(
    "config",
    [
        {"type": "nope"},
        {"type": "truncation"},
        {"type": "truncation", "trigger": {"op": "exceed", "metric": "tokens", "n": 0}},
        {"type": "truncation", "max_n": 10, "compact_to": 5, "bogus": 1},
        {"type": "summarization", "trigger": {"op": "always"}},
        {"type": "pipeline", "strategies": "truncation"},
        {"type": "truncation", "trigger": {"op": "any", "children": 3}},
        {"type": "token_budget", "token_budget": -3},
        [],
    ],
)
def test_bad_configs_are_rejected(config: Any) -> None:
    with pytest.raises(ValueError):
        strategy_from_config(config)


def test_cannot_fit_has_a_reason_even_without_an_explanation() -> None:
    index = index_of(long_chat(3))
    res = run_strategy(index, TruncationStrategy(trigger=tokens_exceed(5)), explain=False)
    assert res.status == "cannot-fit"
    assert res.reason == run_strategy(index, TruncationStrategy(trigger=tokens_exceed(5))).reason
    assert res.reason and "Truncation" in res.reason
    ok = run_strategy(index, SlidingWindowStrategy(keep_last_turns=1), explain=False)
    assert ok.status == "compacted" and ok.reason is None


def test_what_inserted_summaries_cost_is_never_in_zero_groups() -> None:
    # Summaries are inserted, not groups of the history: the explanation gives their
    # tokens alone (review 6: "collapsed lines and summaries: 21 tokens in 0 groups").
    from compactlens.analysis import reference_pipeline

    convo = long_chat(30)
    limit = index_of(convo).total_tokens // 10
    res = apply_compaction(convo, reference_pipeline(limit))
    replaced = [p for p in res.explanation.protected if p.why == "replacement_text"]
    assert replaced and all(not p.group_ids for p in replaced)
    assert "in 0 groups" not in res.explanation.summary
    assert f"{protection_words('replacement_text')}: {replaced[0].tokens:,} tokens" in (
        res.explanation.summary
    )
