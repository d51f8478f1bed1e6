"""``compactlens report`` rows give the run's one next step, as ``compactlens compact``.

Every other surface (the command line's text and ``--json``, ``debug()``, the inspector)
gives the next step :func:`compactlens.analysis.advised` finds over the fix search; a
report row gave the verdict's own step ("set the provider in the guards ..." where
``compact`` said "Apply: raise the target to ..."), and counted provider problems for
every provider where ``compact`` counts them for the transcript's. The search can be
turned off (``--no-fix-search``, ``"fix_search": false``): the rows then keep the
verdict's own step and the summary says so."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from compactlens.analysis import CorpusConfig, run_corpus_report
from compactlens.cli import main
from compactlens.cli.report import main as report_main
from compactlens.model.errors import ConfigError

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"
TRIGGER = {"op": "exceed", "metric": "tokens", "n": 4000}
STRATEGY: dict[str, Any] = {
    "type": "pipeline",
    "strategies": [
        {
            "type": "tool_result_collapse",
            "trigger": {"op": "exceed", "metric": "tokens", "n": 4000},
        },
        {
            "type": "truncation",
            "trigger": TRIGGER,
            "minimum_preserved": 4,
        },
    ],
}
#: A run that does not fit, one that fits with costs, one that fits and is safe.
FILES = ("cannot_fit_16k.json", "support_long.json", "coding_agent.json")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "transcripts"
    out.mkdir()
    for name in FILES:
        if not (SAMPLES / name).exists():
            pytest.skip(f"{name} is not among the samples")
        (out / name).symlink_to(SAMPLES / name)
    return out


def _compact_verdict(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    config = tmp_path / "strategy.json"
    config.write_text(json.dumps(STRATEGY), encoding="utf-8")
    main(["compact", str(path), "--config", str(config), "--json"])
    verdict: dict[str, Any] = json.loads(capsys.readouterr().out)["verdict"]
    return verdict


def test_each_row_gives_the_next_step_compact_gives(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run_corpus_report(folder, {"strategy": STRATEGY}, jobs=1)
    assert report.summary()["fix_search"] is True
    levels = set()
    for row in report.rows:
        expected = _compact_verdict(folder / row.file, tmp_path, capsys)
        assert row.verdict == expected["level"], row.file
        assert row.next_step == expected["next_step"], row.file
        levels.add(row.verdict)
    # The three kinds of run are covered: the search ran where the run is not safe.
    assert levels == {"no-fit", "costs", "safe"}


def test_without_the_fix_search_rows_keep_the_verdicts_own_step(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    searched = {r.file: r for r in run_corpus_report(folder, {"strategy": STRATEGY}, jobs=1).rows}
    config = {"strategy": STRATEGY, "fix_search": False}
    plain = run_corpus_report(folder, config, jobs=1)
    assert plain.summary()["fix_search"] is False
    changed = 0
    for row in plain.rows:
        other = searched[row.file]
        # The same run and verdict; only the next step may differ, where the run is not safe.
        assert (row.tokens_after, row.verdict, row.costs) == (
            other.tokens_after,
            other.verdict,
            other.costs,
        )
        if row.verdict == "safe":
            assert row.next_step == other.next_step
        changed += row.next_step != other.next_step
    assert changed  # the search changed at least one step (else this test proves nothing)
    # The command line's flag does the same, and its summary line says so.
    cfg = tmp_path / "report.json"
    cfg.write_text(json.dumps({"strategy": STRATEGY}), encoding="utf-8")
    out = tmp_path / "rows.csv"
    assert report_main([str(folder), "--config", str(cfg), "-o", str(out), "--no-fix-search"]) == 0
    assert '"fix_search": false' in capsys.readouterr().err
    assert CorpusConfig.from_dict({"strategy": STRATEGY}).fix_search is True
    with pytest.raises(ConfigError, match="fix_search must be true or false"):
        CorpusConfig.from_dict({"strategy": STRATEGY, "fix_search": "no"})


# -- compact() configurations ---------------------------------------------------------------

PONY = "openhands_events__ponylang__ponyc-4593.json"
#: The inspector's "compact" preset at 3,000 tokens: the trigger at the target.
PONY_AT_3000 = {"target_tokens": 3000, "keep_last_messages": 4, "trigger_tokens": 3000}


def _row(folder: Path, settings: dict[str, Any], **extra: Any) -> Any:
    (row,) = run_corpus_report(folder, {"compact": settings, **extra}, jobs=1).rows
    return row


def _applied(step: str, settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` changed as the next step ``step`` says ("Apply: raise the target to
    N tokens and the trigger to M (...)", "set “newest messages kept verbatim” to K")."""
    said = step.split(" (", 1)[0]
    out = dict(settings)
    for key, pattern in (
        ("target_tokens", r"target (?:and the trigger )?to ([\d,]+)"),
        ("trigger_tokens", r"trigger to ([\d,]+)"),
        ("keep_last_messages", r"kept verbatim” to (\d+)"),
    ):
        found = re.search(pattern, said)
        if found:
            out[key] = int(found.group(1).replace(",", ""))
    if "the target and the trigger to" in said:
        out["trigger_tokens"] = out["target_tokens"]
    return out


def test_a_compact_row_gives_a_fix_that_its_applied_settings_keep(
    corpus_dir: Path, tmp_path: Path
) -> None:
    """Pony at 3,000 tokens cannot fit; the row's next step applies changed settings
    (not the verdict's own "raise the target to at least ..."), and the row of those
    settings gives the verdict the step promised."""
    if not (corpus_dir / PONY).exists():
        pytest.skip(f"{PONY} is not in the corpus")
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / PONY).symlink_to(corpus_dir / PONY)
    row = _row(folder, PONY_AT_3000)
    assert row.status == "cannot-fit" and row.verdict == "no-fit"
    assert row.next_step.startswith("Apply: ")
    plain = _row(folder, PONY_AT_3000, fix_search=False)
    assert plain.next_step != row.next_step  # the search, not the verdict's own step
    applied = _applied(row.next_step, PONY_AT_3000)
    assert applied != PONY_AT_3000
    fixed = _row(folder, applied)
    assert fixed.status == "compacted" and fixed.verdict in {"safe", "costs"}
    assert fixed.tokens_after <= applied["target_tokens"]
    # The step names the applied run's verdict summary, which the applied row repeats.
    promised = row.next_step.split(" (", 1)[1]
    assert promised.startswith(f"{fixed.tokens_before:,} to {fixed.tokens_after:,} tokens")
    kept = (fixed.facts_extracted or 0) - (fixed.facts_lost or 0)
    assert f"({kept} of {fixed.facts_extracted})" in promised
