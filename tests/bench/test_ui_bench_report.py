"""bench/ui_bench.py's report (no browser): the Transcript and Analysis page rows and their
verdicts, the note on a shared machine, and reports of older runs without those measures."""

from __future__ import annotations

import importlib
import statistics
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def ui_bench() -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("ui_bench")


def _runs(
    ui_bench: ModuleType, transcript: list[float], analysis: tuple[float, float] = (0.0, 0.0)
) -> list[object]:
    return [
        ui_bench.RunTimes(
            first_screen_s=1.5,
            upload_complete_s=6.0,
            lab_first_s=1.8,
            lab_target=3_200_000,
            lab_revisit_s=0.9,
            transcript_s=t,
            analysis_first_s=analysis[0] * t,
            analysis_complete_s=analysis[1] * t,
            reference_change_s=[1.2],
            truncation_change_s=[0.8],
        )
        for t in transcript
    ]


def _report(ui_bench: ModuleType, runs: list[object], load: str = "0.50, 0.60, 0.70") -> str:
    env = {"CPUs": "2", "load average at the end (1, 5, 15 min)": load}
    notes = [*ui_bench.load_note(env), *ui_bench.findings(runs, [], 50_000)]
    return str(
        ui_bench.render_report(
            runs, [], count=50_000, size_bytes=31_000_000, tokens=6_400_000, env=env, notes=notes
        )
    )


def _row(report: str, name: str) -> list[str]:
    line = next(x for x in report.splitlines() if x.startswith(f"| {name} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


@pytest.mark.parametrize("times", [[1.0, 1.5, 3.0], [2.5, 1.9, 2.6]])
def test_transcript_row_has_the_median_and_the_verdict(
    ui_bench: ModuleType, times: list[float]
) -> None:
    report = _report(ui_bench, _runs(ui_bench, times))
    row = _row(report, "Transcript page, first render")
    median = statistics.median(times)
    assert float(row[1]) == pytest.approx(median, abs=0.005)
    assert row[-1] == ("met" if median <= ui_bench.GOAL_LAB_S else "**missed**")
    assert "50,000-message transcript" in report
    assert "shared the machine" not in report


def test_an_older_run_without_the_transcript_measure_has_no_row(ui_bench: ModuleType) -> None:
    report = _report(ui_bench, _runs(ui_bench, [0.0, 0.0]))
    assert "Transcript page" not in report
    assert "Analysis page" not in report


@pytest.mark.parametrize("first", [0.8, 2.4])
def test_analysis_rows_have_the_medians_and_the_first_numbers_verdict(
    ui_bench: ModuleType, first: float
) -> None:
    times = [1.0, 1.5, 3.0]  # scales each run's analysis times
    report = _report(ui_bench, _runs(ui_bench, times, analysis=(first, 5.0)))
    row = _row(report, "Analysis page, first numbers (last plan, cold)")
    median = first * statistics.median(times)
    assert float(row[1]) == pytest.approx(median, abs=0.005)
    assert row[-1] == ("met" if median <= ui_bench.GOAL_ANALYSIS_FIRST_S else "**missed**")
    complete = _row(report, "Analysis page, complete (fact survival)")
    assert float(complete[1]) == pytest.approx(5.0 * statistics.median(times), abs=0.005)
    assert complete[-1] == ""
    verdict = "within" if median <= ui_bench.GOAL_ANALYSIS_FIRST_S else "over"
    assert f"first numbers after {median:.2f} s, {verdict} the 2 s goal" in report


def test_a_loaded_machine_is_said(ui_bench: ModuleType) -> None:
    report = _report(ui_bench, _runs(ui_bench, [1.0]), load="6.66, 16.71, 15.73")
    assert "the load average reached 16.7 on 2 CPUs" in report
