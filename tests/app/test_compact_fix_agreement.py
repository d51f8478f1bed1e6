"""The ``compact()`` fix search is one search (:mod:`compactlens.analysis.compact_fixes`):
the inspector's debugger (through its adapter, each fix judged as its run is judged) and a
``compactlens report`` row give the same next step for the same file and settings, on a
real corpus log that cannot fit (the bundled samples are compared in
``test_verdict_everywhere``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compactlens.analysis import Verdict, run_corpus_report
from compactlens.transcript import load_transcript
from compactlens_inspector.lab import compact_fixes
from compactlens_inspector.lab.config import LabConfig, SummarizerSettings
from compactlens_inspector.lab.presets import preset
from compactlens_inspector.lab.runs import RunOutcome, build_index, make_summarizer, run_config
from compactlens_inspector.views.analysis import AnalysisSettings, judge, run_analysis

PONY = "openhands_events__ponylang__ponyc-4593.json"


def _app_step(path: Path, config: LabConfig) -> tuple[str, str]:
    """The debugger's verdict level and next step for ``config`` over ``path``."""
    transcript = load_transcript(path)
    index = build_index(transcript.messages, "estimate")

    def judged(cfg: LabConfig, explain: bool = False) -> tuple[RunOutcome, Verdict | None]:
        run = run_config(
            index,
            cfg,
            make_summarizer(SummarizerSettings()),
            explain=explain,
            format_name=transcript.format,
        )
        return run, judge(run, run_analysis(index, run, AnalysisSettings()))

    outcome, current = judged(config, explain=True)
    assert current is not None
    ranked, tried = compact_fixes.search(outcome, index, current, lambda cfg: judged(cfg)[1])
    return current.level, compact_fixes.next_step(current, ranked, tried)


def test_the_report_row_gives_the_debuggers_next_step(corpus_dir: Path, tmp_path: Path) -> None:
    if not (corpus_dir / PONY).exists():
        pytest.skip(f"{PONY} is not in the corpus")
    config = preset("compact", 3000)
    level, step = _app_step(corpus_dir / PONY, config)
    assert level == "no-fit" and step.startswith("Apply: ")
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / PONY).symlink_to(corpus_dir / PONY)
    (row,) = run_corpus_report(folder, {"compact": config.compact.to_dict()}, jobs=1).rows
    assert (row.verdict, row.next_step) == (level, step)


def test_every_corpus_row_reads_as_the_debugger(corpus_files: list[Path], tmp_path: Path) -> None:
    """Each corpus log with the inspector's compact() preset at 3,000 tokens: the row's
    status, verdict and next step are the debugger's (a history under the trigger is left
    as it is on both, not compacted by the report alone)."""
    folder = tmp_path / "in"
    folder.mkdir()
    for path in corpus_files:
        (folder / path.name).symlink_to(path)
    config = preset("compact", 3000)
    rows = run_corpus_report(folder, {"compact": config.compact.to_dict()}, jobs=1).rows
    statuses = set()
    for row in rows:
        transcript = load_transcript(folder / row.file)
        index = build_index(transcript.messages, "estimate")
        run = run_config(
            index, config, make_summarizer(SummarizerSettings()), format_name=transcript.format
        )
        assert run.result is not None
        assert row.status == run.result.status, row.file
        assert (row.verdict, row.next_step) == _app_step(folder / row.file, config), row.file
        statuses.add(row.status)
    assert {"unchanged", "compacted", "cannot-fit"} <= statuses  # each kind of run is compared
