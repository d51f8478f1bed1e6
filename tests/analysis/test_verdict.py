"""The verdict of a run: its numbers are the result's and the report's own, its level
follows the user's rules (safe, costs, no-fit), and it reads as plain, JSON-able words."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from analysis_helpers import assistant, call, result, system, user
from hypothesis import event, given, settings
from hypothesis import strategies as st

import compactlens
import compactlens.analysis
from compactlens import (
    CharEstimator,
    CompactionResult,
    ExtractiveSummarizer,
    Guards,
    MessageIndex,
    Reason,
    Verdict,
    VerdictNumbers,
    analyze,
    compact,
    load_transcript,
    run_strategy,
    strategy_from_config,
    verdict,
)
from compactlens.analysis import (
    CompactionReport,
    ProtocolProblem,
    apply_step,
    cost_words,
    destructive,
    judge_fixes,
    reference_config,
    search_fixes,
    strategy_triggers,
)
from compactlens.analysis.verdict import DEFAULT_RECALL_FLOOR, history_errors
from compactlens.formats import from_caller
from compactlens.model import ConfigError, InputTypeError, UsageError
from compactlens.model.display import CARD_TEXT_LIMIT

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_transcripts"
SAMPLE_FILES = sorted(p for p in SAMPLES.iterdir() if p.suffix in (".json", ".jsonl"))
PIPELINE = json.loads((REPO / "examples" / "pipeline.json").read_text(encoding="utf-8"))
LABELS = {
    "kept": "kept",
    "excluded": "dropped",
    "collapsed": "collapsed",
    "summarized": "summarized",
    "inserted": "inserted",
}


def _tokens_trigger(n: int) -> dict[str, Any]:
    return {"op": "exceed", "metric": "tokens", "n": n}


#: Each strategy config, as a function of the transcript's token count.
CONFIGS: dict[str, Callable[[int], dict[str, Any]]] = {
    "truncation": lambda t: {
        "type": "truncation",
        "max_n": max(1, t * 6 // 10),
        "compact_to": max(1, t * 4 // 10),
    },
    "sliding_window": lambda t: {"type": "sliding_window", "keep_last_turns": 2},
    "tool_result_collapse": lambda t: {
        "type": "tool_result_collapse",
        "trigger": _tokens_trigger(max(1, t * 6 // 10)),
    },
    "summarization": lambda t: {
        "type": "summarization",
        "trigger": _tokens_trigger(max(1, t * 6 // 10)),
        "minimum_preserved": 4,
    },
    "pipeline.json": lambda t: PIPELINE,
}


def _run(
    path: Path, config: dict[str, Any], guards: Guards | None = None
) -> tuple[CompactionResult, CompactionReport]:
    transcript = load_transcript(path)
    index = MessageIndex.build(transcript.messages, CharEstimator())
    strategy = strategy_from_config(config, summarizer=ExtractiveSummarizer())
    result = run_strategy(index, strategy, tokenizer_given=True, guards=guards)
    triggers = strategy_triggers(strategy, tokenizer_given=True)
    return result, analyze(transcript, result, triggers=triggers, tokenizer=CharEstimator())


def _expected_level(
    result: Any, report: CompactionReport, floor: float = DEFAULT_RECALL_FLOOR
) -> str:
    """The user's rules, read from the result and the report directly."""
    if result.status == "cannot-fit":
        return "no-fit"
    facts = report.facts
    cost = report.cache.cost
    safe = (
        # No new error, no new warning that changes the request: consecutive turns of one
        # role, which the provider joins with nothing lost, are a note, not a cost.
        not any(p.severity == "error" or p.kind != "consecutive_roles" for p in report.introduced)
        and not (result.status == "compacted" and cost is not None and cost.savings < 0)
        and not facts.latest_request_lost
        and not report.system_lost  # the system prompt kept
        # Firing again is a cost only once a compaction happened (and a trigger is set).
        and not (result.status != "unchanged" and report.retrigger.loops)
        and (facts.extracted == 0 or facts.survived / facts.extracted >= floor)
        # No error the history already had is still sent (the API rejects the request as
        # it is), but a tool call still running in the last message is not one.
        and not any(
            p.severity == "error"
            and p not in report.introduced
            and not (
                p.kind in ("unresolved_call", "tool_result_not_next")
                and p.message_index == report.messages_after - 1
            )
            for p in report.problems
        )
    )
    return "safe" if safe else "costs"


def _assert_plain(v: Verdict) -> None:
    """Headline and reasons are prose: no code names, no operators, no ``None``."""
    for text in (v.headline, v.summary, *(r.text for r in v.reasons)):
        assert "_" not in text and "<=" not in text and "≤" not in text, text
        assert "None" not in text, text


@pytest.mark.parametrize("config_name", sorted(CONFIGS))
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_the_numbers_are_the_result_s_and_the_report_s(path: Path, config_name: str) -> None:
    tokens = MessageIndex.build(load_transcript(path).messages, CharEstimator()).total_tokens
    result, report = _run(path, CONFIGS[config_name](tokens))
    v = verdict(result, report)
    n = v.numbers
    assert (n.tokens_before, n.tokens_after) == (result.tokens_before, result.tokens_after)
    assert (n.tokens_before, n.tokens_after) == (report.tokens_before, report.tokens_after)
    assert (n.messages_before, n.messages_after) == (result.messages_before, result.messages_after)
    assert (n.messages_before, n.messages_after) == (report.messages_before, report.messages_after)
    assert n.target_tokens == result.explanation.target_tokens
    counts = Counter(LABELS[d.action] for d in result.decisions)
    assert n.groups is not None
    assert dict(n.groups) == {label: counts.get(label, 0) for label in LABELS.values()}
    assert sum(n.groups.values()) == len(result.decisions)
    assert (n.facts_kept, n.facts_total) == (report.facts.survived, report.facts.extracted)
    assert n.facts_counted.startswith("Facts are")
    introduced = report.introduced
    assert n.provider_errors == sum(1 for p in introduced if p.severity == "error")
    assert n.provider_warnings == sum(1 for p in introduced if p.severity != "error")
    assert n.history_errors == len(history_errors(report, None))
    assert n.turns_until_next_compaction == report.retrigger.turns_until_trigger
    assert report.cache.cost is not None and n.cache_extra_cost == pytest.approx(
        -report.cache.cost.savings
    )
    assert v.level == _expected_level(result, report)
    assert v.headline == {"safe": "Fits and safe", "costs": "Fits, with costs"}.get(
        v.level, "Does not fit"
    )
    assert (v.level == "safe") == (v.costs == ())
    assert json.loads(json.dumps(v.to_dict())) == v.to_dict()
    _assert_plain(v)


def test_a_fitting_run_that_keeps_everything_that_matters_is_safe() -> None:
    result, report = _run(SAMPLES / "coding_agent.json", PIPELINE)
    # For Anthropic, the collapsed results leave two assistant turns in a row: warnings the
    # provider resolves by joining the turns, nothing lost. A note, not a cost (review4 #8).
    anthropic = verdict(result, report)
    assert anthropic.numbers.provider_warnings and anthropic.level == "safe"
    note = next(r for r in anthropic.reasons if r.code == "provider-warnings")
    assert note.level == "safe" and note.text.startswith("Note, not a cost"), note.text
    assert "joins consecutive turns" in note.text and "nothing is dropped" in note.text
    v = verdict(result, report, provider="openai-chat")
    assert v.level == "safe" and v.headline == "Fits and safe"
    assert v.numbers.target_tokens == 8000
    assert all(r.level == "safe" for r in v.reasons)
    assert v.next_step == "Nothing to change: the run fits and every check passed."
    assert v.next_step_parts == ("Nothing to change", "the run fits and every check passed.")
    assert "8,667 to 7,459 tokens (target 8,000)" in v.summary


def test_a_warning_that_changes_the_request_stays_a_cost() -> None:
    """Only the joined turns are harmless: a system message the provider moves to the top
    loses its place, so the same run with one such warning fits with that cost named."""
    result, report = _run(SAMPLES / "coding_agent.json", PIPELINE)
    moved = ProtocolProblem(
        "anthropic",
        "system_not_leading",
        3,
        "a system message after the conversation started must be moved to the top-level "
        "system prompt (its position is lost)",
        "warning",
    )
    assert not moved.harmless and all(p.harmless for p in report.introduced)
    v = verdict(result, dataclasses.replace(report, introduced=(*report.introduced, moved)))
    assert v.level == "costs" and v.step_cost == "provider-warnings", v.reasons
    cost = v.costs[0]
    assert "move a system message to the top" in cost.text, cost.text
    assert "join consecutive turns" in cost.text  # the harmless ones named beside it
    assert v.next_step_parts[0] == "Next step" and "system message" in v.next_step
    _assert_plain(v)


def test_a_fitting_run_with_recall_under_the_floor_has_costs() -> None:
    # 8,667 tokens cut to 1,200: it fits, but under half of the conversation's facts survive.
    config = {"type": "truncation", "max_n": 7800, "compact_to": 1200, "minimum_preserved": 0}
    result, report = _run(SAMPLES / "coding_agent.json", config)
    assert result.status == "compacted" and report.facts.recall < 0.5
    v = verdict(result, report)
    assert v.level == "costs" and v.headline == "Fits, with costs"
    assert [r.code for r in v.costs] == ["fact-recall"]
    assert "under the floor of 80%" in v.costs[0].text
    assert v.next_step.startswith("Keep more of the history")
    # The floor is the caller's: at zero the same run is safe.
    assert verdict(result, report, recall_floor=0.0).level == "safe"


def test_the_recall_floor_is_four_facts_in_five_and_a_larger_loss_is_a_named_cost() -> None:
    # The reference pipeline at half the coding agent's tokens: it fits, every other
    # check passes, and it keeps a little over half of the facts it changed (57%: with
    # the old 50% floor this read "Fits and safe").
    config = reference_config(4300)
    result, report = _run(SAMPLES / "coding_agent.json", config)
    assert DEFAULT_RECALL_FLOOR == 0.8
    recall = report.facts.survived / report.facts.extracted
    assert result.status == "compacted" and 0.5 < recall < DEFAULT_RECALL_FLOOR
    v = verdict(result, report, provider="openai-chat")
    assert v.level == "costs" and [r.code for r in v.costs] == ["fact-recall"]
    lost = report.facts.extracted - report.facts.survived
    counted = f"{report.facts.survived} of the conversation's {report.facts.extracted} facts"
    assert counted in v.costs[0].text
    assert lost > report.facts.extracted / 5  # more than one fact in five is gone
    # Both sides of the rule: at a floor equal to the run's recall it is safe, just above
    # it the recall is the one cost.
    assert verdict(result, report, provider="openai-chat", recall_floor=recall).level == "safe"
    above = verdict(result, report, provider="openai-chat", recall_floor=recall + 1e-6)
    assert [r.code for r in above.costs] == ["fact-recall"]
    # A run that keeps at least four facts in five is green with the default floor.
    kept, kept_report = _run(SAMPLES / "coding_agent.json", PIPELINE)
    assert kept_report.facts.survived / kept_report.facts.extracted >= DEFAULT_RECALL_FLOOR
    assert verdict(kept, kept_report, provider="openai-chat").level == "safe"


def test_a_run_that_loses_the_latest_request_with_the_guard_off_has_costs() -> None:
    config = {"type": "truncation", "max_n": 223, "compact_to": 37, "minimum_preserved": 0}
    path = SAMPLES / "injection_attempt.json"
    result, report = _run(path, config, Guards(keep_latest_request=False))
    assert result.status == "compacted" and report.facts.latest_request_lost
    v = verdict(result, report)
    assert v.level == "costs"
    assert "latest-request" in [r.code for r in v.costs]
    assert "latest user request does not survive" in " ".join(r.text for r in v.costs)
    # With the guard on, the request is kept (and this target cannot be met).
    guarded, guarded_report = _run(path, config, Guards(keep_latest_request=True))
    assert "latest-request" not in [r.code for r in verdict(guarded, guarded_report).costs]


def _agent_log(request: str | None) -> list[dict[str, Any]]:
    """A system prompt and tool-call steps, with a user request first or none at all (a
    log whose reader found no prompt, as review 4 #2's Codex rollout before its fix)."""
    out = [system(), *([user(request)] if request is not None else [])]
    for k in range(6):
        out.append(assistant(calls=[call(f"c{k}", "read_file", {"path": f"/srv/app/m{k}.py"})]))
        out.append(result(f"c{k}", f"module m{k}: " + "def handler(): return 42 " * 30))
    out.append(assistant("Every module defines handler() returning 42."))
    return out


@pytest.mark.parametrize("request_text", [None, "List what each module under /srv/app does."])
def test_a_history_without_a_user_request_never_passes_the_request_check(
    request_text: str | None,
) -> None:
    messages = _agent_log(request_text)
    index = MessageIndex.build(from_caller(messages).messages, CharEstimator())
    config = reference_config(index.total_tokens * 6 // 10)
    strategy = strategy_from_config(config, summarizer=ExtractiveSummarizer())
    res = run_strategy(index, strategy, tokenizer_given=True)
    triggers = strategy_triggers(strategy, tokenizer_given=True)
    report = analyze(messages, res, triggers=triggers, tokenizer=CharEstimator())
    v = verdict(res, report)
    assert res.status == "compacted"
    codes = {r.code: r for r in v.reasons}
    if request_text is None:
        assert "latest-request" not in codes and codes["no-request"].level == "costs"
        assert "no user request" in codes["no-request"].text and v.level != "safe"
        assert v.headline == "Fits, with costs"
    else:
        assert "no-request" not in codes and codes["latest-request"].level == "safe"
    _assert_plain(v)


def test_cannot_fit_is_no_fit_with_a_next_step_naming_a_target() -> None:
    config = {"type": "sliding_window", "trigger": _tokens_trigger(12000)}
    result, report = _run(SAMPLES / "cannot_fit_16k.json", config)
    v = verdict(result, report)
    assert v.level == "no-fit" and v.headline == "Does not fit"
    assert v.reasons[0].code == "target" and v.reasons[0].level == "no-fit"
    assert "11,561 over" in v.reasons[0].text
    assert v.numbers.smallest_target == result.explanation.smallest_target == 23561
    assert v.next_step.startswith("Raise the target to at least 23,561 tokens")


def test_a_fix_search_gives_the_next_step_of_a_run_that_does_not_fit() -> None:
    transcript = load_transcript(SAMPLES / "cannot_fit_16k.json")
    index = MessageIndex.build(transcript.messages, CharEstimator())
    strategy = strategy_from_config({"type": "sliding_window", "trigger": _tokens_trigger(12000)})
    result = run_strategy(index, strategy, tokenizer_given=True)
    report = analyze(transcript, result, triggers=strategy_triggers(strategy))
    found = search_fixes(index, strategy, summaries=result.summaries)
    assert found.best is not None
    v = verdict(result, report, fixes=found)
    assert v.level == "no-fit"
    best = found.best
    assert v.next_step == f"Apply: {best.plain_summary} ({best.tokens_after:,} tokens)."
    assert "=" not in v.next_step  # no code names such as minimum_preserved=3
    judged = judge_fixes(index, found)
    assert judged.best is not None and judged.best.verdict is not None
    v = verdict(result, report, fixes=judged)
    if destructive(judged.best):  # it keeps under half of the facts: never the step
        assert judged.best.plain_summary not in v.next_step
        assert v.next_step.startswith(f"Raise the target to at least {result.tokens_after:,}")
    else:
        # The same words as every other surface: the fix's own verdict, its costs first
        # when it has any ("Apply, at a cost (…): …").
        best_verdict = judged.best.verdict
        assert v.next_step == apply_step(judged.best.plain_summary, best_verdict)
        assert v.next_step.endswith(f"({best_verdict.summary}).")
        if best_verdict.costs:
            assert v.next_step.startswith(f"Apply, at a cost ({cost_words(best_verdict)}): ")
        else:
            assert v.next_step.startswith("Apply: ")


def test_a_run_whose_trigger_did_not_fire_says_so() -> None:
    result, report = _run(
        SAMPLES / "coding_agent.json", {"type": "truncation", "max_n": 9000, "compact_to": 6000}
    )
    v = verdict(result, report)
    assert result.status == "unchanged" and v.level == "safe"
    assert v.summary.startswith("8,667 tokens, left as they are")
    assert v.reasons[0].text == "No compaction was needed: no trigger fired at 8,667 tokens."
    assert v.next_step.startswith(
        "Nothing to change: no compaction is needed yet and every check passed; the first "
        f"compaction is due in about {report.retrigger.turns_until_trigger} turns"
    )


def test_without_a_report_the_checks_are_not_measured_and_never_safe() -> None:
    result, _report = _run(SAMPLES / "coding_agent.json", PIPELINE)
    v = verdict(result)
    assert v.level == "costs"
    assert [r.code for r in v.reasons] == ["target", "not-measured"]
    # In plain words, not the library's ("no analysis report was given").
    assert v.reasons[1].text.startswith("Not checked yet:")
    assert "report" not in v.reasons[1].text and "not measured" not in v.reasons[1].text
    assert v.numbers.measured is False and v.numbers.facts_total is None
    assert json.loads(json.dumps(v.to_dict())) == v.to_dict()


def test_compact_results_have_a_verdict_too() -> None:
    transcript = load_transcript(SAMPLES / "coding_agent.json")
    res = compact(list(transcript.messages), summarizer=ExtractiveSummarizer(), target_tokens=3000)
    report = analyze(transcript, res)
    v = verdict(res, report)
    n = v.numbers
    assert (n.tokens_before, n.tokens_after) == (res.tokens.before, res.tokens.after)
    assert (n.messages_before, n.messages_after) == (report.messages_before, report.messages_after)
    assert n.target_tokens == 3000 and n.groups is None
    assert v.level == _expected_level(res, report)


@pytest.mark.parametrize("engine", [True, False])
def test_a_session_step_is_judged_by_its_latest_compaction(engine: bool) -> None:
    transcript = load_transcript(SAMPLES / "coding_agent.json")
    history = list(transcript.messages)
    strategy = (
        strategy_from_config({"type": "truncation", "max_n": 4000, "compact_to": 3000})
        if engine
        else None
    )
    session = compactlens.CompactionSession(
        triggers=[compactlens.tokens_exceed(4000)],
        target_tokens=3000,
        strategy=strategy,
        summarizer=None if engine else ExtractiveSummarizer(),
        tokenizer=CharEstimator() if engine else None,
    )
    with pytest.raises(UsageError, match="not compacted yet"):
        verdict(session)
    session.prepare(history)
    step = session.last_result
    assert step is not None
    report = analyze(history, step)
    judged = verdict(session, report)
    assert judged == verdict(step, report)
    n = judged.numbers
    before = step.tokens_before if engine else step.tokens.before
    assert n.tokens_before == before and (n.groups is not None) == engine


def test_the_provider_narrows_the_introduced_problems() -> None:
    config = {"type": "truncation", "max_n": 7800, "compact_to": 1300, "minimum_preserved": 0}
    result, report = _run(SAMPLES / "coding_agent.json", config)
    for provider in report.providers:
        n = verdict(result, report, provider=provider).numbers
        mine = [p for p in report.introduced if p.provider in ("any", provider)]
        assert n.provider == provider
        assert n.provider_errors == sum(1 for p in mine if p.severity == "error")
    with pytest.raises(ConfigError, match="gemini"):
        verdict(result, report, provider="gemini")


def test_bad_arguments_are_refused() -> None:
    result, report = _run(SAMPLES / "coding_agent.json", PIPELINE)
    other, other_report = _run(SAMPLES / "shopping_assistant.json", PIPELINE)
    with pytest.raises(ConfigError, match="another run"):
        verdict(result, other_report)
    with pytest.raises(ConfigError, match="recall_floor"):
        verdict(result, report, recall_floor=1.5)
    with pytest.raises(InputTypeError):
        verdict(report)  # type: ignore[arg-type]
    assert other.status in ("compacted", "unchanged", "cannot-fit")


def test_repr_is_short_and_the_card_escapes_its_text() -> None:
    result, report = _run(SAMPLES / "coding_agent.json", PIPELINE)
    v = verdict(result, report, provider="openai-chat")
    assert repr(v).startswith("<Verdict safe: Fits and safe;") and "\n" not in repr(v)
    html = v._repr_html_()
    assert "Verdict: Fits and safe" in html and "<b>Nothing to change:</b>" in html
    hostile = Verdict(
        level="costs",
        headline="Fits, with costs",
        summary="s",
        reasons=(Reason(code="x", level="costs", text="<script>alert(1)</script>"),),
        numbers=v.numbers,
        next_step="<b>now</b>",
    )
    html = hostile._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>now</b>" not in html


def test_the_verdict_is_exported_from_the_package_and_the_top_level() -> None:
    for name in ("Verdict", "verdict", "Reason", "VerdictNumbers"):
        assert name in compactlens.__all__ and name in compactlens.analysis.__all__
        assert getattr(compactlens, name) is getattr(compactlens.analysis, name)
    assert VerdictNumbers is compactlens.VerdictNumbers


# -- the rule as a property ----------------------------------------------------------------


#: Words that hold facts (identifiers, paths, numbers with units, versions, names).
_WORDS = ("the", "order", "ORD-1234", "/src/app.py", "42 ms", "Alice", "ok", "deploy", "v2.3.1")


@st.composite
def _transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    turns = draw(st.integers(2, 10))
    words = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=40).map(" ".join)
    messages = [system()]
    for _ in range(turns):
        messages.append(user(draw(words)))
        messages.append(assistant(draw(words)))
    if draw(st.booleans()):
        messages.append(user(draw(words)))
    return messages


@settings(max_examples=60)
@given(
    messages=_transcripts(),
    trigger_share=st.floats(0.3, 1.2),
    target_share=st.floats(0.2, 1.0),
    minimum=st.integers(0, 4),
    keep_latest=st.booleans(),
)
def test_safe_iff_every_safe_condition_holds(
    messages: list[dict[str, Any]],
    trigger_share: float,
    target_share: float,
    minimum: int,
    keep_latest: bool,
) -> None:
    index = MessageIndex.build(from_caller(messages).messages, CharEstimator())
    max_n = max(1, int(index.total_tokens * trigger_share))
    config = {
        "type": "truncation",
        "max_n": max_n,
        "compact_to": max(1, int(max_n * target_share)),
        "minimum_preserved": minimum,
    }
    strategy = strategy_from_config(config)
    guards = Guards(keep_latest_request=keep_latest)
    result = run_strategy(index, strategy, tokenizer_given=True, guards=guards)
    report = analyze(
        messages,
        result,
        triggers=strategy_triggers(strategy, tokenizer_given=True),
        tokenizer=CharEstimator(),
    )
    v = verdict(result, report)
    event(f"{result.status}: {v.level}")
    assert v.level == _expected_level(result, report)
    assert (v.level == "safe") == (
        result.status != "cannot-fit" and all(r.level == "safe" for r in v.reasons)
    )
    _assert_plain(v)


def test_errors_the_history_already_has_are_a_cost_never_safe() -> None:
    # pairing_problems holds a split pair, an orphan result and a call with no result that
    # is not the last message: OpenAI Chat Completions rejects the request as it is, so a
    # run that leaves it unchanged is not "Fits and safe" (review 6, R3).
    config = {"type": "truncation", "trigger": _tokens_trigger(8000)}
    result, report = _run(SAMPLES / "pairing_problems.json", config)
    assert result.status == "unchanged" and report.introduced == ()
    v = verdict(result, report, provider="openai-chat")
    assert v.level == "costs" and v.numbers.history_errors == 3
    (cost,) = v.costs
    assert cost.code == "history-errors"
    assert cost.text.startswith("The history already holds 3 errors that OpenAI Chat")
    assert "(the first, at message 4: result apart from its call)" in cost.text
    assert "did not introduce them" in cost.text and len(cost.text) <= CARD_TEXT_LIMIT
    assert v.next_step.startswith("Repair the history before it is sent")
    _assert_plain(v)


def test_a_tool_call_still_running_in_the_last_message_is_no_history_error() -> None:
    # A log that ends while its last tool call runs (OpenHands' finish call) sends it with
    # its result on the next call: not an error the verdict counts.
    path = REPO.parent / "shared" / "corpus" / "openhands_llmc__django__django-11299.json"
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared corpus is not checked out)")
    tokens = MessageIndex.build(load_transcript(path).messages, CharEstimator()).total_tokens
    result, report = _run(path, {"type": "truncation", "trigger": _tokens_trigger(tokens + 1)})
    pending = [p for p in report.problems if p.kind == "unresolved_call"]
    assert pending and all(p.message_index == report.messages_after - 1 for p in pending)
    v = verdict(result, report)
    assert v.numbers.history_errors == 0
    assert "history-errors" not in [r.code for r in v.reasons]
