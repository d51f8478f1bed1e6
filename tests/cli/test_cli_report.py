"""`compactlens report` is wired into the main command line."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from compactlens.cli import main


def test_report_subcommand_writes_a_row_per_file_and_records_failures(
    tmp_path: Path, repo_root: Path
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("shopping_assistant.json", "coding_agent.json"):
        shutil.copy(repo_root / "sample_transcripts" / name, folder / name)
    (folder / "broken.json").write_text('{"messages": [', encoding="utf-8")
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "strategy": {
                    "type": "truncation",
                    "trigger": {"op": "exceed", "metric": "tokens", "n": 2000},
                    "minimum_preserved": 4,
                }
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "report.csv"
    code = main(["report", str(folder), "--config", str(config), "--jobs", "1", "-o", str(out)])
    assert code == 0
    rows = {r["file"]: r for r in csv.DictReader(out.open(encoding="utf-8"))}
    assert set(rows) == {"shopping_assistant.json", "coding_agent.json", "broken.json"}
    assert rows["coding_agent.json"]["status"] == "compacted"
    assert int(rows["coding_agent.json"]["tokens_after"]) <= 2000
    assert rows["broken.json"]["status"] == "failed"
    assert (
        main(
            [
                "report",
                str(folder),
                "--config",
                str(config),
                "--jobs",
                "1",
                "-o",
                str(out),
                "--fail-on-error",
            ]
        )
        == 1
    )


def test_report_with_a_bad_config_is_a_usage_error(tmp_path: Path, repo_root: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"strategy": {"type": "nope"}}', encoding="utf-8")
    code = main(["report", str(repo_root / "sample_transcripts"), "--config", str(config)])
    assert code == 2


def test_report_without_an_output_file_prints_each_rows_verdict_in_full(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without -o the terminal gets what the file would hold: every file's name in full
    (however long), its verdict, costs and next step, the same sentences as the rows."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    long_name = "rollout-2026-05-11T11-02-33-019a1c2e-77f4-7d21-9c55-3724b5ddb799.json"
    shutil.copy(repo_root / "sample_transcripts" / "coding_agent.json", folder / long_name)
    shutil.copy(repo_root / "sample_transcripts" / "cannot_fit_16k.json", folder / "c.json")
    (folder / "broken.json").write_text('{"messages": [', encoding="utf-8")
    config = repo_root / "examples" / "report_config.json"
    out = tmp_path / "rows.jsonl"
    args = ["report", str(folder), "--config", str(config), "--jobs", "1"]
    assert main([*args, "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    capsys.readouterr()
    assert main([*args, "--quiet"]) == 0
    printed = capsys.readouterr().out
    headlines = {"safe": "Fits and safe", "costs": "Fits, with costs", "no-fit": "Does not fit"}
    for row in rows:
        assert f"\n{row['file']}\n" in f"\n{printed}"  # the name on its own line, whole
        if row["status"] == "failed":
            assert f"failed: {row['error']}" in printed
            continue
        assert row["verdict"] in headlines and headlines[row["verdict"]] in printed
        before, after = row["tokens_before"], row["tokens_after"]
        same = before == after and row["messages_before"] == row["messages_after"]
        tokens = f"{before:,} tokens, left as they are" if same else f"{before:,} to {after:,}"
        assert tokens in printed
        assert f"next step: {row['next_step']}" in printed
        for cost in (row["costs"] or "").split(" | "):
            assert f"cost: {cost}" in printed
