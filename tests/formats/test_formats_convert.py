"""Explicit conversion between formats, reporting what cannot be carried over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from formats_support import FIXTURE_FORMATS, FIXTURES, conversation, norm_args

from compactlens import Message, TranscriptError, dump_transcript, load_transcript
from compactlens.formats import FORMATS, ConversionWarning
from compactlens.model import TextPart
from compactlens.transcript import convert_file

TARGETS = sorted(FORMATS)


def _args(arguments: str) -> object:
    value = norm_args(arguments)
    # Anthropic tool input must be an object: raw text is wrapped (with a warning).
    if isinstance(value, dict) and list(value) == ["input"] and isinstance(value["input"], str):
        return value["input"]
    return value


def calls_and_results(messages: tuple[Message, ...]) -> tuple[list[object], dict[int, str]]:
    calls = [(c.name, _args(c.arguments)) for m in messages for c in m.tool_calls]
    _, results = conversation(messages)
    return calls, {k: out for k, (_, out) in results.items()}


@pytest.mark.parametrize("name", sorted(FIXTURE_FORMATS))
@pytest.mark.parametrize("target", TARGETS)
def test_every_fixture_converts_to_every_format(name: str, target: str) -> None:
    t = load_transcript(FIXTURES / name)
    text = dump_transcript(t, format=target)
    again = load_transcript(text, target)
    converted = t.convert(target)
    assert converted.format == target
    assert converted.messages == again.messages
    assert all(isinstance(w, ConversionWarning) for w in converted.warnings)
    assert all(w.kind in ("dropped", "approximated", "moved") for w in converted.warnings)
    if target == t.format:
        assert converted.warnings == ()
    assert calls_and_results(again.messages) == calls_and_results(t.messages)


@pytest.mark.parametrize("name", sorted(FIXTURE_FORMATS))
def test_canonical_carries_every_part(name: str) -> None:
    t = load_transcript(FIXTURES / name)
    c = t.convert("canonical")
    assert [(m.role, m.name, m.parts) for m in c.messages] == [
        (m.role, m.name, m.parts) for m in t.messages
    ]


def test_thinking_signature_into_chat_is_reported() -> None:
    t = load_transcript(FIXTURES / "anthropic_request.json")
    c = t.convert("openai-chat")
    details = [str(w) for w in c.warnings]
    assert any("anthropic 'thinking' fields 'signature'" in d for d in details)
    assert any("dropped: anthropic redacted_thinking (opaque)" in d for d in details)
    assert any("'cache_control'" in d for d in details)
    assert c.messages[0].role == "system"  # the top-level system is in the list now
    doc = json.loads(dump_transcript(t, format="openai-chat"))
    assert isinstance(doc, list) and doc[0]["role"] == "system"
    assert doc[2]["reasoning_content"] == "I need the price and the news."


def test_chat_into_anthropic_hoists_the_system_prompt() -> None:
    t = load_transcript(FIXTURES / "openai_chat_request.json")
    doc, warnings = t.to_document("anthropic")
    assert doc["system"] == [
        {"type": "text", "text": "You are a travel assistant. Answer briefly."},
        {"type": "text", "text": "Prefer metric units."},
    ]
    assert all(m["role"] in ("user", "assistant") for m in doc["messages"])
    kinds = {(w.kind, w.detail) for w in warnings}
    assert ("moved", "system messages to the top-level 'system'") in kinds
    assert any("request fields 'model', 'temperature', 'tools'" in d for _, d in kinds)
    results = [b for m in doc["messages"] for b in m["content"] if isinstance(b, dict)]
    assert {"type": "tool_result", "tool_use_id": "fc_9", "content": '{"status": "confirmed"}'} in (
        results
    )


def test_chat_into_ai_sdk_fills_tool_names_from_calls() -> None:
    t = load_transcript(FIXTURES / "openai_chat_request.json")
    items, _ = t.to_wire("ai-sdk")
    results = [p for m in items if m["role"] == "tool" for p in m["content"]]
    assert {r["toolName"] for r in results} == {"get_weather", "lookup_booking"}


def test_claude_code_into_chat_drops_session_events_with_a_warning() -> None:
    t = load_transcript(FIXTURES / "claude_code_session.jsonl")
    c = t.convert("openai-chat")
    details = [w.detail for w in c.warnings]
    assert "6 claude-code items that are not messages" in details
    assert any(d.startswith("claude-code message fields 'parentUuid'") for d in details)
    assert c.messages[1].tool_calls[1].name == "Grep"


def test_chat_into_claude_code_writes_json_lines() -> None:
    t = load_transcript(FIXTURES / "openai_chat.jsonl")
    text = dump_transcript(t, format="claude-code")
    events = [json.loads(line) for line in text.split("\n") if line]
    assert [e["type"] for e in events] == ["user", "user", "assistant", "user", "assistant"]
    assert load_transcript(text).format == "claude-code"


def test_convert_file(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    seen: list[ConversionWarning] = []
    text = convert_file(FIXTURES / "anthropic_request.json", "ai-sdk", out, on_warning=seen.append)
    assert out.read_text(encoding="utf-8") == text
    assert load_transcript(out).format == "ai-sdk"
    assert seen and all(isinstance(w, ConversionWarning) for w in seen)
    same = convert_file(FIXTURES / "openai_chat.jsonl", "openai-chat")
    source = (FIXTURES / "openai_chat.jsonl").read_text(encoding="utf-8").split("\n")
    assert [json.loads(x) for x in same.split("\n") if x] == [json.loads(x) for x in source if x]
    with pytest.raises(TranscriptError, match="unknown format"):
        convert_file(FIXTURES / "openai_chat.jsonl", "gemini")


def test_new_messages_in_a_converted_transcript() -> None:
    t = load_transcript(FIXTURES / "langchain_messages.json")
    summary = Message(role="user", parts=(TextPart("Summary so far."),))
    compact = t.with_messages([t.messages[0], summary, *t.messages[6:]])
    doc = json.loads(dump_transcript(compact))
    assert doc[1]["type"] == "human" and doc[1]["data"]["content"] == "Summary so far."
    assert doc[2] == json.loads((FIXTURES / "langchain_messages.json").read_text())[6]


def test_token_counts_use_the_transcripts_own_messages() -> None:
    t = load_transcript(FIXTURES / "anthropic_request.json")
    counts = t.count_tokens()
    assert len(counts) == len(t.messages) and counts[0] > 0
    chat = t.convert("openai-chat")
    assert len(chat.count_tokens()) == len(chat.messages)
