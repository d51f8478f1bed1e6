"""A JSON-lines transcript cut off mid-line (issue 27, finding 15): the complete lines load
and a note names the cut line and its size; a bad line before the last, or a whole JSON
document cut off, is still a located error. The command line prints the note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compactlens import load_transcript
from compactlens.cli import main
from compactlens.model import TranscriptError

REPO = Path(__file__).resolve().parents[2]
CLAUDE = REPO / "sample_transcripts" / "claude_code_compacted.jsonl"
CODING = REPO / "sample_transcripts" / "coding_agent.json"


def _cut(tmp_path: Path, keep: int = 25) -> tuple[Path, int, int]:
    """The Claude Code sample cut ``keep`` bytes into its last line: (path, the last
    line's number, the bytes kept of it)."""
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:keep])
    return path, len(lines), keep


def test_a_claude_code_log_cut_mid_line_loads_what_is_complete(tmp_path: Path) -> None:
    path, last, kept = _cut(tmp_path)
    transcript = load_transcript(path)
    whole = load_transcript(CLAUDE)
    assert transcript.format == whole.format == "claude-code"
    assert 0 < len(transcript.messages) <= len(whole.messages)
    (note,) = transcript.warnings
    assert str(note) == (
        f"dropped: line {last}, cut off mid-line: its {kept} bytes end the file without a "
        f"newline and are not valid JSON; the {last - 1} complete "
        f"line{'' if last - 1 == 1 else 's'} before it were loaded"
    )
    assert load_transcript(CLAUDE).warnings == ()


def test_only_the_last_line_and_only_without_its_newline(tmp_path: Path) -> None:
    lines = CLAUDE.read_text(encoding="utf-8").splitlines(keepends=True)
    middle = tmp_path / "middle.jsonl"
    middle.write_text("".join(lines[:3]) + lines[3][:30] + "\n" + "".join(lines[4:]))
    with pytest.raises(TranscriptError) as info:
        load_transcript(middle)
    assert info.value.location.startswith("line 4, column ")
    whole_doc = tmp_path / "cut.json"
    text = CODING.read_text(encoding="utf-8")
    whole_doc.write_text(text[: len(text) // 2])  # a JSON document, not lines: still refused
    with pytest.raises(TranscriptError, match="invalid JSON"):
        load_transcript(whole_doc)


def test_inspect_prints_the_note_and_compact_and_convert_warn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, last, _ = _cut(tmp_path)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"warning: dropped: line {last}, cut off mid-line" in out.splitlines()[2]
    assert main(["inspect", str(path), "--json"]) == 0
    (warning,) = json.loads(capsys.readouterr().out)["warnings"]
    assert warning.startswith(f"dropped: line {last}, cut off mid-line")
    assert main(["convert", str(path), "--to", "openai-chat", "-o", str(tmp_path / "o.json")]) == 0
    err = capsys.readouterr().err
    assert f"compactlens: warning: {path}: dropped: line {last}, cut off mid-line" in err
    compact = ["compact", str(path), "--strategy", "truncation", "--param", "trigger=always"]
    assert main(compact) in (0, 1)
    assert f"compactlens: warning: {path}: dropped: line {last}" in capsys.readouterr().err
