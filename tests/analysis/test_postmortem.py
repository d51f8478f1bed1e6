"""Post-mortem of recorded compactions: fact survival of the agent's summary and of
what compactlens would keep from the same history."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import load_transcript
from compactlens.analysis import (
    REFERENCE_LABEL,
    Postmortem,
    conversation_facts,
    fact_survival,
    minor_kind,
    postmortem,
    reference_pipeline,
)
from compactlens.engine.strategies.config import strategy_from_config

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def test_every_recorded_compaction_is_measured_with_recall() -> None:
    for name in ("claude_code_compacted.jsonl", "codex_rollout.jsonl", "inspect_log.json"):
        t = load_transcript(FIXTURES / name)
        pm = postmortem(t)
        assert len(pm.compactions) == len(t.compactions) >= 1, name
        for c in pm.compactions:
            assert c.agent is not None and c.agent.recall is not None
            history = list(c.recorded.replaced or ())
            # Every side is measured on the facts of the history (minor values apart).
            facts = [f for f in conversation_facts(history) if minor_kind(f) is None]
            assert c.agent.extracted == len(facts)
            (ref,) = c.strategies
            assert ref.label == REFERENCE_LABEL
            assert ref.extracted == len(facts)
            assert ref.recall is not None and 0.0 <= ref.recall <= 1.0


def test_the_agent_side_is_the_fact_check_of_its_summary() -> None:
    t = load_transcript(FIXTURES / "claude_code_compacted.jsonl")
    pm = postmortem(t)
    for c in pm.compactions:
        rec = c.recorded
        assert rec.replaced is not None and rec.after is not None
        expected = fact_survival(rec.replaced, rec.after, range(len(rec.replaced)))
        assert c.agent is not None
        assert (c.agent.extracted, c.agent.survived) == (expected.extracted, expected.survived)
        assert c.agent.lost == tuple(f.value for f in expected.lost)


def test_a_strategy_that_keeps_everything_has_full_recall() -> None:
    t = load_transcript(FIXTURES / "codex_rollout.jsonl")
    keep_all = strategy_from_config({"type": "truncation", "max_n": 10**9, "compact_to": 10**9})
    pm = postmortem(t, [("keep all", lambda _b: keep_all), (REFERENCE_LABEL, reference_pipeline)])
    c = pm.compactions[0]
    assert [o.label for o in c.strategies] == ["keep all", REFERENCE_LABEL]
    kept = c.strategies[0]
    assert kept.status == "unchanged" and kept.recall == 1.0
    assert kept.tokens_after == c.history_tokens


def test_strategies_are_sized_to_what_the_agent_kept() -> None:
    seen: list[int] = []

    def factory(budget: int):  # type: ignore[no-untyped-def]
        seen.append(budget)
        return reference_pipeline(budget)

    pm = postmortem(load_transcript(FIXTURES / "claude_code_compacted.jsonl"), [("r", factory)])
    assert seen == [c.budget for c in pm.compactions]
    assert all(b > 0 for b in seen)


def test_result_is_json_serializable_and_frozen() -> None:
    pm = postmortem(load_transcript(FIXTURES / "inspect_log.json"))
    assert isinstance(pm, Postmortem)
    data = json.loads(json.dumps(pm.to_dict()))
    assert data["format"] == "inspect-ai"
    assert data["compactions"][0]["agent"]["recall"] == round(pm.compactions[0].agent.recall, 6)  # type: ignore[union-attr]
    try:
        pm.compactions[0].budget = 1  # type: ignore[misc]
    except AttributeError:
        pass
    else:  # pragma: no cover
        raise AssertionError("CompactionPostmortem must be frozen")


def test_a_compaction_without_its_history_is_listed_but_not_measured() -> None:
    lines = [
        {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto"}},
        {
            "type": "user",
            "isCompactSummary": True,
            "sessionId": "s",
            "message": {"role": "user", "content": "Summary: did things"},
        },
        {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "next"}},
    ]
    pm = postmortem(load_transcript(lines))
    (c,) = pm.compactions
    assert c.agent is None and c.strategies == () and "not in this file" in c.recorded.note


def test_an_encrypted_summary_has_no_recall() -> None:
    enc = {"type": "compaction", "encrypted_content": "gAAA"}
    records = [
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": "fix /a/b.py"},
        },
        {"type": "compacted", "payload": {"message": "", "replacement_history": [enc]}},
    ]
    (c,) = postmortem(load_transcript(records, "codex")).compactions
    assert c.agent is not None and c.agent.status == "unreadable" and c.agent.recall is None


words = st.text(alphabet="abcdefgh /._", min_size=1, max_size=30)


@settings(max_examples=30, deadline=None)
@given(turns=st.lists(st.tuples(words, words), min_size=1, max_size=6), summary=words)
def test_recall_is_a_fraction_and_a_verbatim_summary_keeps_everything(
    turns: list[tuple[str, str]], summary: str
) -> None:
    events = []
    for q, a in turns:
        events.append({"type": "user", "sessionId": "s", "message": {"role": "user", "content": q}})
        events.append(
            {"type": "assistant", "sessionId": "s", "message": {"role": "assistant", "content": a}}
        )
    verbatim = "\n".join(f"{q}\n{a}" for q, a in turns)
    for text in (summary, verbatim):
        log = [
            *events,
            {"type": "system", "subtype": "compact_boundary", "compactMetadata": {}},
            {
                "type": "user",
                "isCompactSummary": True,
                "sessionId": "s",
                "message": {"role": "user", "content": text},
            },
        ]
        (c,) = postmortem(load_transcript(log, "claude-code")).compactions
        assert c.agent is not None and c.agent.recall is not None
        assert 0.0 <= c.agent.recall <= 1.0
        assert c.agent.survived <= c.agent.extracted
        if text is verbatim:
            assert c.agent.recall == 1.0


def test_a_strategy_is_at_equal_size_only_when_it_fits_the_room_the_agent_kept() -> None:
    t = load_transcript(FIXTURES / "claude_code_compacted.jsonl")
    drop_all = {
        "type": "truncation",
        "minimum_preserved": 0,
        "preserve_system": False,
    }

    def everything(_budget: int) -> object:
        never = {"op": "exceed", "metric": "tokens", "n": 10**9}
        return strategy_from_config({"type": "truncation", "trigger": never})

    def to_budget(budget: int) -> object:
        trigger = {"op": "exceed", "metric": "tokens", "n": max(1, budget)}
        return strategy_from_config({**drop_all, "trigger": trigger})

    pm = postmortem(t, [("keeps all", everything), ("to budget", to_budget)])  # type: ignore[list-item]
    for c in pm.compactions:
        keeps_all, sized = c.strategies
        assert keeps_all.tokens_after == c.history_tokens > c.budget
        assert not c.at_equal_size(keeps_all)
        assert c.at_equal_size(sized) == (
            sized.status != "cannot-fit" and sized.tokens_after <= c.budget
        )
        flags = [s["at_equal_size"] for s in c.to_dict()["strategies"]]
        assert flags == [False, c.at_equal_size(sized)]


def test_a_context_window_judges_every_side_against_it() -> None:
    # A window under what the agent kept: each side that holds more than the model
    # accepts says so (first among its costs when it fits the agent's size); a window
    # above the history changes nothing.
    t = load_transcript(FIXTURES / "claude_code_compacted.jsonl")
    plain = postmortem(t)
    c = plain.compactions[0]
    assert c.agent is not None and c.agent.verdict is not None
    assert "context-window" not in [r.code for r in c.agent.verdict.costs]
    small = postmortem(t, context_window=max(1, c.budget // 2)).compactions[0]
    sides = [small.agent, *small.strategies]
    for side in sides:
        assert side is not None and side.verdict is not None
        if side.tokens_after > c.budget // 2:
            codes = [r.code for r in side.verdict.costs]
            assert "context-window" in codes, side.label
            if side.verdict.level == "costs":
                assert codes[0] == "context-window", side.label
            assert side.verdict.level != "safe"
    wide = postmortem(t, context_window=10 * c.history_tokens).compactions[0]
    assert wide.agent is not None and wide.agent.verdict is not None
    assert wide.agent.verdict.level == c.agent.verdict.level
