"""Each stage event names the groups that stage changed."""

from __future__ import annotations

from strategies_helpers import assistant, call, calls, result, system, user

from compactlens import (
    PipelineStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    tokens_exceed,
)


def _convo() -> list[dict[str, object]]:
    out: list[dict[str, object]] = [system("be brief")]
    for t in range(8):
        out += [
            user(f"question {t} " + "q" * 80),
            calls(call(f"c{t}", "search")),
            result(f"c{t}", "r" * 900),
            assistant(f"answer {t} " + "a" * 80),
        ]
    return out


def test_stage_events_list_the_groups_they_changed() -> None:
    strategy = PipelineStrategy(
        ToolResultCompactionStrategy(tokens_exceed(1500), formatter="names", label="collapse"),
        TruncationStrategy(tokens_exceed(600), minimum_preserved=3, label="truncate"),
    )
    res = apply_compaction(_convo(), strategy)
    by_stage = {e.strategy: e for e in res.events}
    kinds = {d.group_id: d.kind for d in res.decisions}
    excluded = [d.group_id for d in res.decisions if d.action == "excluded"]
    collapsed_by_stage = by_stage["collapse"].group_ids
    assert collapsed_by_stage and excluded
    assert {kinds[g] for g in collapsed_by_stage} == {"tool_call"}
    # Truncation may later exclude groups that the collapse stage had collapsed.
    assert set(by_stage["truncate"].group_ids) == set(excluded)
    assert list(by_stage["truncate"].group_ids) == sorted(by_stage["truncate"].group_ids)
    pipeline = by_stage["pipeline"]
    assert pipeline.group_ids == by_stage["collapse"].group_ids + by_stage["truncate"].group_ids
    assert res.to_dict()["events"][0]["group_ids"] == list(pipeline.group_ids)


def test_a_skipped_stage_changes_no_group() -> None:
    res = apply_compaction(_convo(), TruncationStrategy(tokens_exceed(10**6)))
    assert res.status == "unchanged"
    assert res.events[0].group_ids == ()
    assert res.events[0].inserted == 0


def test_result_problems_match_a_fresh_pairing_check() -> None:
    from compactlens import SlidingWindowStrategy, validate_pairing

    convo = _convo()
    # A result that arrives after an unrelated message: a split pair in the input.
    convo.insert(3, user("interjection"))
    for strategy in (
        TruncationStrategy(tokens_exceed(600), minimum_preserved=3),
        SlidingWindowStrategy(keep_last_turns=2),
        ToolResultCompactionStrategy(tokens_exceed(600), formatter="names"),
    ):
        res = apply_compaction(convo, strategy)
        assert list(res.problems) == validate_pairing(res.messages)
        clean = apply_compaction(_convo(), strategy)
        assert list(clean.problems) == validate_pairing(clean.messages) == []
    assert len(res.decisions) == len(list(res.decisions))
    assert res.decisions == tuple(res.decisions)
