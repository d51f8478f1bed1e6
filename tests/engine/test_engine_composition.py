"""PipelineStrategy and TokenBudgetComposedStrategy scenarios."""

from __future__ import annotations

import dataclasses

import pytest
from strategies_helpers import (
    assistant,
    check_all,
    index_of,
    long_chat,
    system,
    tool_chat,
    user,
)

from compactlens import (
    PipelineStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    SummarizationStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    tokens_exceed,
)
from compactlens.engine import tokens_at_most
from compactlens.engine.guards import NO_GUARDS
from compactlens.summarizers import FakeSummarizer

# --------------------------------------------------------------------------- pipeline


def test_each_stage_checks_its_own_trigger_against_what_the_previous_left() -> None:
    convo = tool_chat(6, size=400)
    total = index_of(convo).total_tokens
    first = SelectiveToolCallCompactionStrategy(
        trigger=tokens_exceed(total // 2), keep_last_tool_call_groups=1
    )
    second = TruncationStrategy(trigger=tokens_exceed(total - 10), minimum_preserved=1)
    res = apply_compaction(convo, PipelineStrategy(first, second))
    check_all(convo, res)
    assert res.status == "compacted"
    events = [(e.strategy, e.event, e.depth) for e in res.events]
    assert events == [
        ("pipeline", "applied", 0),
        ("selective_tool_calls", "applied", 1),
        ("truncation", "skipped", 1),
    ]
    # The second stage saw the tokens the first one left.
    assert res.events[2].tokens_before == res.events[1].tokens_after <= total // 2
    assert res.events[2].trigger_values == {"tokens": res.events[1].tokens_after}


def test_a_later_stage_fires_when_the_earlier_one_is_not_enough() -> None:
    convo = tool_chat(4, size=400)
    total = index_of(convo).total_tokens
    gentle = ToolResultCompactionStrategy(trigger=tokens_exceed(total // 4), formatter="names")
    hard = TruncationStrategy(trigger=tokens_exceed(total // 10), minimum_preserved=1)
    res = apply_compaction(convo, PipelineStrategy(gentle, hard))
    check_all(convo, res)
    assert [e.event for e in res.events[1:]] in (
        ["applied", "applied"],
        ["target-missed", "applied"],
    )
    assert res.tokens_after <= total // 10
    assert res.status == "compacted"
    actions = {d.action for d in res.decisions}
    assert "collapsed" in actions or "excluded" in actions


def test_pipeline_with_nothing_to_do_is_unchanged() -> None:
    convo = long_chat(2)
    res = apply_compaction(
        convo,
        PipelineStrategy(
            TruncationStrategy(trigger=tokens_exceed(10_000)),
            SlidingWindowStrategy(keep_last_turns=5),
        ),
    )
    assert res.status == "unchanged"
    assert all(a is b for a, b in zip(res.messages, convo, strict=True))
    assert [e.event for e in res.events] == ["skipped", "skipped", "skipped"]


def test_pipeline_target_is_checked_on_the_final_state() -> None:
    convo = long_chat(6)
    total = index_of(convo).total_tokens
    stage = SlidingWindowStrategy(keep_last_turns=5)
    ok = apply_compaction(convo, PipelineStrategy(stage, target=tokens_at_most(total)))
    assert ok.status == "compacted"
    missed = apply_compaction(convo, PipelineStrategy(stage, target=tokens_at_most(5)))
    assert missed.status == "cannot-fit" and missed.reason


def test_pipeline_summarizer_failure_keeps_earlier_work_and_reports() -> None:
    convo = tool_chat(4, size=400)
    total = index_of(convo).total_tokens
    collapse = ToolResultCompactionStrategy(formatter="names")
    summarize = SummarizationStrategy(
        FakeSummarizer(raises=ConnectionError("offline")), trigger=tokens_exceed(total // 10)
    )
    res = apply_compaction(convo, PipelineStrategy(collapse, summarize))
    check_all(convo, res)
    assert res.status == "cannot-fit"
    assert "summarizer failed" in (res.reason or "")
    assert [e.event for e in res.events[1:]] == ["applied", "failed"]
    assert any(d.action == "collapsed" for d in res.decisions)


def test_pipeline_needs_a_stage() -> None:
    with pytest.raises(ValueError):
        PipelineStrategy()


# --------------------------------------------------------------------------- token budget


def test_budget_met_by_the_first_child_stops_early() -> None:
    convo = tool_chat(6, size=400)
    total = index_of(convo).total_tokens
    budget = total * 2 // 3
    children = (
        SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1),
        TruncationStrategy(trigger=tokens_exceed(1), minimum_preserved=1),
    )
    res = apply_compaction(
        convo, TokenBudgetComposedStrategy(budget, strategies=children), guards=NO_GUARDS
    )
    check_all(convo, res)
    assert res.status == "compacted" and res.tokens_after <= budget
    assert [e.strategy for e in res.events] == ["token_budget", "selective_tool_calls"]

    res = apply_compaction(
        convo,
        TokenBudgetComposedStrategy(budget, strategies=children, early_stop=False),
        guards=NO_GUARDS,
    )
    check_all(convo, res)
    assert [e.strategy for e in res.events] == [
        "token_budget",
        "selective_tool_calls",
        "truncation",
    ]
    assert len(res.messages) == 2  # system + the newest group


def test_budget_fallback_excludes_oldest_non_system_groups() -> None:
    convo = long_chat(6)
    index = index_of(convo)
    budget = index.total_tokens // 2
    res = apply_compaction(convo, TokenBudgetComposedStrategy(budget))
    check_all(convo, res)
    assert res.status == "compacted" and res.tokens_after <= budget
    excluded = [d.group_id for d in res.decisions if d.action == "excluded"]
    assert excluded == list(range(1, 1 + len(excluded)))
    assert res.messages[0] is convo[0]
    assert res.events[0].detail.startswith("fallback excluded")


def test_budget_never_empties_the_projection() -> None:
    convo = [system("s" * 400), user("u" * 4000)]
    res = apply_compaction(convo, TokenBudgetComposedStrategy(5))
    assert res.status == "cannot-fit"
    assert res.messages == convo
    # Dropping the system message would not be enough: no such suggestion.
    assert {s.parameter for s in res.explanation.suggestions} == {"target_tokens"}

    convo = [system("s" * 400), user("u" * 40)]
    res = apply_compaction(convo, TokenBudgetComposedStrategy(20))
    assert res.status == "cannot-fit" and res.messages == convo
    fix = {s.parameter: s for s in res.explanation.suggestions}
    assert fix["drop_system_if_needed"].value is True
    assert fix["drop_system_if_needed"].tokens_after <= 20
    again = apply_compaction(convo, TokenBudgetComposedStrategy(20, drop_system_if_needed=True))
    assert again.status == "compacted" and again.messages == [convo[1]]


def test_budget_drops_system_only_when_allowed_and_never_the_last_message() -> None:
    convo = [system("a" * 400), system("b" * 400), user("u"), assistant("v" * 400)]
    res = apply_compaction(
        convo, TokenBudgetComposedStrategy(20, drop_system_if_needed=True), guards=NO_GUARDS
    )
    check_all(convo, res, systems=False)
    assert res.messages == [convo[3]]
    assert res.status == "cannot-fit"

    only_system = [system("a" * 40), system("b" * 40)]
    res = apply_compaction(
        only_system, TokenBudgetComposedStrategy(1, drop_system_if_needed=True), guards=NO_GUARDS
    )
    assert res.messages == [only_system[1]]
    assert res.status == "cannot-fit"
    res = apply_compaction(only_system, TokenBudgetComposedStrategy(1), guards=NO_GUARDS)
    assert res.messages == only_system


def test_budget_with_a_summarizing_child() -> None:
    convo = long_chat(8)
    budget = index_of(convo).total_tokens // 3
    child = SummarizationStrategy(FakeSummarizer(text="short"), trigger=tokens_exceed(budget))
    res = apply_compaction(convo, TokenBudgetComposedStrategy(budget, strategies=(child,)))
    check_all(convo, res)
    assert res.status == "compacted" and res.tokens_after <= budget
    assert res.projection[1].is_summary


def test_budget_under_the_limit_is_unchanged() -> None:
    convo = long_chat(2)
    total = index_of(convo).total_tokens
    res = apply_compaction(convo, TokenBudgetComposedStrategy(total))
    assert res.status == "unchanged"
    res = apply_compaction([], TokenBudgetComposedStrategy(1))
    assert res.status == "unchanged" and res.messages == []


@pytest.mark.parametrize(
    "kwargs",
    [{"token_budget": 0}, {"token_budget": 10, "minimum_preserved": 0}, {"token_budget": 1.5}],
)
def test_budget_invalid_parameters(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        TokenBudgetComposedStrategy(**kwargs)  # type: ignore[arg-type]


def test_explanations_never_call_the_summarizer_again() -> None:
    """Cannot-fit suggestions re-run variants; they replay the summary instead of re-asking."""
    convo = long_chat(10)
    fake = FakeSummarizer(text="s")
    summarize = SummarizationStrategy(fake, trigger=tokens_exceed(50), minimum_preserved=6)
    truncate = TruncationStrategy(trigger=tokens_exceed(150), minimum_preserved=5)
    res = apply_compaction(convo, PipelineStrategy(summarize, truncate))
    assert res.status == "cannot-fit"
    assert fake.call_count == 1
    fix = {s.parameter: s for s in res.explanation.suggestions}["truncation.minimum_preserved"]
    # The replayed suggestion is what a real re-run gives.
    again = FakeSummarizer(text="s")
    rerun = apply_compaction(
        convo,
        PipelineStrategy(
            dataclasses.replace(summarize, summarizer=again),
            dataclasses.replace(truncate, minimum_preserved=fix.value),
        ),
    )
    assert rerun.status == "compacted"
    assert rerun.tokens_after == fix.tokens_after <= 150

    # The token budget's variants replay the summary as well.
    fake = FakeSummarizer(text="s")
    budget = TokenBudgetComposedStrategy(
        5, strategies=(SummarizationStrategy(fake, trigger=tokens_exceed(50)),)
    )
    res = apply_compaction(convo, budget)
    assert res.status == "cannot-fit"
    assert fake.call_count == 1


def test_budget_restores_a_group_when_a_stage_removed_everything() -> None:
    convo = tool_chat(3)[2:-1]  # only tool-call groups: no system, user or answer
    child = SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=0)
    alone = apply_compaction(convo, child, provider="any")
    assert alone.messages == []  # the child alone may empty a transcript it is told to...
    res = apply_compaction(
        convo, TokenBudgetComposedStrategy(1, strategies=(child,)), provider="any"
    )
    check_all(convo, res, systems=False)
    assert res.messages == convo[-2:]  # ...but the budget brings back the newest group
    restored = [d for d in res.decisions if d.strategy == "token_budget" and d.action == "kept"]
    assert len(restored) == 1 and "never empty" in restored[0].reason
    assert res.status == "cannot-fit"
    assert "restored group" in res.events[0].detail
    # Under a provider even the child alone keeps one group: no API takes an empty request.
    kept = apply_compaction(convo, child, provider="openai-chat")
    assert kept.messages == convo[-2:] and kept.status == "compacted"
    assert "rejects an empty request" in kept.events[-1].detail
