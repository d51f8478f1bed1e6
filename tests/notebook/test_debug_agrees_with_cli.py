"""The notebook's ``debug()``, called as ``debug_cannot_fit.ipynb`` calls it (no guards:
the user's own ``apply_compaction`` run, the strategy, the transcript or its index), gives
the next step and the fixes ``compactlens compact --json --explain`` gives for the same
strategy: both judge the provider of the transcript's format (review 4, #4: the notebook
checked "OpenAI Chat Completions or Anthropic", called an OpenAI Chat log's leading
assistant turn an error, and found no fix where the command line found a green one)."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

import pytest

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    MessageIndex,
    PipelineStrategy,
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    load_transcript,
    tokens_exceed,
)
from compactlens.cli import main
from compactlens.notebook import debug, tune

pytestmark = pytest.mark.slow


def _cli(capsys: pytest.CaptureFixture[str], path: Path, budget: int) -> dict[str, Any]:
    argv = [
        "compact",
        str(path),
        "--strategy",
        "truncation",
        "--param",
        f"trigger=tokens_exceed:{budget}",
        "--param",
        "minimum_preserved=4",
        "--json",
        "--explain",
    ]
    main(argv)
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _listed(fixes: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    return [
        (json.dumps(f["config"], sort_keys=True), f["verdict"]["level"], f["destructive"])
        for f in fixes
    ]


@pytest.mark.parametrize(
    ("name", "budget", "source"),
    [
        ("tau_bench_airline__task34_trial0.json", 2500, "index"),
        ("tau_bench_airline__task44_trial0.json", 1200, "transcript"),
        ("claude_code__short.json", 150, "index"),
    ],
)
def test_debug_gives_the_command_lines_next_step_and_fixes(
    capsys: pytest.CaptureFixture[str], corpus_dir: Path, name: str, budget: int, source: str
) -> None:
    path = corpus_dir / name
    transcript = load_transcript(path)
    index = MessageIndex.build(transcript.messages, CharEstimator())
    strategy = TruncationStrategy(trigger=tokens_exceed(budget), minimum_preserved=4)
    result = apply_compaction(transcript.messages, strategy, CharEstimator())
    debugger = debug(result, strategy, index if source == "index" else transcript)
    data = _cli(capsys, path, budget)
    assert debugger.verdict.to_dict() == data["verdict"]
    mine = [f.to_dict() for f in debugger.fixes]
    assert _listed(mine) == _listed(data["fixes"]["fixes"])
    # The provider checked is the transcript's (Chat Completions for these logs, or
    # Anthropic for a Claude Code log), never "every provider" for want of guards.
    assert debugger.verdict.numbers.provider == data["verdict"]["numbers"]["provider"]
    assert debugger.verdict.numbers.provider is not None


def test_a_leading_assistant_turn_is_no_error_for_an_openai_chat_log(
    corpus_dir: Path,
) -> None:
    """tau34 at 2,500: the run drops the first user turn; OpenAI Chat Completions takes
    an assistant turn first, so the run has no provider error, and the debugger's next
    step is a fix (the command line's), not "set the provider in the guards"."""
    transcript = load_transcript(corpus_dir / "tau_bench_airline__task34_trial0.json")
    strategy = TruncationStrategy(trigger=tokens_exceed(2500), minimum_preserved=4)
    result = apply_compaction(transcript.messages, strategy, CharEstimator())
    debugger = debug(result, strategy, transcript)
    costs = {r.code for r in debugger.verdict.costs}
    assert "provider-errors" not in costs, debugger.verdict.reasons
    assert debugger.fixes, debugger.verdict.next_step
    # A fix to apply, or a choice of two (a larger target, or the change that makes room
    # for the next turn within it): never "set the provider in the guards".
    assert debugger.verdict.next_step.startswith(("Apply: ", "Choose: "))
    assert "provider" not in debugger.verdict.next_step


def _pipeline(budget: int) -> PipelineStrategy:
    """tune.ipynb's pipeline: every stage fires above ``budget``."""
    over = tokens_exceed(budget)
    return PipelineStrategy(
        ToolResultCompactionStrategy(trigger=over),
        SummarizationStrategy(ExtractiveSummarizer(), trigger=over),
        TruncationStrategy(trigger=over, minimum_preserved=4),
    )


def test_the_tuner_card_gives_the_next_step_its_debugger_gives(corpus_dir: Path) -> None:
    """Review 4, #3: the tuner's card showed the verdict's step before the fix search
    ("Raise the target to at least 3,032 tokens, or search ...") while ``tuner.debug()``
    for the same run said "Apply: ..."; after Apply, "Lower the target to at most 2,290
    ..." against "Keep the run as it is". The card now shows the debugger's step, before
    and after Apply."""
    transcript = load_transcript(corpus_dir / "tau_bench_airline__task34_trial0.json")
    tuner = tune(transcript, _pipeline(2500), budget=2500)
    for _round in range(2):
        assert tuner.verdict is not None
        debugger = tuner.debug()
        step = debugger.verdict.next_step
        assert tuner.verdict.next_step == step
        # Shown as (label, text): "Next step" and what to do, or "Nothing to change" and
        # why, once the applied fix leaves a run that fits and is safe.
        html = tuner.status_html()
        assert all(escape(part) in html for part in debugger.verdict.next_step_parts)
        if not debugger.fixes:
            break
        debugger.apply(0)  # loads the fix into the tuner, which re-runs
    assert _round == 1, "the first run has a fix to apply"
