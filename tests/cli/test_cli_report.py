"""`compactlens report` is wired into the main command line."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

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
