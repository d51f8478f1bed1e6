"""Guards (keep the latest request, pins, per-tool policies), the clamp strategy and
provider-valid cuts."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies_helpers import (
    assistant,
    call,
    calls,
    cases,
    check_all,
    index_of,
    result,
    system,
    transcripts,
    user,
)

from compactlens import (
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    tokens_exceed,
)
from compactlens.engine import NO_GUARDS, Guards, PipelineStrategy, latest_request_index
from compactlens.engine.providers import (
    PROVIDERS,
    errors_only,
    has_content,
    opens_with_user_turn,
    provider_problems,
)
from compactlens.engine.repair import OMITTED_NOTE
from compactlens.engine.strategies.clamp import ClampStrategy
from compactlens.formats import from_caller

SETTINGS = settings(
    max_examples=int(__import__("os").environ.get("CL_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def sub_agent(groups: int = 12, size: int = 400) -> list[dict[str, Any]]:
    """One user request, then a long run of tool work (a sub-agent transcript)."""
    out: list[dict[str, Any]] = [user("Find why the build fails and fix it.")]
    for k in range(groups):
        out.append(calls(call(f"c{k}", "read_file" if k % 2 else "grep")))
        out.append(result(f"c{k}", f"output {k} " + "x" * size))
    out.append(assistant("Fixed: the import path was wrong."))
    return out


def claude_code_like(turns: int = 6, size: int = 300) -> list[dict[str, Any]]:
    """No system message; each turn a request, tool work, an answer."""
    out: list[dict[str, Any]] = []
    for t in range(turns):
        out.append(user(f"request {t}"))
        out.append(calls(call(f"t{t}", "bash")))
        out.append(result(f"t{t}", "y" * size))
        out.append(assistant(f"answer {t} " + "z" * size))
    return out


def error_kinds(items: Any, provider: str) -> Counter[tuple[str, str]]:
    msgs = from_caller(items).messages
    return Counter((p.provider, p.kind) for p in errors_only(provider_problems(msgs, [provider])))  # type: ignore[list-item]


# -- keep the latest request ----------------------------------------------------------------


def test_the_only_request_of_a_sub_agent_survives_truncation_by_default() -> None:
    convo = sub_agent()
    strategy = TruncationStrategy(trigger=tokens_exceed(600), minimum_preserved=0)
    res = apply_compaction(convo, strategy)
    assert res.status == "compacted"
    assert res.messages[0] == convo[0]
    reasons = [d.reason for d in res.decisions if d.group_id == 0]
    assert reasons == ["protected or not needed"]
    # Without the guard the request goes, which is what the guard is for.
    bare = apply_compaction(convo, strategy, guards=NO_GUARDS)
    assert convo[0] not in bare.messages


def test_a_cannot_fit_caused_by_the_request_names_the_guard() -> None:
    convo = [user("q" * 4000), assistant("a")]
    res = apply_compaction(
        convo, TruncationStrategy(trigger=tokens_exceed(50), minimum_preserved=0)
    )
    assert res.status == "cannot-fit"
    whys = {p.why for p in res.explanation.protected}
    assert "latest user request" in whys


def test_latest_request_skips_tool_results_and_summaries() -> None:
    msgs = from_caller(
        [user("first"), calls(call("a")), result("a", "out"), user("second"), assistant("ok")]
    ).messages
    assert latest_request_index(msgs) == 3
    assert latest_request_index(msgs[:3]) == 0
    assert latest_request_index(from_caller([assistant("hi")]).messages) is None


# -- pins and per-tool policies -------------------------------------------------------------


def test_a_pinned_message_is_never_dropped() -> None:
    convo = [system(), *claude_code_like(5)]
    pinned = 3  # the first tool result (its group: call + result)
    res = apply_compaction(
        convo,
        TruncationStrategy(trigger=tokens_exceed(300), minimum_preserved=0),
        guards=Guards(pins=frozenset({pinned})),
    )
    assert convo[pinned] in res.messages and convo[pinned - 1] in res.messages
    with pytest.raises(ValueError, match="pins: message 999 does not exist"):
        apply_compaction(
            convo,
            TruncationStrategy(trigger=tokens_exceed(300)),
            guards=Guards(pins=frozenset({999})),
        )


def test_keep_tools_are_never_collapsed_and_prunable_tools_go_first() -> None:
    convo = sub_agent(groups=8)
    collapse = ToolResultCompactionStrategy(keep_last_tool_call_groups=0)
    res = apply_compaction(convo, collapse, guards=Guards(keep_tools=frozenset({"grep"})))
    kept_grep = [m for m in res.messages if m.get("role") == "tool"]
    assert kept_grep and all(m in convo for m in kept_grep)
    # With a target, the prunable tool's groups are collapsed before older others.
    staged = ToolResultCompactionStrategy(
        trigger=tokens_exceed(1500), keep_last_tool_call_groups=0, minimum_preserved=0
    )
    pruned = apply_compaction(convo, staged, guards=Guards(prunable_tools=frozenset({"read_file"})))
    ix = index_of(convo)
    first_changed = [d.group_id for d in pruned.decisions if d.action == "collapsed"][:4]
    assert all("read_file" in ix.groups[g].tool_names for g in first_changed if g is not None)
    with pytest.raises(ValueError, match="both keep_tools and prunable_tools"):
        Guards(keep_tools=frozenset({"x"}), prunable_tools=frozenset({"x"}))


def test_guards_round_trip_and_reject_bad_values() -> None:
    g = Guards(provider="anthropic", pins=frozenset({2}), keep_tools=frozenset({"a"}))
    assert Guards.from_dict(g.to_dict()) == g
    with pytest.raises(ValueError, match="unknown provider"):
        Guards(provider="bedrock")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown key 'pin'"):
        Guards.from_dict({"pin": [1]})
    with pytest.raises(ValueError, match="pins must hold message indices"):
        Guards(pins=frozenset({-1}))


# -- clamp -----------------------------------------------------------------------------------


def test_clamp_cuts_a_huge_tool_output_to_head_and_tail_and_keeps_the_pair() -> None:
    huge = "HEAD " + "m" * 40_000 + " TAIL"
    convo = [
        system(),
        user("go"),
        calls(call("c1", "fetch")),
        result("c1", huge),
        assistant("done"),
    ]
    res = apply_compaction(convo, ClampStrategy(max_tokens=500))
    assert res.status == "compacted"
    out = next(m for m in res.messages if m.get("role") == "tool")
    assert out["tool_call_id"] == "c1"
    assert out["content"].startswith("HEAD ") and out["content"].endswith(" TAIL")
    assert "elided by compaction" in out["content"]
    assert res.tokens_after < res.tokens_before - 9000
    assert not res.problems and len(res.messages) == len(convo)
    event = next(e for e in res.events if e.strategy == "clamp")
    assert event.group_ids == (index_of(convo).group_of[3],)


def test_clamp_per_tool_limits_keep_tools_and_later_collapse() -> None:
    convo = [
        user("go"),
        calls(call("a", "small_tool"), call("b", "big_tool")),
        result("a", "s" * 4000),
        result("b", "b" * 4000),
        assistant("done"),
    ]
    res = apply_compaction(convo, ClampStrategy(max_tokens=5000, per_tool={"big_tool": 100}))
    outputs = {m["tool_call_id"]: m["content"] for m in res.messages if m.get("role") == "tool"}
    assert outputs["a"] == "s" * 4000 and "elided" in outputs["b"]
    kept = apply_compaction(
        convo, ClampStrategy(max_tokens=100), guards=Guards(keep_tools=frozenset({"big_tool"}))
    )
    assert kept.status == "unchanged"
    # A clamped group can still be collapsed by a later stage.
    both = apply_compaction(
        convo,
        PipelineStrategy(
            ClampStrategy(max_tokens=100),
            ToolResultCompactionStrategy(keep_last_tool_call_groups=0),
        ),
    )
    assert not [m for m in both.messages if m.get("role") == "tool"]
    with pytest.raises(ValueError, match="max_tokens"):
        ClampStrategy(max_tokens=0)


# -- provider-valid cuts ---------------------------------------------------------------------


def cut_after_last_request(convo: list[dict[str, Any]]) -> TruncationStrategy:
    """A truncation whose limit is exactly what follows the last request: the plain cut
    then opens with the last turn's tool call."""
    ix = index_of(convo)
    tail = sum(g.tokens for g in ix.groups if g.first > len(convo) - 4)
    return TruncationStrategy(trigger=tokens_exceed(tail), minimum_preserved=0)


def test_anthropic_cut_that_opens_with_an_assistant_gets_a_user_note() -> None:
    convo = claude_code_like(6)
    strategy = cut_after_last_request(convo)
    guards = Guards(provider="anthropic", keep_latest_request=False)
    raw = apply_compaction(
        convo, strategy, guards=Guards(provider="any", keep_latest_request=False)
    )
    assert raw.messages[0]["role"] != "user"  # the plain cut breaks Anthropic's rule
    res = apply_compaction(convo, strategy, guards=guards)
    assert res.messages[0] == {"role": "user", "content": OMITTED_NOTE}
    assert not error_kinds(res.messages, "anthropic")
    repair = [e for e in res.events if e.strategy == "provider_repair"]
    assert len(repair) == 1 and "anthropic" in repair[0].detail


def test_the_provider_follows_the_format_when_not_given() -> None:
    convo = claude_code_like(6)
    strategy = cut_after_last_request(convo)
    res = apply_compaction(
        convo, strategy, guards=Guards(keep_latest_request=False), provider="gemini"
    )
    assert res.messages[0]["content"] == OMITTED_NOTE


@SETTINGS
@given(data=st.data(), provider=st.sampled_from(PROVIDERS))
def test_no_strategy_introduces_a_provider_error(data: st.DataObject, provider: str) -> None:
    convo = data.draw(transcripts(), label="transcript")
    total = index_of(convo).total_tokens
    case = data.draw(cases(total), label="case")
    guards = Guards(provider=provider)  # type: ignore[arg-type]
    strategy: Any = case.strategy
    if data.draw(st.booleans(), label="clamp first"):
        limit = data.draw(st.integers(min_value=1, max_value=50), label="clamp limit")
        strategy = PipelineStrategy(ClampStrategy(max_tokens=limit), strategy)
    res = apply_compaction(convo, strategy, guards=guards)
    check_all(convo, res, systems=case.keeps_system)
    before = error_kinds(convo, provider)
    after = error_kinds(res.messages, provider)
    introduced = after - before
    msgs = from_caller(convo).messages
    if any(not m.tool_results and not has_content(m) for m in msgs):
        # An empty text message is already invalid for Anthropic and Gemini; the checker
        # only sees it once the message stands alone (next to tool results it merges).
        introduced.pop((provider, "empty_content"), None)
    assert not introduced, (case.label, introduced)
    latest = latest_request_index(from_caller(convo).messages)
    if latest is not None:
        assert convo[latest] in res.messages or res.status == "unchanged", case.label


@SETTINGS
@given(convo=transcripts())
def test_the_first_turn_shortcut_agrees_with_the_full_rules(convo: list[dict[str, Any]]) -> None:
    msgs = from_caller(convo).messages
    kinds = {p.kind for p in provider_problems(msgs, ["anthropic"])}
    full = "first_not_user" not in kinds and "empty_request" not in kinds
    assert opens_with_user_turn(msgs) == full
