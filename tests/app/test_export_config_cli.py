"""The Export page's "Configuration (JSON)" runs from the command line: ``compactlens
compact --config`` and ``compactlens report --config`` take the same file and run the same
strategy (review 4, #11: ``report`` refused it, "config: unknown keys ['inspector',
'summarizer']", while ``compact`` took it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from compactlens.analysis.corpus_config import CorpusConfig
from compactlens.cli import main
from compactlens_inspector.exports.files import config_json
from compactlens_inspector.lab.config import SummarizerSettings, preset

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"


def test_report_and_compact_take_the_exported_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exported = config_json(
        preset("reference", 1800), tokenizer="estimate", summarizer=SummarizerSettings()
    )
    assert {"inspector", "summarizer", "strategy"} <= set(json.loads(exported))
    config = tmp_path / "config.json"
    config.write_text(exported)
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(SAMPLES / "coding_agent.json", folder / "coding_agent.json")

    main(["compact", str(folder / "coding_agent.json"), "--config", str(config), "--json"])
    compacted = json.loads(capsys.readouterr().out)
    table = tmp_path / "rows.jsonl"
    code = main(["report", str(folder), "--config", str(config), "-o", str(table), "--quiet"])
    assert code == 0, capsys.readouterr().err
    (row,) = [json.loads(line) for line in table.read_text().splitlines() if line.strip()]
    assert row["error"] is None
    # The same strategy ran: the report's row holds the numbers compact printed.
    assert (row["status"], row["tokens_after"]) == (
        compacted["status"],
        compacted["tokens_after"],
    )
    assert CorpusConfig.load(config).strategy == json.loads(exported)["strategy"]


def test_report_still_names_a_key_it_does_not_know(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"strategy": {"type": "truncation"}, "surprise": 1}))
    with pytest.raises(ValueError, match=r"unknown keys \['surprise'\]"):
        CorpusConfig.load(config)
