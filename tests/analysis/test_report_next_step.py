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
