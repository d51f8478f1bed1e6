"""The verdict counts provider problems for the API the transcript was sent to when its
messages say so (a Claude Code log converted to Chat Completions is Anthropic's), and every
surface (the fix verdicts, the command line, the inspector) uses that one rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from analysis_helpers import assistant, call, result, system, user

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    Guards,
    MessageIndex,
    load_transcript,
    run_strategy,
    strategy_from_config,
)
from compactlens.analysis import transcript_provider, verdict_provider
from compactlens.analysis.fix_verdicts import judge_run
from compactlens.cli.commands import run_verdict

REPO = Path(__file__).resolve().parents[2]
CLAUDE_CODE_LOG = (
    REPO.parent / "shared" / "corpus" / "claude_code__ae4a77f8-aedd-4bc1-888f-c94edc91af04.json"
)


def _chat(call_id: str) -> list[dict[str, Any]]:
    return [
        system(),
        user("Where is my order?"),
        assistant(None, [call(call_id, "lookup_order", {"order_id": "ORD-1"})]),
        result(call_id, '{"status": "shipped"}'),
        assistant("It shipped."),
        user("Thanks."),
    ]


def test_chat_completions_messages_with_anthropic_tool_ids_were_sent_to_anthropic() -> None:
    assert transcript_provider(_chat("toolu_01LX8KZFM6Z7TecXCsyGY")) == "anthropic"
    assert transcript_provider(_chat("call_abc123")) is None
    assert transcript_provider([system(), user("hi")]) is None


def test_the_verdict_s_provider_is_the_transcript_s_own_else_the_guards() -> None:
    assert verdict_provider("anthropic", "openai-chat") == "anthropic"
    assert verdict_provider(None, "openai-chat") == "openai-chat"
    assert verdict_provider(None, "any") is None and verdict_provider(None, None) is None


@pytest.mark.skipif(
    not CLAUDE_CODE_LOG.is_file(), reason="the shared corpus (../shared/corpus) is absent"
)
def test_a_claude_code_log_is_judged_for_anthropic_on_every_surface() -> None:
    # The reference pipeline at 50,000 collapses tool results into assistant text: 204
    # consecutive assistant turns, which Anthropic's API merges (warnings). The Lab counted
    # them ("New problems 204"); the verdict, judged for Chat Completions, did not.
    transcript = load_transcript(CLAUDE_CODE_LOG)
    tokenizer = CharEstimator()
    index = MessageIndex.build(transcript.messages, tokenizer)
    trigger = {"op": "exceed", "metric": "tokens", "n": 50_000}
    strategy = strategy_from_config(
        {
            "type": "pipeline",
            "strategies": [
                {"type": "tool_result_collapse", "trigger": trigger},
                {"type": "truncation", "trigger": trigger, "minimum_preserved": 2},
            ],
        },
        summarizer=ExtractiveSummarizer(),
    )
    guards = Guards().for_format(transcript.format)
    assert guards.provider == "openai-chat"  # what the file's format alone says
    run = run_strategy(index, strategy, tokenizer_given=True, guards=guards)
    judged = judge_run(index, run, strategy, guards)
    n = judged.numbers
    assert n.provider == "anthropic"
    assert n.provider_warnings is not None and n.provider_warnings > 100
    # Joined turns lose nothing: named as a note, not a cost (review4 #8).
    assert "provider-warnings" not in [r.code for r in judged.costs]
    note = next(r for r in judged.reasons if r.code == "provider-warnings")
    assert "Anthropic" in note.text and note.text.startswith("Note, not a cost")
    # The command line judges the same run the same way.
    cli = run_verdict(transcript, run, strategy, guards, tokenizer)
    assert cli.numbers.provider == "anthropic"
    assert (cli.numbers.provider_errors, cli.numbers.provider_warnings) == (
        n.provider_errors,
        n.provider_warnings,
    )


def test_the_report_card_tells_introduced_warnings_from_errors() -> None:
    # The walkthrough's card read "protocol errors 0 (75 introduced)": 75 warnings.
    from compactlens import analyze
    from compactlens.analysis import strategy_triggers

    transcript = load_transcript(REPO / "sample_transcripts" / "support_long.json")
    index = MessageIndex.build(transcript.messages, CharEstimator())
    strategy = strategy_from_config(
        {"type": "tool_result_collapse", "trigger": {"op": "exceed", "metric": "tokens", "n": 6000}}
    )
    run = run_strategy(index, strategy, tokenizer_given=True)
    report = analyze(transcript, run, triggers=strategy_triggers(strategy))
    errors = sum(1 for p in report.introduced if p.severity == "error")
    warnings = len(report.introduced) - errors
    assert warnings > 1
    card = report._repr_html_()  # the notebook card
    assert "new protocol problems" in card and "protocol errors" not in card
    assert f"{errors} error{'s' if errors != 1 else ''}, {warnings:,} warnings" in card
