"""Bad input never crashes and never loads silently wrong: a located TranscriptError."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from compactlens import TranscriptError, load_transcript


def error_of(src: Any, format: str | None = None, **limits: Any) -> TranscriptError:
    with pytest.raises(TranscriptError) as info:
        load_transcript(src, format, **limits)
    err = info.value
    assert err.message and err.source
    assert str(err).startswith(err.source)
    return err


def chat(n: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]


def test_invalid_json_gives_line_and_column() -> None:
    err = error_of('{"messages": [\n  {"role": "user", "content": "hi"},\n  {"role": }\n]}')
    assert err.message.startswith("invalid JSON")
    assert err.location == "line 3, column 12"


def test_truncated_json() -> None:
    err = error_of('[{"role": "user", "content": "hi"')
    assert err.location.startswith("line 1, column")


def test_a_failing_json_lines_line_is_named() -> None:
    text = '{"role": "user", "content": "a"}\n{"role": "assistant", "content": \n{"role": "user"}\n'
    err = error_of(text)
    assert err.location.startswith("line 2, column")
    assert "JSON-lines" in err.message


def test_a_json_lines_line_that_is_not_an_object() -> None:
    err = error_of('{"role": "user", "content": "a"}\n[1, 2]\n')
    assert err.location == "line 2"


def test_a_json_lines_message_error_names_its_line() -> None:
    text = "\n".join(
        json.dumps(m)
        for m in [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": [{"type": "video", "url": "x"}]},
        ]
    )
    err = error_of(text, "openai-chat")
    assert err.location == "line 2: content[0].type"
    assert "'video'" in err.message


def test_unknown_role_has_message_index() -> None:
    messages = [*chat(12), {"role": "wizard", "content": "hi"}]
    err = error_of({"messages": messages})
    assert err.location == "messages[12].role"
    assert "unknown role 'wizard'" in err.message


def test_unknown_part_type_has_full_path() -> None:
    parts = [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
        {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
        {"type": "hologram", "data": "..."},
    ]
    messages = [*chat(12), {"role": "user", "content": parts}]
    err = error_of({"messages": messages})
    assert err.location == "messages[12].content[3].type"
    assert "unknown content part type 'hologram'" in err.message
    assert "image_url" in err.message  # lists what is expected


def test_unknown_part_type_in_a_list_container_and_forced_format() -> None:
    items = [{"role": "user", "content": [{"type": "tool_result_v9", "x": 1}]}]
    err = error_of(items, "anthropic")
    assert err.location == "messages[0].content[0].type"
    err = error_of({"input": [{"type": "teleport"}]})
    assert err.location == "input[0].type"


def test_claude_code_block_error_names_its_line() -> None:
    lines = [
        {"type": "summary", "summary": "s", "leafUuid": "x"},
        {
            "type": "user",
            "sessionId": "s",
            "uuid": "1",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "assistant",
            "sessionId": "s",
            "uuid": "2",
            "message": {"role": "assistant", "content": [{"type": "laser"}]},
        },
    ]
    err = error_of("\n".join(json.dumps(x) for x in lines))
    assert err.location == "line 3: message.content[0].type"


def test_wrong_types_are_named() -> None:
    assert error_of([{"role": "user", "content": 5}], "openai-chat").location == (
        "messages[0].content"
    )
    err = error_of([{"role": "assistant", "content": None, "tool_calls": {"id": 1}}])
    assert err.location == "messages[0].tool_calls"
    err = error_of(
        [
            {
                "role": "assistant",
                "tool_calls": [{"id": 7, "type": "function", "function": {"name": "f"}}],
            }
        ]
    )
    assert err.location == "messages[0].tool_calls[0].id"
    assert "expected a string, got number" in err.message
    err = error_of([{"role": "tool", "content": "x"}])
    assert err.location == "messages[0].tool_call_id"
    err = error_of(["just a string"], "openai-chat")
    assert err.location == "messages[0]" and "got string" in err.message
    err = error_of(
        [{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "a"}]}], "ai-sdk"
    )
    assert err.location == "messages[0].content[0].toolName"


def test_orphan_tool_result_loads_and_is_flagged() -> None:
    t = load_transcript(
        [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "call_never_made", "content": "result"},
            {"role": "assistant", "content": "done"},
        ]
    )
    assert t.orphan_results == (1,)
    assert [p.kind for p in t.problems] == ["orphan_result"]


def test_file_over_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"messages": chat(50)}), encoding="utf-8")
    err = error_of(path, max_bytes=100)
    assert "over the limit of 100 bytes" in err.message and err.source == str(path)
    err = error_of(path.read_bytes(), max_bytes=100)
    assert "over the limit" in err.message and err.source == "<bytes>"
    err = error_of(path.read_text(encoding="utf-8"), max_bytes=100)
    assert "over the limit" in err.message
    assert load_transcript(path).messages  # the default limit (200 MB) reads it


def test_binary_and_non_utf8_data() -> None:
    err = error_of(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert "binary data" in err.message
    err = error_of(gzip.compress(b"[]"))
    assert "gzip" in err.message
    err = error_of(b'[{"role": "user",\n "content": "caf\xe9"}]')
    assert "not UTF-8" in err.message and "0xe9" in err.message
    assert err.location == "line 2, column 17"


def test_utf16_and_bom_text_is_read() -> None:
    text = json.dumps(chat(2))
    assert len(load_transcript(text.encode("utf-16")).messages) == 2
    assert len(load_transcript(b"\xef\xbb\xbf" + text.encode()).messages) == 2


def test_deep_nesting_is_rejected_with_a_location() -> None:
    err = error_of("[" * 100_000 + "]" * 100_000)
    assert "nested deeper" in err.message and err.location == "line 1, column 201"
    deep: Any = "x"
    for _ in range(250):
        deep = [deep]
    err = error_of([{"role": "user", "content": "hi", "extra": deep}])
    assert "nested deeper than 200" in err.message
    assert err.location.startswith("[0].extra[0][0]")
    err = error_of([{"role": "user", "content": "hi", "extra": [[[1]]]}], max_depth=3)
    assert err.location == "[0].extra[0]"


def test_huge_strings_are_rejected_with_a_location() -> None:
    err = error_of({"messages": [{"role": "user", "content": "x" * 50}]}, max_string=10)
    assert err.location == "messages[0].content"
    assert "50 characters" in err.message
    text = json.dumps({"role": "user", "content": "y" * 50}) + "\n" + json.dumps(chat(1)[0])
    err = error_of(text, max_string=10)
    assert err.location == "line 1: content"


def test_empty_and_scalar_and_shapeless_input() -> None:
    assert "empty" in error_of(b"   \n").message
    assert "empty" in error_of("  \n\n ").message
    assert "expected a JSON array or object" in error_of(b"42").message
    err = error_of({"hello": "world"})
    assert "no message list found" in err.message and "'hello'" in err.message


def test_not_json_values_and_unsupported_inputs() -> None:
    assert "not a JSON value" in error_of([{"role": "user", "content": {1, 2}}]).message
    assert "keys must be strings" in error_of([{"role": "user", 3: "x"}]).message
    assert "cannot read a int" in error_of(42).message  # type: ignore[arg-type]


def test_missing_file_and_directory(tmp_path: Path) -> None:
    assert "no such file" in error_of(tmp_path / "nope.json").message
    assert "no such file" in error_of(str(tmp_path / "nope.json")).message
    assert "directory" in error_of(tmp_path).message


def test_unknown_format_name() -> None:
    err = error_of(chat(1), "openai-chat-v2")
    assert "unknown format 'openai-chat-v2'" in err.message and "anthropic" in err.message


def test_nothing_reads_it_says_so() -> None:
    err = error_of([{"speaker": "bob", "says": "hi"}])
    assert "not a transcript in any known format" in err.message


def test_errors_of_the_most_likely_format_are_reported() -> None:
    err = error_of([{"role": "user", "content": [{"type": "tool_result"}]}])
    assert err.location == "messages[0].content[0].tool_use_id"
    assert "reading as anthropic" in err.message


def test_role_not_allowed_for_a_part_in_ai_sdk() -> None:
    err = error_of(
        [{"role": "user", "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "b"}]}],
        "ai-sdk",
    )
    assert "not allowed in a user message" in err.message
    assert err.location == "messages[0].content[0].type"
