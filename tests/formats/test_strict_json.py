"""NaN and Infinity: Python's json reads them, strict JSON parsers do not. A transcript with
them is refused with its location, so nothing we write back can carry them."""

from __future__ import annotations

import json

import pytest

from compactlens import TranscriptError, dump_transcript, load_transcript


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_number_is_refused_with_its_place(literal: str) -> None:
    text = '[{"role": "user", "content": "hi", "score": ' + literal + "}]"
    with pytest.raises(TranscriptError) as info:
        load_transcript(text.encode(), source="t.json")
    message = str(info.value)
    assert "t.json" in message and f"{literal} is not valid JSON" in message
    assert f"column {text.index(literal) + 1}" in message


def test_the_line_of_a_json_lines_file_is_named() -> None:
    lines = [json.dumps({"role": "user", "content": "a"}), '{"role": "user", "content": NaN}']
    with pytest.raises(TranscriptError, match="line 2"):
        load_transcript(("\n".join(lines) + "\n").encode(), source="t.jsonl")


def test_the_words_inside_strings_are_fine_and_output_is_strict() -> None:
    text = json.dumps([{"role": "user", "content": "NaN and Infinity are words here"}])
    transcript = load_transcript(text.encode(), source="t.json")
    out = dump_transcript(transcript)
    assert json.loads(out, parse_constant=lambda c: pytest.fail(f"non-finite {c} written"))
