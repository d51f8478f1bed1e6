"""A declared context window in the verdict, the fix search and the next step (review 5
N1): a compacted history over the window is a cost ("Fits and safe" never), no fix raises
the target or the trigger past it, and a run that cannot fit under it says so."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import MessageIndex, load_transcript, run_strategy, strategy_from_config
from compactlens.analysis import (
    advise,
    judge_run,
    search_fixes,
    verdict,
)
from compactlens.analysis.fixes import retarget, token_trigger
from compactlens.analysis.report import analyze
from compactlens.analysis.verdict import first_cost
from compactlens.cli import main
from compactlens.summarizers.extractive import ExtractiveSummarizer

WINDOW = 16_000


def _stage(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "trigger": {"op": "exceed", "metric": "tokens", "n": 12_000}, **extra}


#: The inspector's reference pipeline at 12,000 tokens (its default configuration).
REFERENCE: dict[str, Any] = {
    "type": "pipeline",
    "strategies": [
        _stage(
            "tool_result_collapse",
            keep_last_tool_call_groups=1,
            minimum_preserved=2,
            formatter="results",
        ),
        _stage(
            "summarization", minimum_preserved=4, max_input_tokens=8000, max_summary_tokens=2048
        ),
        _stage("sliding_window", minimum_preserved=1, preserve_system=True),
        _stage(
            "truncation",
            minimum_preserved=2,
            preserve_system=True,
            preserve_first_user_group=False,
            target={"op": "at_most", "metric": "tokens", "n": 12_000},
        ),
    ],
}


@pytest.fixture(scope="module")
def cannot_fit(repo_root: Path) -> tuple[MessageIndex, Any]:
    transcript = load_transcript(repo_root / "sample_transcripts" / "cannot_fit_16k.json")
    index = MessageIndex.build(transcript.messages)
    strategy = strategy_from_config(REFERENCE, summarizer=ExtractiveSummarizer())
    return index, strategy


def _targets(fix: Any) -> list[int]:
    """Every token number a fix sets: its target and its lowest token trigger."""
    return [n for n in (fix.target_tokens, token_trigger(fix.strategy)) if n is not None]


def test_no_fix_goes_past_the_window_and_the_step_says_none_fits(cannot_fit) -> None:
    index, strategy = cannot_fit
    result = run_strategy(index, strategy)
    assert result.status == "cannot-fit" and result.tokens_after > WINDOW
    judged, search = advise(index, result, strategy, analysis={"context_window": WINDOW})
    assert judged.level == "no-fit"
    assert judged.numbers.context_window == WINDOW
    window = next(r for r in judged.reasons if r.code == "context-window")
    assert window.level == "costs"
    assert f"{result.tokens_after:,}" in window.text and f"{WINDOW:,}" in window.text
    assert search.fixes, "the clamp that fits under the window is still offered"
    for fix in search.fixes:
        assert all(n <= WINDOW for n in _targets(fix)), fix.summary
        assert fix.tokens_after <= WINDOW
        assert fix.verdict is not None and not fix.verdict.numbers.over_window
    step = judged.next_step
    raised = [int(n.replace(",", "")) for n in re.findall(r"target to ([\d,]+)", step)]
    assert all(n <= WINDOW for n in raised), step
    assert "16,000-token context window" in step
    # Applied, the best fix fits the window; its own step never asks for a target past it.
    best = search.fixes[0]
    applied = run_strategy(index, best.strategy)
    after, _ = advise(index, applied, best.strategy, analysis={"context_window": WINDOW})
    assert applied.tokens_after <= WINDOW and not after.numbers.over_window
    assert "raise the target" not in after.next_step.lower(), after.next_step
    # Without a window the same run is offered the larger target it reaches (unchanged).
    plain, found = advise(index, result, strategy)
    assert any(f.target_tokens and f.target_tokens > WINDOW for f in found.fixes)
    assert "context-window" not in {r.code for r in plain.reasons}


def test_the_old_raise_past_the_window_is_not_safe(cannot_fit) -> None:
    index, strategy = cannot_fit
    raised = retarget(strategy, 23_561, 23_944)
    result = run_strategy(index, raised)
    assert result.status != "cannot-fit" and result.tokens_after > WINDOW
    without = judge_run(index, result, raised)
    over = judge_run(index, result, raised, analysis={"context_window": WINDOW})
    assert without.level == "safe"  # what review 5 saw: every check passed
    assert over.level == "costs"
    cost = first_cost(over)
    assert cost is not None and cost.code == "context-window"
    assert "16,000-token context window" in cost.text
    # Its next step leads under the window, never to a larger target.
    lowered = [int(n.replace(",", "")) for n in re.findall(r"at most ([\d,]+)", over.next_step)]
    assert lowered and all(n <= WINDOW for n in lowered), over.next_step
    assert "Raise" not in over.next_step


def test_a_history_over_the_share_but_under_the_window_is_a_note(cannot_fit) -> None:
    index, strategy = cannot_fit
    raised = retarget(strategy, 23_561, 23_944)
    result = run_strategy(index, raised)
    window = result.tokens_after + 1000  # 96%: over max_fraction (80%), under the window
    judged = judge_run(index, result, raised, analysis={"context_window": window})
    note = next(r for r in judged.reasons if r.code == "context-window")
    assert note.level == "safe" and note.text.startswith("Note, not a cost")
    assert judged.level == "safe"


@settings(max_examples=25, deadline=None)
@given(
    window=st.integers(min_value=1_000, max_value=60_000),
    target=st.integers(min_value=2_000, max_value=30_000),
)
def test_no_listed_fix_exceeds_a_random_window(cannot_fit, window: int, target: int) -> None:
    index, strategy = cannot_fit
    config = retarget(strategy, target, target)
    found = search_fixes(index, config, context_window=window)
    for fix in found.fixes:
        assert all(n <= window for n in _targets(fix)), (window, fix.summary)
        assert fix.tokens_after <= window
    # A run over the window is never "safe", whatever else passed.
    result = run_strategy(index, config)
    report = analyze(index.messages, result, triggers=config, context_window=window)
    judged = verdict(result, report)
    if result.tokens_after > window:
        assert judged.level != "safe"
        assert "context-window" in {r.code for r in judged.costs}


def test_the_cli_report_row_and_compact_explain_respect_the_window(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    sample = repo_root / "sample_transcripts" / "cannot_fit_16k.json"
    (folder / sample.name).write_bytes(sample.read_bytes())
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"strategy": REFERENCE, "analysis": {"context_window": WINDOW}}),
        encoding="utf-8",
    )
    out = tmp_path / "rows.jsonl"
    args = ["report", str(folder), "--config", str(config), "--jobs", "1", "-o", str(out)]
    assert main([*args, "--quiet"]) == 0
    row = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert row["verdict"] == "no-fit"
    assert "16,000-token context window" in row["costs"]
    raised = [int(n.replace(",", "")) for n in re.findall(r"target to ([\d,]+)", row["next_step"])]
    assert all(n <= WINDOW for n in raised), row["next_step"]
    capsys.readouterr()
    code = main(["compact", str(sample), "--config", str(config), "--explain", "--json"])
    assert code != 0  # the run itself does not fit
    data = json.loads(capsys.readouterr().out)
    for fix in data["fixes"]["fixes"]:
        assert fix["target_tokens"] is None or fix["target_tokens"] <= WINDOW
        assert fix["tokens_after"] <= WINDOW
    assert data["verdict"]["numbers"]["context_window"] == WINDOW
    # --context-window on the command line does the same without the config's analysis.
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"strategy": REFERENCE}), encoding="utf-8")
    capsys.readouterr()
    main(["compact", str(sample), "--config", str(bare), "--json", "--context-window", "16000"])
    flagged = json.loads(capsys.readouterr().out)
    assert flagged["verdict"]["next_step"] == data["verdict"]["next_step"]
