"""Recordings: what the Recorder writes loads as a transcript with one compaction each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from integration_support import record_a_run

from compactlens import load_transcript
from compactlens.model import TranscriptError


def test_a_recorded_run_loads_with_one_entry_per_compaction(tmp_path: Path) -> None:
    path, compactions = record_a_run(tmp_path, 7)
    assert compactions >= 2
    transcript = load_transcript(path)
    assert transcript.format == "compactlens-recording"
    assert "compactlens.recording" in (transcript.detection or "")
    # The conversation as it grew: every question once, in order.
    questions = [m.text for m in transcript.messages if m.role == "user"]
    assert questions == [f"question {t}" for t in range(7)]
    found = transcript.compactions
    assert len(found) == compactions
    assert [c.index for c in found] == sorted(c.index for c in found)
    for c in found:
        assert c.source == "compactlens.recording"
        assert c.replaced is not None and c.after is not None
        assert len(c.after) < len(c.replaced)
        assert c.tokens_after is not None and c.tokens_before is not None
        assert c.tokens_after < c.tokens_before
        assert c.trigger == "messages > 10"
        # The history before ends with the question the compaction was made for.
        assert c.replaced[-1].text == transcript.messages[c.index - 1].text


def test_a_file_cut_mid_line_loads_its_complete_lines_and_says_what_was_cut(
    tmp_path: Path,
) -> None:
    # A recording is appended to while the agent runs: a copy taken mid-write ends inside
    # a line. What is complete loads; the note names the cut line and its size.
    path, _ = record_a_run(tmp_path, 5)
    text = path.read_text()
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[: len(text) - 40])
    lines = text.splitlines(keepends=True)
    complete = tmp_path / "complete.jsonl"
    complete.write_text("".join(lines[:-1]))
    transcript = load_transcript(cut)
    assert transcript.format == "compactlens-recording"
    assert transcript.messages == load_transcript(complete).messages
    (note,) = transcript.warnings
    cut_bytes = len(lines[-1].encode()) - 40
    assert note.kind == "dropped"
    assert f"line {len(lines)}, cut off mid-line: its {cut_bytes} bytes" in str(note)
    complete = len(lines) - 1
    lines_word = "line" if complete == 1 else "lines"
    assert f"the {complete} complete {lines_word} before it were loaded" in str(note)
    card = transcript._repr_html_()  # a notebook shows it
    assert "warnings" in card and "cut off mid-line" in card


def test_a_line_cut_inside_a_character_is_cut_like_any_other(tmp_path: Path) -> None:
    head = {"type": "compactlens.recording", "version": 1, "format": "openai-chat"}
    call = {
        "type": "compactlens.history",
        "messages": [{"role": "user", "content": "\u00e9t\u00e9"}],
    }
    whole = (json.dumps(head) + "\n" + json.dumps(call, ensure_ascii=False) + "\n").encode()
    data = whole + json.dumps(call, ensure_ascii=False).encode()[:-9]  # ends inside a "\u00e9"
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data)
    transcript = load_transcript(path)
    assert [m.text for m in transcript.messages] == ["\u00e9t\u00e9"]
    (note,) = transcript.warnings
    assert f"line 3, cut off mid-line: its {len(data) - len(whole)} bytes" in str(note)


def test_a_corrupt_line_before_the_last_still_fails_with_its_line(tmp_path: Path) -> None:
    path, _ = record_a_run(tmp_path, 5)
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2][: len(lines[2]) // 2] + "\n"  # a middle line cut: not a cut-off end
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines))
    with pytest.raises(TranscriptError) as info:
        load_transcript(bad)
    assert "line" in info.value.location
    assert info.value.location.startswith("line 3, column ")
    ended = tmp_path / "ended.jsonl"  # a bad last line that ends with a newline was written so
    ended.write_text("".join(lines[:2]) + "{not json\n")
    with pytest.raises(TranscriptError) as info:
        load_transcript(ended)
    assert info.value.location.startswith("line 3, column ")


def test_bad_records_are_located(tmp_path: Path) -> None:
    head = {"type": "compactlens.recording", "version": 1, "format": "openai-chat"}
    bad_message = {"type": "compactlens.history", "messages": [{"role": "wizard", "content": ""}]}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(head) + "\n" + json.dumps(bad_message) + "\n")
    with pytest.raises(TranscriptError) as info:
        load_transcript(path)
    assert info.value.location.startswith("line 2")
    assert "messages[0]" in info.value.location
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps(head) + "\n" + json.dumps({"type": "compactlens.what"}) + "\n")
    with pytest.raises(TranscriptError, match="record type"):
        load_transcript(unknown, format="compactlens-recording")
    headless = tmp_path / "headless.jsonl"
    headless.write_text((json.dumps(bad_message) + "\n") * 2)  # no header: canonical histories
    with pytest.raises(TranscriptError) as info:
        load_transcript(headless, format="compactlens-recording")
    assert info.value.location.startswith("line 1: messages[0]")


def test_any_transcript_writes_as_a_recording_and_reads_back(tmp_path: Path) -> None:
    from compactlens import dump_transcript

    path, _ = record_a_run(tmp_path, 5)
    original = load_transcript(path)
    text = dump_transcript(original.convert("openai-chat"), format="compactlens-recording")
    again = load_transcript(text)
    assert again.format == "compactlens-recording"
    assert again.messages == original.messages
