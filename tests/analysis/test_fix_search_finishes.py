"""The fix search finishes: no fix repeats the current result or another fix, the first
fix keeps the target whenever a change that keeps the conversation fits, a costly best fix
comes with a one-click larger target, and every fix can be judged by the verdict of the
run it gives once applied."""

from __future__ import annotations

import json
from typing import Any

from compactlens import MessageIndex, run_strategy
from compactlens.analysis import (
    analyze,
    destructive,
    judge_fix,
    judge_fixes,
    listed_fixes,
    next_step,
    search_fixes,
    shown_fixes,
    verdict,
)
from compactlens.analysis.fixes import _outcome
from compactlens.analysis.retrigger import strategy_triggers
from compactlens.engine import Guards, TruncationStrategy, tokens_exceed
from compactlens.engine.plan import Plan
from compactlens.engine.strategies.base import plan_strategy
from compactlens.formats import from_caller


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def coding_agent(turns: int = 8) -> list[dict[str, Any]]:
    """Turns that each read a file, run the tests and state a decision with identifiers."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent."}]
    for t in range(turns):
        msgs.append({"role": "user", "content": f"Step {t}: fix the bug in module_{t}.py"})
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_call(f"r{t}", "read_file", {"path": f"src/module_{t}.py"})],
            }
        )
        body = "\n".join(f"line {i}: value_{t}_{i} = compute({i})" for i in range(40))
        msgs.append({"role": "tool", "tool_call_id": f"r{t}", "content": body})
        msgs.append(
            {
                "role": "assistant",
                "content": f"Fixed module_{t}.py at line {t + 3}: error E{100 + t} is gone.",
            }
        )
    return msgs


def index() -> MessageIndex:
    return MessageIndex.build(from_caller(coding_agent()).messages)


def truncation(budget: int, keep: int) -> TruncationStrategy:
    return TruncationStrategy(trigger=tokens_exceed(budget), minimum_preserved=keep)


GUARDS = Guards(provider="openai-chat")


def plan_of(ix: MessageIndex, strategy: Any, guards: Guards) -> Plan:
    """The plan ``strategy`` gives over ``ix`` (what a fix's result is compared by)."""
    return plan_strategy(ix, strategy, True, {}, guards)[0]


def test_no_fix_repeats_the_current_result_or_another_fix() -> None:
    ix = index()
    for budget, keep in ((ix.total_tokens // 2, 2), (ix.total_tokens // 4, 12)):
        strategy = truncation(budget, keep)
        current = (budget, _outcome(plan_of(ix, strategy, GUARDS)))
        found = search_fixes(ix, strategy, guards=GUARDS, include_destructive=True)
        assert found.fixes
        results = [
            (f.target_tokens, _outcome(plan_of(ix, f.strategy, f.guards))) for f in found.fixes
        ]
        assert len(set(results)) == len(results)
        assert current not in results


def test_a_costly_best_fix_comes_first_with_the_target_its_parameters_reach() -> None:
    ix = index()
    strategy = truncation(ix.total_tokens // 6, 40)  # keeps everything: nothing can go
    current = run_strategy(ix, strategy, guards=GUARDS)
    assert current.status == "cannot-fit"
    found = search_fixes(ix, strategy, guards=GUARDS)
    assert found.fixes, found.none_reason
    first = found.fixes[0]
    # The change a user would make (fewer groups kept) comes first, with what it costs...
    assert not first.changes_target and first.fits and first.keeps_conversation
    assert first.destructive and any("facts are kept" in w for w in first.warnings)
    assert "“newest groups never dropped” to" in first.plain_summary
    assert "minimum_preserved" not in first.plain_summary
    # ...and raising the target to what the current parameters reach is one click away.
    raised = [f for f in found.fixes if f.changes_target]
    assert raised and raised[0].target_tokens == current.tokens_after
    words = raised[0].plain_summary
    # The trigger moves with the target, and the words say where to.
    assert f"{current.tokens_after:,} tokens" in words and "the trigger" in words, words
    assert raised[0].fits and not raised[0].destructive


def test_the_first_fix_keeps_the_target_when_a_safe_change_fits() -> None:
    ix = index()
    for share in (2, 3, 4):
        strategy = truncation(ix.total_tokens // share, 12)
        found = search_fixes(ix, strategy, guards=GUARDS)
        keeping = [f for f in found.fixes if f.keeps_conversation and not f.changes_target]
        if keeping:
            assert not found.fixes[0].changes_target


def test_a_fixs_verdict_is_the_verdict_of_the_run_it_gives() -> None:
    ix = index()
    strategy = truncation(ix.total_tokens // 3, 12)
    found = judge_fixes(ix, search_fixes(ix, strategy, guards=GUARDS))
    assert found.fixes
    for fix in found.fixes:
        assert fix.verdict is not None
        applied = run_strategy(ix, fix.strategy, guards=fix.guards)
        report = analyze(
            ix.messages,
            applied,
            triggers=strategy_triggers(fix.strategy),
            tokenizer=ix.tokenizer,
            providers=("openai-chat",),
        )
        again = verdict(applied, report, provider="openai-chat")
        assert fix.verdict.to_dict() == again.to_dict()
        assert fix.verdict.numbers.tokens_after == fix.tokens_after
        assert fix.to_dict()["verdict"] == again.to_dict()


def test_next_step_says_nothing_to_fix_for_a_safe_run_and_names_the_fix_otherwise() -> None:
    ix = index()
    roomy = TruncationStrategy(trigger=tokens_exceed(ix.total_tokens - 1), minimum_preserved=2)
    roomy = TruncationStrategy(trigger=tokens_exceed(ix.total_tokens * 2), minimum_preserved=2)
    result = run_strategy(ix, roomy, guards=GUARDS)
    report = analyze(
        ix.messages, result, triggers=strategy_triggers(roomy), providers=("openai-chat",)
    )
    safe = verdict(result, report, provider="openai-chat")
    assert safe.level == "safe"
    assert next_step(safe, search_fixes(ix, roomy, guards=GUARDS)).startswith("Nothing to fix")
    tight = truncation(ix.total_tokens // 3, 12)
    result = run_strategy(ix, tight, guards=GUARDS)
    report = analyze(
        ix.messages, result, triggers=strategy_triggers(tight), providers=("openai-chat",)
    )
    failing = verdict(result, report, provider="openai-chat")
    assert failing.level == "no-fit"
    found = judge_fixes(ix, search_fixes(ix, tight, guards=GUARDS))
    step = next_step(failing, found)
    listed = listed_fixes(found.fixes, failing)
    shown = shown_fixes(found.fixes, failing)
    ordinary = [f for f in shown.fixes if not destructive(f) and not f.changes_target]
    if ordinary:
        assert step.startswith(f"Apply: {ordinary[0].plain_summary}")
    else:  # only a change that loses most facts keeps the target: offered beside a larger one
        assert shown.costly_choice is not None
        assert step.startswith("Choose: ") and shown.costly_choice.plain_summary in step
        assert "Raise the target to " in step
    # Listed in the order of their verdicts: fewer failed checks first, then recall.
    keys = [
        (f.changes_target, not f.keeps_conversation, len(f.verdict.costs))  # type: ignore[union-attr]
        for f in listed
    ]
    assert keys == sorted(keys)


def test_judging_one_fix_keeps_everything_else() -> None:
    ix = index()
    found = search_fixes(ix, truncation(ix.total_tokens // 3, 12), guards=GUARDS)
    fix = found.fixes[0]
    judged = judge_fix(ix, fix)
    assert judged == fix  # the verdict is not part of a fix's identity
    assert judged.verdict is not None and fix.verdict is None
