"""The corpus report over sample_transcripts/ and the shared corpus, with a broken file."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from compactlens import analyze, apply_compaction, strategy_from_config
from compactlens.analysis import CorpusConfig, CorpusRow, read_rows, run_corpus_report, write_rows
from compactlens.analysis.corpus import COLUMNS, render_html
from compactlens.cli.report import main as report_main
from compactlens.formats import from_caller
from compactlens.model.errors import ConfigError

STRATEGY_CONFIG: dict[str, Any] = {
    "strategy": {
        "type": "pipeline",
        "strategies": [
            {
                "type": "tool_result_collapse",
                "trigger": {"op": "exceed", "metric": "tokens", "n": 4000},
            },
            {
                "type": "truncation",
                "trigger": {"op": "exceed", "metric": "tokens", "n": 4000},
                "minimum_preserved": 4,
            },
        ],
    },
    "analysis": {"context_window": 16000, "further_turns": 5},
}
COMPACT_CONFIG: dict[str, Any] = {"compact": {"target_tokens": 4000, "keep_last_messages": 4}}
BROKEN = "broken<b>.json"


def _link_folder(tmp: Path, files: list[Path]) -> Path:
    folder = tmp / "transcripts"
    folder.mkdir()
    for f in files:
        (folder / f.name).symlink_to(f)
    (folder / BROKEN).write_text('{"messages": [{"role": "user", "content": ', encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def sample_files() -> list[Path]:
    root = Path(__file__).resolve().parents[2] / "sample_transcripts"
    files = sorted(root.glob("*.json"))
    if not files:
        pytest.skip(f"no sample transcripts in {root}")
    return files


@pytest.fixture
def samples_dir(tmp_path: Path, sample_files: list[Path]) -> Path:
    return _link_folder(tmp_path, sample_files)


def _check_rows(rows: tuple[CorpusRow, ...], files: list[Path]) -> None:
    by_file = {r.file: r for r in rows}
    assert set(by_file) == {f.name for f in files} | {BROKEN}
    broken = by_file[BROKEN]
    assert broken.status == "failed" and broken.failed
    assert broken.error is not None and "Expecting value" in broken.error
    for f in files:
        row = by_file[f.name]
        assert not row.failed, (f.name, row.error)
        assert row.status in ("unchanged", "compacted", "cannot-fit")
        assert row.messages_before and row.tokens_before is not None
        assert row.fact_recall is not None and 0.0 <= row.fact_recall <= 1.0
        assert row.cache_prefix_messages is not None
        assert row.cache_prefix_messages <= min(row.messages_before, row.messages_after or 0)


def test_report_over_sample_transcripts_records_the_broken_file(
    samples_dir: Path, sample_files: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "report.csv"
    seen: list[tuple[int, int, str]] = []
    report = run_corpus_report(
        samples_dir,
        STRATEGY_CONFIG,
        jobs=2,
        output=out,
        progress=lambda done, total, row: seen.append((done, total, row.file)),
    )
    _check_rows(report.rows, sample_files)
    assert report.engine == "process"
    assert [d for d, _, _ in seen] == list(range(1, len(sample_files) + 2))
    assert {t for _, t, _ in seen} == {len(sample_files) + 1}
    with out.open(newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert tuple(table[0]) == COLUMNS
    assert [r["file"] for r in table] == sorted(r["file"] for r in table)
    assert read_rows(out) == list(report.rows)


def test_a_row_matches_analyzing_that_file_directly(
    samples_dir: Path, sample_files: list[Path]
) -> None:
    report = run_corpus_report(samples_dir, STRATEGY_CONFIG, jobs=1)
    name = "coding_agent.json"
    if name not in {f.name for f in sample_files}:
        pytest.skip(f"{name} is not among the samples")
    wire = json.loads((samples_dir / name).read_text(encoding="utf-8"))["messages"]
    strategy = strategy_from_config(STRATEGY_CONFIG["strategy"])
    direct = analyze(wire, apply_compaction(wire, strategy), triggers=strategy)
    row = next(r for r in report.rows if r.file == name)
    assert row.status == direct.status
    assert (row.tokens_before, row.tokens_after) == (direct.tokens_before, direct.tokens_after)
    assert row.fact_recall == pytest.approx(direct.facts.recall)
    assert row.facts_lost == len(direct.facts.lost)
    assert row.cache_prefix_messages == direct.cache.prefix_messages
    assert row.problems == len(direct.errors)


def test_a_second_run_resumes_and_skips_done_files(
    samples_dir: Path, sample_files: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "report.csv"
    first = run_corpus_report(samples_dir, STRATEGY_CONFIG, jobs=1, output=out)
    assert first.processed == len(sample_files) + 1 and first.skipped == 0
    again = run_corpus_report(samples_dir, STRATEGY_CONFIG, jobs=1, output=out)
    assert again.processed == 0 and again.skipped == len(sample_files) + 1
    assert again.rows == first.rows
    dropped = first.rows[0].file
    write_rows([r for r in first.rows if r.file != dropped], out)
    third = run_corpus_report(samples_dir, STRATEGY_CONFIG, jobs=1, output=out)
    assert third.processed == 1
    assert {r.file for r in read_rows(out)} == {r.file for r in first.rows}
    fresh = run_corpus_report(samples_dir, STRATEGY_CONFIG, jobs=1, output=out, resume=False)
    assert fresh.processed == len(sample_files) + 1


def test_html_output_is_escaped_and_resumable(samples_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    report = run_corpus_report(samples_dir, COMPACT_CONFIG, jobs=1, output=out)
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "broken&lt;b&gt;.json" in page
    assert "<b>" not in page
    assert read_rows(out) == list(report.rows)
    hostile = CorpusRow(file="x.json", status="failed", error="</script><script>alert(1)")
    html = render_html([hostile])
    assert "<script>alert(1)" not in html
    assert read_rows_from_text(html, tmp_path) == [hostile]


def read_rows_from_text(text: str, tmp_path: Path) -> list[CorpusRow]:
    path = tmp_path / "hostile.html"
    path.write_text(text, encoding="utf-8")
    return read_rows(path)


def test_parquet_and_jsonl_outputs_round_trip(samples_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    report = run_corpus_report(samples_dir, COMPACT_CONFIG, jobs=1)
    for suffix in (".parquet", ".jsonl"):
        path = tmp_path / f"rows{suffix}"
        write_rows(report.rows, path)
        assert read_rows(path) == list(report.rows)


def test_report_over_the_shared_corpus(corpus_files: list[Path], tmp_path: Path) -> None:
    folder = _link_folder(tmp_path, corpus_files)
    out = tmp_path / "corpus.csv"
    report = run_corpus_report(folder, COMPACT_CONFIG, jobs=2, output=out)
    _check_rows(report.rows, corpus_files)
    summary = report.summary()
    assert summary["failed"] == 1
    assert summary["files"] == len(corpus_files) + 1
    for f in corpus_files:
        wire = json.loads(f.read_text(encoding="utf-8"))["messages"]
        row = next(r for r in report.rows if r.file == f.name)
        assert row.messages_before == len(from_caller(wire).messages)


@pytest.mark.slow
def test_a_worker_process_that_dies_fails_only_its_own_file(
    samples_dir: Path, sample_files: list[Path]
) -> None:
    from analysis_crash_worker import crash_on_poison

    from compactlens.analysis.corpus import _run_processes

    tasks = [(str(f), f.name) for f in sample_files[:3]]
    tasks.insert(1, (str(sample_files[0]), "poison.json"))
    rows: list[CorpusRow] = []
    _run_processes(tasks, dict(COMPACT_CONFIG), 2, rows.append, worker=crash_on_poison)
    by_file = {r.file: r for r in rows}
    assert set(by_file) == {key for _, key in tasks}
    assert by_file["poison.json"].failed
    assert "died" in (by_file["poison.json"].error or "")
    assert not any(by_file[f.name].failed for f in sample_files[:3])


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "exactly one"),
        ({**STRATEGY_CONFIG, **COMPACT_CONFIG}, "exactly one"),
        ({"compact": {"keep_last_messages": 2}}, "target_tokens"),
        ({"compact": {"target_tokens": 10, "colour": 1}}, "unknown keys"),
        ({"strategy": {"type": "nope"}}, "unknown strategy"),
        ({**COMPACT_CONFIG, "analysis": {"window": 1}}, "unknown keys"),
        ({**COMPACT_CONFIG, "surprise": 1}, "unknown keys"),
        ({**COMPACT_CONFIG, "tokenizer": "no-such-encoding"}, "unknown encoding"),
        ({"compact": {"target_tokens": "20000"}}, "positive integer"),
        ({**COMPACT_CONFIG, "analysis": {"model": "my-private-model"}}, "known models"),
    ],
)
def test_bad_configs_fail_before_any_file(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CorpusConfig.from_dict(config)


def test_bad_arguments_are_rejected(samples_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run_corpus_report(tmp_path / "missing", COMPACT_CONFIG)
    with pytest.raises(ValueError, match="output type"):
        run_corpus_report(samples_dir, COMPACT_CONFIG, output=tmp_path / "x.xlsx")
    with pytest.raises(ValueError, match="engine"):
        run_corpus_report(samples_dir, COMPACT_CONFIG, engine="dask")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="jobs"):
        run_corpus_report(samples_dir, COMPACT_CONFIG, jobs=0)


def test_corpus_errors_are_compactlens_errors(samples_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        CorpusConfig.from_dict({})
    with pytest.raises(ConfigError, match="engine"):
        run_corpus_report(samples_dir, COMPACT_CONFIG, engine="dask")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="output type"):
        write_rows([], tmp_path / "rows.xlsx")
    with pytest.raises(ConfigError, match="status"):
        CorpusRow.from_dict({"file": "a.json", "status": "exploded"})
    broken = tmp_path / "rows.html"
    broken.write_text("<html></html>", encoding="utf-8")
    with pytest.raises(ConfigError, match="no embedded rows"):
        read_rows(broken)


def test_cli_writes_a_table_and_reports_failures(
    samples_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(COMPACT_CONFIG), encoding="utf-8")
    out = tmp_path / "out.csv"
    args = [str(samples_dir), "--config", str(config), "--jobs", "1"]
    assert report_main([*args, "-o", str(out)]) == 0
    assert len(read_rows(out)) == len(list(samples_dir.glob("*.json")))
    err = capsys.readouterr().err
    assert '"failed": 1' in err
    assert report_main([*args, "--quiet", "--no-resume", "-o", str(out), "--fail-on-error"]) == 1
    assert report_main([*args, "--quiet"]) == 0
    printed = capsys.readouterr().out
    # A block per file: its name on a line of its own, then its verdict (a failure's error).
    names = {p.name for p in samples_dir.glob("*.json")}
    assert printed.splitlines()[0] in names
    assert f"{BROKEN}\n  failed: " in printed
    bad = tmp_path / "bad.json"
    bad.write_text('{"strategy": {"type": "nope"}}', encoding="utf-8")
    assert report_main([str(samples_dir), "--config", str(bad)]) == 2
    assert "unknown strategy" in capsys.readouterr().err


@pytest.mark.slow
def test_ray_engine_on_a_local_instance(
    sample_files: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before Ray is imported: no usage stats, and a node address on the loopback interface.
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray = pytest.importorskip("ray", reason="the Ray engine needs the optional ray package")
    folder = _link_folder(tmp_path, sample_files[:3])
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        assert ray.util.get_node_ip_address() == "127.0.0.1"
        report = run_corpus_report(folder, COMPACT_CONFIG, engine="ray", jobs=1)
        assert ray.is_initialized()  # an instance the caller started is left running
    finally:
        ray.shutdown()
    _check_rows(report.rows, sample_files[:3])
    assert report.engine == "ray"
    inline = run_corpus_report(folder, COMPACT_CONFIG, jobs=1)
    strip = [{**r.to_dict(), "duration_ms": None} for r in report.rows]
    assert strip == [{**r.to_dict(), "duration_ms": None} for r in inline.rows]
