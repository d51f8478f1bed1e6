"""``compactlens compact`` prints the run's verdict after its report, and ``--json`` holds
it as ``verdict``: the very value :func:`compactlens.verdict` gives for the same run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compactlens import (
    CharEstimator,
    Guards,
    MessageIndex,
    analyze,
    load_transcript,
    run_strategy,
    strategy_from_config,
    verdict,
)
from compactlens.analysis import (
    DEFAULT_CONTEXT_WINDOW,
    advised,
    judge_fixes,
    reference_pipeline,
    search_fixes,
    strategy_triggers,
)
from compactlens.cli import main
from compactlens.notebook import debug

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_transcripts"
PIPELINE = REPO / "examples" / "pipeline.json"


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _library_verdict(path: Path, config: dict[str, Any], guards: Guards) -> dict[str, Any]:
    """The verdict of the same run, computed with the library alone (against the
    context window every surface judges with when none is given)."""
    window = {"context_window": DEFAULT_CONTEXT_WINDOW}
    transcript = load_transcript(path)
    index = MessageIndex.build(transcript.messages, CharEstimator())
    strategy = strategy_from_config(config)
    result = run_strategy(index, strategy, tokenizer_given=True, guards=guards)
    provider = guards.provider
    report = analyze(
        transcript,
        result,
        triggers=strategy_triggers(strategy, tokenizer_given=True),
        tokenizer=CharEstimator(),
        providers=(provider,) if provider else ("openai-chat", "anthropic"),
        **window,
    )
    current = verdict(result, report, provider=provider)
    # The run's one next step: the library's advice over the judged fixes.
    search = search_fixes(index, strategy, guards=guards, summaries=result.summaries)
    return advised(
        index,
        strategy,
        current,
        judge_fixes(index, search, analysis=window),
        guards=guards,
        summaries=result.summaries,
        analysis=window,
    )[0].to_dict()


@pytest.mark.parametrize(
    ("sample", "argv", "config"),
    [
        ("coding_agent.json", ["--config", PIPELINE], json.loads(PIPELINE.read_text())),
        (
            "support_long.json",
            ["--strategy", "truncation", "--param", "max_n=30000", "--param", "compact_to=9000"],
            {"type": "truncation", "max_n": 30000, "compact_to": 9000},
        ),
        (
            "cannot_fit_16k.json",
            ["--strategy", "sliding_window", "--param", "trigger=tokens_exceed:12000"],
            {"type": "sliding_window", "trigger": {"op": "exceed", "metric": "tokens", "n": 12000}},
        ),
    ],
    ids=["pipeline", "truncation", "cannot-fit"],
)
def test_json_verdict_is_the_library_verdict_of_the_same_run(
    capsys: pytest.CaptureFixture[str], sample: str, argv: list[object], config: dict[str, Any]
) -> None:
    path = SAMPLES / sample
    code, out, _err = run(capsys, "compact", path, *argv, "--json")
    data = json.loads(out)
    assert code == (1 if data["status"] == "cannot-fit" else 0)
    expected = _library_verdict(path, config, Guards.from_dict(data["guards"]))
    assert data["verdict"] == expected
    numbers = data["verdict"]["numbers"]
    assert (numbers["tokens_before"], numbers["tokens_after"]) == (
        data["tokens_before"],
        data["tokens_after"],
    )
    assert sum(numbers["groups"].values()) == len(data["decisions"])


def test_text_output_ends_with_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    # For OpenAI Chat Completions the run introduces nothing (for Anthropic its collapsed
    # results leave two assistant turns in a row: a warning, and the verdict has costs).
    code, out, _err = run(
        capsys,
        "compact",
        SAMPLES / "coding_agent.json",
        "--config",
        PIPELINE,
        "--provider",
        "openai-chat",
    )
    assert code == 0
    lines = out.splitlines()
    start = (
        "verdict: safe - Fits and safe: 8,667 to 7,459 tokens (target 8,000); "
        "50 groups kept, 2 collapsed; 98% fact recall ("
    )
    head = next(i for i, line in enumerate(lines) if line.startswith(start))
    reasons = lines[head + 1 : -1]
    # target, context window, errors, warnings, latest request, system prompt, next
    # compaction, recall, prompt cache
    assert len(reasons) == 9 and all(line.startswith("  [ok] ") for line in reasons)
    assert lines[-1] == "Nothing to change: the run fits and every check passed."
    # What the command printed before stays as it was.
    assert lines[1] == "status: compacted"
    assert "tokens: 8,667 → 7,459 (saved 1,208)" in lines


def test_cannot_fit_prints_no_fit_with_a_target_and_still_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _err = run(
        capsys,
        "compact",
        SAMPLES / "cannot_fit_16k.json",
        "--strategy",
        "sliding_window",
        "--param",
        "trigger=tokens_exceed:12000",
    )
    assert code == 1
    # Nothing was compacted: the summary says so, not "23,561 to 23,561 tokens".
    assert "verdict: no-fit - Does not fit: 23,561 tokens, left as they are (target 12,000)" in out
    assert "  [no fit] The history does not fit: at best 23,561 tokens" in out
    # The step is the debugger's, without --explain too: the change that keeps the target
    # keeps under half of the facts, so it is one of two choices beside a larger target.
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("Next step: Choose: no change that keeps the target keeps most")
    assert "or keep within the target at a cost (" in last
    assert "): add a clamp stage first" in last


def test_explain_makes_the_best_fix_the_next_step(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--strategy", "sliding_window", "--param", "trigger=tokens_exceed:12000"]
    code, out, _err = run(
        capsys, "compact", SAMPLES / "cannot_fit_16k.json", *argv, "--explain", "--json"
    )
    data = json.loads(out)
    assert code == 1
    raised, costly = data["fixes"]["fixes"][:2]
    # The listed fixes are in the next step: the larger target, which fits and is safe,
    # first (review 4, #7), then the costly choice (it keeps under half of the facts) with
    # its own verdict's summary.
    step = data["verdict"]["next_step"]
    assert raised["verdict"]["level"] == "safe" and costly["verdict"]["level"] == "costs"
    assert step.startswith("Choose: ")
    assert "keep within the target at a cost (" in step and f"): {costly['changes'][0]}" in step
    assert step.endswith(f", giving {costly['verdict']['summary']}.")


def test_a_fix_has_one_recall_the_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    # Each listed fix's "recall" is its verdict's fact recall (the number the text shows);
    # the search's own quick count is "search_recall" (review 6: 1.0 beside 0.936).
    argv = ["--strategy", "sliding_window", "--param", "trigger=tokens_exceed:12000"]
    _code, out, _err = run(
        capsys, "compact", SAMPLES / "cannot_fit_16k.json", *argv, "--explain", "--json"
    )
    fixes = json.loads(out)["fixes"]["fixes"]
    assert fixes
    for fix in fixes:
        assert fix["recall"] == fix["verdict"]["numbers"]["fact_recall"]
        assert 0.0 <= fix["search_recall"] <= 1.0


def test_with_output_to_stdout_the_verdict_goes_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys, "compact", SAMPLES / "coding_agent.json", "--config", PIPELINE, "-o", "-"
    )
    assert code == 0
    json.loads(out)  # the transcript alone
    assert "verdict: safe - Fits and safe" in err and "Nothing to change:" in err


@pytest.mark.parametrize(("case", "target"), [("swe", 2100), ("coding_agent", 4300)])
def test_one_next_step_in_text_json_explain_and_the_notebook(
    capsys: pytest.CaptureFixture[str], corpus_dir: Path, tmp_path: Path, case: str, target: int
) -> None:
    """Review 3, #9: one run, one next step: the text, ``--json`` and ``--explain`` print
    the one the library's :func:`~compactlens.analysis.advised` gives, and the notebook's
    ``debug()`` shows it too (SWE-agent at 2,100 and coding_agent at 4,300 under the
    reference pipeline, the inspector's default configuration)."""
    path = (
        corpus_dir / "swe_agent__pwn__warmup.json"
        if case == "swe"
        else SAMPLES / "coding_agent.json"
    )
    strategy = reference_pipeline(target)
    config = tmp_path / "config.json"
    config.write_text(json.dumps(strategy.to_dict()))
    _code, text, _err = run(capsys, "compact", path, "--config", config)
    _code, explained, _err = run(capsys, "compact", path, "--config", config, "--explain")
    _code, out, _err = run(capsys, "compact", path, "--config", config, "--json")
    data = json.loads(out)
    step = data["verdict"]["next_step"]
    # A fix, one click away (or the choice of two), on every surface.
    assert step.startswith(("Apply: ", "Choose: ")), step
    assert text.rstrip().splitlines()[-1] == f"Next step: {step}"
    assert explained.rstrip().splitlines()[-1] == f"Next step: {step}"
    index = MessageIndex.build(load_transcript(path).messages, CharEstimator())
    guards = Guards.from_dict(data["guards"])
    result = run_strategy(index, strategy, tokenizer_given=True, guards=guards)
    assert debug(result, strategy, index, guards=guards).verdict.next_step == step


def test_explain_on_a_safe_run_says_nothing_to_fix_without_a_search(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Review 6 R20 (brief R8): ``--explain`` on a run that fits and is safe printed
    "fixes (40 changes re-run, …): none: no change fits without breaking a requirement".
    It re-runs nothing and says there is nothing to fix (text and ``--json``)."""
    path = SAMPLES / "shopping_assistant.json"
    code, out, _ = run(capsys, "compact", path, "--config", PIPELINE, "--explain")
    assert code == 0
    assert "verdict: safe" in out
    assert "fixes: nothing to fix: the run fits and every check passed" in out
    assert "re-run" not in out and "none:" not in out
    code, out, _ = run(capsys, "compact", path, "--config", PIPELINE, "--explain", "--json")
    data = json.loads(out)
    assert data["verdict"]["level"] == "safe"
    assert data["fixes"]["tried"] == 0 and data["fixes"]["fixes"] == []
    assert data["fixes"]["none_reason"] == "the run fits and every check passed"


def test_the_explanation_of_a_met_target_leaves_the_judgement_to_the_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Review 6: "explanation: Target met: … tokens." right above "verdict: costs".
    code, out, _ = run(
        capsys,
        "compact",
        SAMPLES / "coding_agent.json",
        "--strategy",
        "truncation",
        "--param",
        "trigger=tokens_exceed:4000",
        "--explain",
    )
    assert code == 0
    (line,) = [s for s in out.splitlines() if s.startswith("explanation:")]
    assert "Target met" in line and "the verdict's to say" in line
    assert "verdict: costs" in out


def test_the_cli_names_stages_and_pairing_problems_in_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Review 6: the stage "provider_repair" and the codes "unresolved_call", "orphan_result"
    # as prose ("unresolved_call at message 16: …").
    code, out, _ = run(
        capsys,
        "compact",
        SAMPLES / "pairing_problems.json",
        "--strategy",
        "truncation",
        "--param",
        "trigger=tokens_exceed:100",
    )
    assert code in (0, 1, 2)
    problems = [ln for ln in out.splitlines() if " at message " in ln and ln.startswith("  ")]
    assert problems and not [ln for ln in problems if "_" in ln.split(" at message ")[0]]
    assert "call without a result at message" in out
    assert "  0  Truncation " in out
