"""Property-based tests over generated transcripts and strategy parameters."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies_helpers import (
    assert_not_mutated,
    cases,
    check_all,
    index_of,
    leaf_cases,
    snapshot,
    to_messages,
    transcripts,
)

from compactlens import (
    MessageIndex,
    TokenBudgetComposedStrategy,
    TruncationStrategy,
    apply_compaction,
    run_strategy,
    tokens_exceed,
    validate_pairing,
)
from compactlens.engine import GroupKind, Plan
from compactlens.engine.guards import NO_GUARDS
from compactlens.formats import from_caller
from compactlens.model import text_message

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(data=st.data())
def test_every_strategy_keeps_the_engine_promises(data: st.DataObject) -> None:
    convo = data.draw(transcripts(), label="transcript")
    total = index_of(convo).total_tokens
    case = data.draw(cases(total), label="case")
    as_messages = data.draw(st.booleans(), label="as_messages")
    items = to_messages(convo) if as_messages else convo
    before = snapshot(items)

    res = apply_compaction(items, case.strategy)

    assert_not_mutated(before, items)
    check_all(items, res, systems=case.keeps_system)
    if res.status == "compacted" and case.limit is not None:
        assert res.tokens_after <= case.limit, (case.label, res.tokens_after, case.limit)
    if case.limit is not None and total <= case.limit:
        # A token trigger is strict: at or under the limit nothing fires.
        assert res.status == "unchanged", (case.label, total, case.limit)


@SETTINGS
@given(data=st.data())
def test_truncation_meets_target_or_explains(data: st.DataObject) -> None:
    convo = data.draw(transcripts(), label="transcript")
    index = index_of(convo)
    n = data.draw(st.integers(1, max(1, index.total_tokens)), label="limit")
    mp = data.draw(st.integers(0, 3), label="minimum_preserved")
    res = run_strategy(
        index, TruncationStrategy(trigger=tokens_exceed(n), minimum_preserved=mp), guards=NO_GUARDS
    )
    if index.total_tokens <= n:
        assert res.status == "unchanged"
        return
    if res.status == "compacted":
        assert res.tokens_after <= n
    else:
        assert res.status == "cannot-fit"
        # Only protected content is left: system groups and the newest mp non-system groups.
        kept = [d for d in res.decisions if d.action == "kept"]
        non_system = [d for d in kept if d.kind != "system"]
        assert len(non_system) <= mp
        assert res.explanation.smallest_target == res.tokens_after > n
        assert res.explanation.protected


@SETTINGS
@given(convo=transcripts())
def test_validate_pairing_agrees_on_wire_and_messages(convo: list[dict[str, object]]) -> None:
    msgs = to_messages(convo)
    assert validate_pairing(convo) == validate_pairing(msgs)
    index = MessageIndex.build(msgs)
    assert list(index.problems) == validate_pairing(msgs)
    # Every message belongs to exactly one group; groups are ordered by first message.
    seen = sorted(k for g in index.groups for k in g.indices)
    assert seen == list(range(len(msgs)))
    firsts = [g.first for g in index.groups]
    assert firsts == sorted(firsts)
    for link in index.links:
        group = index.group_of[link.call_index]
        assert all(index.group_of[k] == group for k in link.result_indices)


@SETTINGS
@given(convo=transcripts())
def test_wire_output_round_trips(convo: list[dict[str, object]]) -> None:
    """Wire dicts the engine emits parse back to the projection it reports."""
    res = apply_compaction(convo, TruncationStrategy(trigger=tokens_exceed(1), minimum_preserved=2))
    again = from_caller(res.messages).messages
    assert [(m.role, m.parts) for m in again] == [(m.role, m.parts) for m in res.projection]


@SETTINGS
@given(data=st.data())
def test_token_budget_never_returns_an_empty_projection(data: st.DataObject) -> None:
    convo = data.draw(transcripts().filter(bool), label="transcript")
    total = index_of(convo).total_tokens
    budget = data.draw(st.integers(1, max(1, total)), label="budget")
    children = data.draw(st.lists(leaf_cases(total), max_size=2), label="children")
    strategy = TokenBudgetComposedStrategy(
        budget,
        strategies=tuple(c.strategy for c in children),
        drop_system_if_needed=data.draw(st.booleans(), label="drop_system"),
    )
    res = apply_compaction(convo, strategy)
    assert res.messages, res.to_dict(include_messages=False)
    check_all(convo, res, systems=False)


@SETTINGS
@given(data=st.data())
def test_plan_running_totals_match_a_recount(data: st.DataObject) -> None:
    """Every exclusion, collapse and restore keeps the O(1) metrics equal to a recount."""
    convo = data.draw(transcripts(), label="transcript")
    index = index_of(convo)
    plan = Plan(index)
    line = text_message("assistant", "[collapsed]")
    steps = data.draw(
        st.lists(
            st.tuples(st.integers(0, max(0, index.total_groups - 1)), st.booleans()),
            max_size=index.total_groups + 3,
        ),
        label="steps",
    )
    for gid, collapse in steps:
        if not index.groups:
            break
        if collapse and plan.untouched(gid):
            plan.collapse(gid, line, 3, "test", "collapse")
        elif plan.included(gid):
            plan.exclude(gid, "test", "exclude")
        else:
            plan.restore(gid, "test", "restore")
        included = [g for g in index.groups if plan.included(g.id)]
        assert plan.tokens == sum(plan.group_tokens(g.id) for g in included)
        assert plan.messages == sum(
            g.message_count if plan.untouched(g.id) else 1 for g in included
        )
        assert plan.groups == sum(1 for g in included if not g.is_system)
        assert plan.turns == len({g.turn for g in included if g.turn is not None})
        assert plan.tool_call_groups == sum(
            1 for g in included if g.kind is GroupKind.TOOL_CALL and plan.untouched(g.id)
        )
        assert len(plan.project()) == plan.messages
