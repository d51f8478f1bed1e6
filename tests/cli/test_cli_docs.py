"""The command line as the README and the guide describe it: every README command runs
as written, the example configurations are valid, the flags the docs name exist, and the
format names the guide uses are real."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from compactlens import __version__
from compactlens.analysis.corpus import CorpusConfig
from compactlens.cli import main
from compactlens.cli.commands import load_config
from compactlens.engine.strategies.config import strategy_from_config
from compactlens.formats import FORMATS

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
GUIDE = (REPO / "docs" / "guide.md").read_text(encoding="utf-8")


def readme_cli_commands() -> list[str]:
    section = README.split("## Command line", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, "the README's command-line section has a bash block"
    return [c.strip() for c in block.group(1).replace("\\\n", " ").splitlines() if c.strip()]


@pytest.mark.slow
@pytest.mark.parametrize("command", readme_cli_commands())
def test_every_readme_command_runs_as_written(command: str, tmp_path: Path) -> None:
    for name in ("sample_transcripts", "examples"):
        (tmp_path / name).symlink_to(REPO / name)
    argv = shlex.split(command)
    assert argv[0] == "compactlens"
    done = subprocess.run(
        [sys.executable, "-m", "compactlens", *argv[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for i, arg in enumerate(argv[:-1]):
        if arg == "-o":
            assert (tmp_path / argv[i + 1]).stat().st_size > 0


def test_the_example_configurations_are_valid() -> None:
    report = json.loads((REPO / "examples" / "report_config.json").read_text(encoding="utf-8"))
    assert CorpusConfig.from_dict(report).strategy is not None
    strategy_from_config(load_config(str(REPO / "examples" / "pipeline.json")))
    # the README and the guide show the same configuration
    for doc in (README, GUIDE):
        blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", doc, re.S)]
        assert report in blocks or any(
            b.get("strategy", {}).get("type") == "pipeline" and b.get("name") == report["name"]
            for b in blocks
        )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"compactlens {__version__}\n"


@pytest.mark.parametrize(
    ("flag", "small", "hint"),
    [("--max-bytes", "100", "pass --max-bytes"), ("--max-string", "5", "pass --max-string")],
)
def test_size_limits_are_flags_and_the_error_names_them(
    flag: str, small: str, hint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "a longer text " * 20}]))
    assert main(["inspect", str(path), flag, small]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and hint in err
    assert "max_bytes=" not in err and "max_string=" not in err
    assert main(["inspect", str(path), flag, "1M"]) == 0
    assert main(["convert", str(path), "--to", "anthropic", flag, small]) == 2
    assert main(["compact", str(path), "--strategy", "sliding_window",
                 "--param", "keep_last_turns=1", flag, small]) == 2  # fmt: skip
    capsys.readouterr()
    assert main(["inspect", str(path), flag, "lots"]) == 2
    assert "is not a size" in capsys.readouterr().err


def test_the_output_says_how_tokens_are_counted(capsys: pytest.CaptureFixture[str]) -> None:
    sample = str(REPO / "sample_transcripts" / "shopping_assistant.json")
    main(["inspect", sample])
    estimate = capsys.readouterr().out.splitlines()[0]
    assert "tokenizer: estimate, ceil(characters / 4); --tokenizer o200k_base" in estimate
    main(["inspect", sample, "--tokenizer", "o200k_base"])
    assert "tokenizer: o200k_base)" in capsys.readouterr().out.splitlines()[0]


def test_the_guide_names_real_formats() -> None:
    section = GUIDE.split("## 1.", 1)[1].split("## 2.", 1)[0]
    named = re.findall(r"\(`([a-z0-9-]+)`", section)
    assert "openhands-events" in named
    assert set(named) <= set(FORMATS), set(named) - set(FORMATS)
