"""Pairing and role-order checks per provider, with the message index of each problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis_helpers import assistant, call, result, small_transcript, system, user
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import (
    CharEstimator,
    MessageIndex,
    ToolResultCompactionStrategy,
    Transcript,
    TruncationStrategy,
    analyze,
    apply_compaction,
    load_transcript,
    tokens_exceed,
)
from compactlens.analysis import PROVIDERS, check_protocol
from compactlens.analysis.protocol import DEFAULT_PROVIDERS, chosen_providers
from compactlens.formats.caller import from_caller


def kinds(messages: list[Any], provider: str | None = None) -> set[tuple[str, str, int]]:
    return {
        (p.provider, p.kind, p.message_index)
        for p in check_protocol(messages)
        if provider is None or p.provider == provider
    }


def test_a_valid_conversation_has_no_problems() -> None:
    assert check_protocol(small_transcript()) == ()


def test_parallel_results_and_reasoning_merge_into_their_turns() -> None:
    convo = [
        system(),
        user("Compare both."),
        {"role": "assistant", "content": None, "reasoning_content": "Need both prices."},
        assistant(None, [call("a", "price", {"sku": "X1"}), call("b", "price", {"sku": "Y2"})]),
        result("a", "10"),
        result("b", "12"),
        assistant("Y2 costs 2 more."),
    ]
    assert check_protocol(convo) == ()


def test_a_result_after_an_unrelated_message_breaks_pairing_everywhere() -> None:
    convo = [
        user("Find a flight."),
        assistant(None, [call("c1", "search")]),
        user("Make it Tuesday."),
        result("c1", "3 flights"),
        assistant("Found 3."),
    ]
    found = kinds(convo)
    assert ("any", "split_pair", 3) in found
    assert ("anthropic", "tool_result_not_next", 1) in found
    assert ("anthropic", "consecutive_roles", 3) in found  # user, then the tool result (user)


def test_an_orphan_result_is_reported_at_its_message() -> None:
    convo = [user("hi"), result("ghost", "boo"), assistant("hello")]
    assert ("any", "orphan_result", 1) in kinds(convo)


def test_a_second_answer_to_an_answered_call_is_an_orphan() -> None:
    convo = [
        user("go"),
        assistant(None, [call("c1", "a")]),
        result("c1", "done"),
        assistant("now the second"),
        result("c1", "again"),
    ]
    assert ("any", "orphan_result", 4) in kinds(convo)


def test_a_user_message_after_tool_results_joins_their_anthropic_turn() -> None:
    convo = [
        user("go"),
        assistant(None, [call("c1", "a"), call("c2", "b")]),
        result("c1", "done"),
        result("c2", "done"),
        user("and?"),
        assistant("Both done."),
    ]
    assert check_protocol(convo) == ()
    convo.insert(5, user("hello?"))
    assert ("anthropic", "consecutive_roles", 5) in kinds(convo)


def test_empty_assistant_messages() -> None:
    convo = [user("hi"), assistant(None), user("hello?"), assistant("")]
    found = kinds(convo)
    assert ("openai-chat", "empty_assistant", 1) in found
    assert ("anthropic", "empty_content", 1) in found
    assert ("anthropic", "empty_content", 3) not in found  # a final assistant may be empty


def test_anthropic_needs_a_user_message_first_and_alternating_roles() -> None:
    convo = [system(), assistant("Hello!"), assistant("How can I help?"), user("Hi")]
    found = kinds(convo, "anthropic")
    assert ("anthropic", "first_not_user", 1) in found
    assert ("anthropic", "consecutive_roles", 2) in found
    assert kinds(convo, "openai-chat") == set()


def test_a_late_system_message_is_a_warning_for_anthropic() -> None:
    convo = [system(), user("hi"), assistant("hello"), system("Be brief."), user("ok")]
    problems = [p for p in check_protocol(convo) if p.kind == "system_not_leading"]
    assert [(p.provider, p.message_index, p.severity) for p in problems] == [
        ("anthropic", 3, "warning")
    ]


def test_providers_can_be_chosen() -> None:
    convo = [assistant("Hello!")]
    assert {p.provider for p in check_protocol(convo, ["openai-chat"])} <= {"any", "openai-chat"}
    assert ("anthropic", "first_not_user", 0) in kinds(convo)


def test_truncation_that_drops_the_first_user_message_is_flagged_as_introduced() -> None:
    wire = small_transcript()
    wire.insert(2, assistant("Let me check."))  # two assistant groups after the first user
    total = apply_compaction(wire, TruncationStrategy(trigger=tokens_exceed(10**6))).tokens_after
    strategy = TruncationStrategy(trigger=tokens_exceed(total - 1), minimum_preserved=6)
    res = apply_compaction(wire, strategy)
    assert res.status == "compacted"
    assert [d.position for d in res.decisions if d.action == "excluded"] == [1]
    report = analyze(wire, res)
    introduced = {(p.provider, p.kind, p.message_index) for p in report.introduced}
    assert ("anthropic", "first_not_user", 1) in introduced
    assert any("introduced" in w for w in report.warnings)


def test_problems_the_original_already_had_are_not_counted_as_introduced() -> None:
    wire = [
        system(),
        user("Look it up."),
        assistant(None, [call("c1", "lookup")]),
        result("c1", "found ABC-12345"),
        assistant("Found it."),
        user("Finish."),
        assistant(None, [call("c2", "finish")]),  # a dangling final call
    ]
    res = apply_compaction(
        wire, ToolResultCompactionStrategy(keep_last_tool_call_groups=1, skip_if_larger=False)
    )
    report = analyze(wire, res)
    assert ("any", "unresolved_call") in {(p.provider, p.kind) for p in report.problems}
    assert "unresolved_call" not in {p.kind for p in report.introduced}
    # collapsing the first call turns it into assistant text next to another assistant message
    assert ("anthropic", "consecutive_roles") in {(p.provider, p.kind) for p in report.introduced}


# Messages in any order, with calls and results whose ids repeat, go missing or answer
# nothing: every pairing problem and role-order rule gets exercised.
_IDS = st.sampled_from(["a", "b", "c"])
_MESSAGE = st.one_of(
    st.builds(system),
    st.builds(user, st.sampled_from(["Hi.", "Go on."])),
    st.builds(assistant, st.sampled_from([None, "Done."])),
    st.builds(
        lambda ids: assistant(None, [call(i, "tool") for i in ids]),
        st.lists(_IDS, min_size=1, max_size=3),
    ),
    st.builds(result, _IDS, st.sampled_from(["ok", ""])),
)


@settings(max_examples=300, deadline=None)
@given(wire=st.lists(_MESSAGE, max_size=12), other=st.lists(_MESSAGE, max_size=12))
def test_an_index_over_the_same_messages_gives_the_same_problems(
    wire: list[Any], other: list[Any]
) -> None:
    """``check_protocol(..., index=...)`` takes the pairing problems an index recorded
    (what the report does with the indexes it builds anyway): the same answer as
    scanning; an index over other messages is not used."""
    messages = from_caller(wire).messages
    plain = check_protocol(messages, PROVIDERS)
    index = MessageIndex.build(messages, CharEstimator())
    assert check_protocol(messages, PROVIDERS, index=index) == plain
    elsewhere = MessageIndex.build(from_caller(other).messages, CharEstimator())
    assert check_protocol(messages, PROVIDERS, index=elsewhere) == plain


# --- the transcript's own API (issue 29) -------------------------------------------------

CODEX_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/formats/codex_parallel_calls.jsonl"


def _developer_positions(t: Transcript) -> list[int]:
    return [i for i, m in enumerate(t.messages) if m.role == "developer"]


def test_a_codex_rollout_is_checked_for_the_responses_api_by_default() -> None:
    """Codex sends mid-conversation developer messages, which the Responses API accepts
    where they are: checked for its own API, the rollout has no problem."""
    t = load_transcript(CODEX_FIXTURE)
    late = [i for i in _developer_positions(t) if i > 0]
    assert late  # the fixture has a developer message after the conversation started
    assert check_protocol(t.messages) == ()
    assert chosen_providers(None, from_caller(t.messages)) == (
        ("openai-responses",),
        "checked for OpenAI Responses, the transcript's own API",
    )


def test_explicit_providers_still_check_a_codex_rollout_for_them() -> None:
    t = load_transcript(CODEX_FIXTURE)
    problems = check_protocol(t.messages, ["openai-chat", "anthropic"])
    late = [p.message_index for p in problems if p.kind == "system_not_leading"]
    assert late == [i for i in _developer_positions(t) if i > 0]
    assert {p.provider for p in problems} == {"anthropic"}
    chosen = chosen_providers(["anthropic", "gemini"], from_caller(t.messages))
    assert chosen == (("anthropic", "gemini"), "checked for Anthropic and Gemini, as chosen")


def test_wire_dicts_are_checked_for_the_default_providers() -> None:
    assert chosen_providers(None, from_caller(small_transcript())) == (
        DEFAULT_PROVIDERS,
        "checked for OpenAI Chat Completions and Anthropic, the default",
    )


def test_the_report_says_which_providers_it_checked() -> None:
    t = load_transcript(CODEX_FIXTURE)
    result = apply_compaction(t.messages, TruncationStrategy(trigger=tokens_exceed(10)))
    report = analyze(t, result)
    assert report.providers == ("openai-responses",)
    assert report.providers_note == "checked for OpenAI Responses, the transcript's own API"
    assert report.to_dict()["providers_note"] == report.providers_note
    assert not [p for p in report.problems if p.kind == "system_not_leading"]
    chosen = analyze(t, result, providers=["anthropic"])
    assert chosen.providers == ("anthropic",)
    assert chosen.providers_note == "checked for Anthropic, as chosen"
    wire = small_transcript()
    plain = analyze(wire, apply_compaction(wire, TruncationStrategy(trigger=tokens_exceed(10))))
    assert plain.providers == DEFAULT_PROVIDERS
    assert plain.providers_note == "checked for OpenAI Chat Completions and Anthropic, the default"
