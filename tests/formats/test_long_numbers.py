"""Numbers Python cannot carry (issue 27, finding 14): a JSON integer longer than Python
reads (4,300 digits) and a float literal too large (``1e400``, read as infinity) are located
:class:`TranscriptError` errors, in the library and on the command line (exit 2, one line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compactlens import load_transcript
from compactlens.model import TranscriptError

LONG = "9" * 5000


def test_an_integer_too_long_for_python_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "long.json"
    line = '  {"role": "user", "content": "hi", "n": ' + LONG + "}"
    path.write_text('{"messages": [\n' + line + "\n]}")
    with pytest.raises(TranscriptError) as info:
        load_transcript(path)
    assert info.value.source == str(path)
    assert info.value.location == f"line 2, column {line.index(LONG) + 1}"
    assert "5000 digits" in info.value.message and "4300" in info.value.message


def test_in_json_lines_the_line_is_named(tmp_path: Path) -> None:
    good = json.dumps({"role": "user", "content": "hi"})
    bad = '{"role": "user", "content": "x", "n": -' + LONG + "}"
    text = "\n".join([good, good, bad, ""])
    with pytest.raises(TranscriptError) as info:
        load_transcript(text, source="long.jsonl")
    assert info.value.location == f"line 3, column {bad.index('-') + 1}"
    # Digits inside a string are text, not a number: they load.
    quoted = load_transcript(json.dumps([{"role": "user", "content": LONG}]))
    assert quoted.messages[0].text == LONG


def test_the_command_line_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "long.json"
    path.write_text('[{"role": "user", "content": "hi", "n": ' + LONG + "}]")
    done = subprocess.run(
        [sys.executable, "-m", "compactlens", "inspect", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("compactlens: error: ")
    column = path.read_text().index(LONG) + 1
    assert f"{path}: line 1, column {column}: " in lines[0] and "5000 digits" in lines[0]


def test_a_float_too_large_is_a_located_error_not_a_failed_write(tmp_path: Path) -> None:
    # 1e400 reads as infinity, which no strict JSON writer writes back: the compacted
    # output used to fail with a bare ValueError (a traceback on the command line).
    path = tmp_path / "huge.json"
    path.write_text('[{"role": "user", "content": "hi", "x": 1e400}]')
    with pytest.raises(TranscriptError) as info:
        load_transcript(path)
    assert info.value.location == "[0].x" and "not finite" in info.value.message
    with pytest.raises(TranscriptError, match="line 2: x"):
        load_transcript('{"role": "user", "content": "a"}\n{"role": "user", "x": -1e999}\n')
    command = ["compact", str(path), "--strategy", "truncation", "--param", "trigger=always"]
    done = subprocess.run(
        [sys.executable, "-m", "compactlens", *command, "-o", "-"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_config_file_with_a_long_integer_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from compactlens.cli import main

    config = tmp_path / "config.json"
    config.write_text('{"type": "truncation", "max_n": ' + LONG + "}")
    sample = Path(__file__).resolve().parents[2] / "sample_transcripts" / "shopping_assistant.json"
    assert main(["compact", str(sample), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "more than 4300 digits (--config)" in err


def test_a_literal_is_located_outside_strings() -> None:
    text = '[{"role": "user", "content": "NaN and ' + LONG[:10] + '", "x": NaN}]'
    with pytest.raises(TranscriptError) as info:
        load_transcript(text)
    assert info.value.location == f"line 1, column {text.rindex('NaN') + 1}"
