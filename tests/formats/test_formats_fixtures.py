"""Our own fixtures, one or more per format and container: detection, lossless dumps, parts."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from formats_support import FIXTURE_FORMATS, FIXTURES, parse_dump, read_json_or_lines

from compactlens import Message, Transcript, dump_transcript, load_transcript
from compactlens.formats import FORMATS, from_caller, get_format
from compactlens.formats.base import META_CONTAINER_KEY, META_POSITIONS
from compactlens.model import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

FIXTURE_NAMES = sorted(FIXTURE_FORMATS)


def load(name: str) -> Transcript:
    return load_transcript(FIXTURES / name)


def kinds(t: Transcript) -> set[str]:
    return {p.kind for m in t.messages for p in m.parts}


def test_every_fixture_is_listed() -> None:
    assert sorted(p.name for p in FIXTURES.iterdir()) == FIXTURE_NAMES
    assert set(FIXTURE_FORMATS.values()) == set(FORMATS)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_detects_the_format_and_says_why(name: str) -> None:
    t = load(name)
    assert t.format == FIXTURE_FORMATS[name]
    assert t.detection.startswith(t.format + ":")
    assert t.source == str(FIXTURES / name)
    assert all(m.wire is not None and m.wire_format == t.format for m in t.messages)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
@pytest.mark.parametrize("forced", [False, True])
def test_dump_in_the_same_format_is_json_equal(name: str, forced: bool, tmp_path: Path) -> None:
    path = FIXTURES / name
    t = load_transcript(path, FIXTURE_FORMATS[name] if forced else None)
    out = tmp_path / name
    text = dump_transcript(t, out)
    assert out.read_text(encoding="utf-8") == text
    assert parse_dump(text, path.suffix == ".jsonl") == read_json_or_lines(path)
    assert load_transcript(out).format == t.format


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_loading_bytes_text_and_objects_gives_the_same_messages(name: str) -> None:
    path = FIXTURES / name
    fmt = FIXTURE_FORMATS[name]
    from_path = load_transcript(path)
    from_bytes = load_transcript(path.read_bytes())
    from_text = load_transcript(path.read_text(encoding="utf-8"))
    assert from_bytes.source == "<bytes>" and from_text.source == "<text>"
    assert from_bytes.messages == from_path.messages == from_text.messages
    if path.suffix != ".jsonl":
        from_object = load_transcript(json.loads(path.read_text(encoding="utf-8")), fmt)
        assert from_object.messages == from_path.messages


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_to_wire_in_the_own_format_returns_the_original_objects(name: str) -> None:
    t = load(name)
    items, warnings = t.to_wire()
    assert warnings == []
    wires: list[Any] = []
    for m in t.messages:
        if m.meta.get(META_CONTAINER_KEY):
            continue
        wires.extend(m.wire if isinstance(m.wire, tuple) else (m.wire,))
    ids = {id(x) for x in items}
    assert all(id(w) in ids for w in wires)
    assert len(items) == len(wires) + len(t.container.passthrough)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_compaction_emit_returns_unchanged_messages_as_the_same_objects(name: str) -> None:
    t = load(name)
    items = [x for x in t.to_wire()[0]]
    caller = from_caller(items, format=t.format)
    kept = [m for i, m in enumerate(caller.messages) if i % 2 == 0]
    out = caller.emit(kept)
    expected: list[Any] = []
    for m in kept:
        expected.extend(m.wire if isinstance(m.wire, tuple) else (m.wire,))
    assert len(out) == len(expected)
    assert all(a is b for a, b in zip(out, expected, strict=True))


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_rebuilding_every_message_reads_back_the_same_parts(name: str) -> None:
    """``encode`` (used for changed messages) is faithful to what was read."""
    t = load(name)
    fmt = get_format(t.format)
    for i, m in enumerate(t.messages):
        if m.meta.get(META_CONTAINER_KEY):
            continue
        changed = dataclasses.replace(m, wire=None)
        items = list(fmt.encode_message(changed).items)
        again = fmt.split_items(items, "<rebuilt>").messages
        got = [p for x in again for p in x.parts]
        if m.meta.get("legacy_function"):  # synthetic ids depend on the position in the list
            got, want = [_no_legacy_id(p) for p in got], [_no_legacy_id(p) for p in m.parts]
        else:
            want = list(m.parts)
        assert got == want, f"message {i}"
        assert all(x.role == m.role for x in again), f"message {i}"


def _no_legacy_id(part: Any) -> Any:
    if isinstance(part, ToolCallPart) and part.id.startswith("fc_"):
        return dataclasses.replace(part, id="fc")
    if isinstance(part, ToolResultPart) and part.call_id.startswith("fc_"):
        return dataclasses.replace(part, call_id="fc")
    return part


def test_part_types_are_all_covered_by_the_fixtures() -> None:
    every = {
        "text",
        "reasoning",
        "tool_call",
        "tool_result",
        "approval_request",
        "approval_response",
        "media",
        "opaque",
    }
    for fmt in ("openai-responses", "ai-sdk", "agent-framework", "canonical"):
        names = [n for n, f in FIXTURE_FORMATS.items() if f == fmt]
        assert set().union(*(kinds(load(n)) for n in names)) >= every - {"opaque"}, fmt


# --- OpenAI Chat Completions -------------------------------------------------------------


def test_chat_request_body_parts() -> None:
    t = load("openai_chat_request.json")
    assert t.container.kind == "object" and t.container.path == ("messages",)
    assert t.model == "gpt-4o-2024-08-06"
    assert t.tools is not None and t.tools[0]["function"]["name"] == "get_weather"
    roles = [m.role for m in t.messages]
    assert roles[:3] == ["system", "developer", "user"]
    assert t.messages[2].name == "ana"
    assert t.messages[3].parts[0] == ReasoningPart("Two cities, two calls.")
    assert t.messages[5].tool_results[0].name == "get_weather"
    media = [p for p in t.messages[7].parts if isinstance(p, MediaPart)]
    assert [p.media_type for p in media] == [
        "image",
        "image/png",
        "audio/wav",
        "file",
        "application/pdf",
    ]
    assert media[3].url == "file-abc123" and media[4].filename == "itinerary.pdf"
    assert t.messages[8].text == "I can't read payment details from tickets."
    assert t.system == "You are a travel assistant. Answer briefly.\nPrefer metric units."


def test_chat_legacy_function_calls_get_stable_ids_and_pair() -> None:
    t = load("openai_chat_request.json")
    again = load("openai_chat_request.json")
    call = t.messages[9].tool_calls[0]
    result = t.messages[10].tool_results[0]
    assert call.id == "fc_9" == again.messages[9].tool_calls[0].id
    assert result.call_id == call.id and result.name == "lookup_booking"
    assert t.problems == ()


def test_chat_changed_message_keeps_keys_we_do_not_read() -> None:
    t = load("openai_chat_request.json")
    dev = t.messages[1]
    new_dev = dataclasses.replace(dev, parts=(TextPart("Prefer imperial units."),), wire=None)
    last = t.messages[11]
    new_last = dataclasses.replace(last, parts=(TextPart("Booked."),), wire=None)
    messages = list(t.messages)
    messages[1], messages[11] = new_dev, new_last
    doc = json.loads(dump_transcript(t.with_messages(messages)))
    assert doc["messages"][1]["content"] == [
        {"type": "text", "text": "Prefer imperial units.", "cache_control": {"type": "ephemeral"}}
    ]
    assert doc["messages"][11] == {"role": "assistant", "content": "Booked.", "x_trace_id": "tr-42"}
    assert doc["model"] == "gpt-4o-2024-08-06" and doc["temperature"] == 0.2


def test_chat_jsonl_container() -> None:
    t = load("openai_chat.jsonl")
    assert t.container.kind == "jsonl"
    assert t.container.line_numbers == (1, 2, 3, 4, 5)
    text = dump_transcript(t)
    assert text.count("\n") == 5 and not text.startswith("[")


# --- OpenAI Responses ---------------------------------------------------------------------


def test_responses_items() -> None:
    t = load("openai_responses_request.json")
    instructions = t.messages[0]
    assert instructions.role == "developer"
    assert instructions.meta[META_CONTAINER_KEY] == "instructions"
    assert instructions.text == "You are a coding agent. Use tools."
    assert t.messages[1].parts == (OpaquePart("openai", "compaction"),)
    reasoning = t.messages[4]
    assert reasoning.parts == (
        ReasoningPart("Read the file first."),
        OpaquePart("openai", "encrypted_reasoning"),
    )
    assert reasoning.is_reasoning_only
    assert t.messages[7].tool_calls[0].name == "apply_patch"
    assert t.messages[8].tool_results[0].call_id == "call_patch"
    assert t.messages[10].parts == (ApprovalRequestPart("mcpr_01", name="deploy_preview"),)
    assert t.messages[11].parts == (ApprovalResponsePart("mcpr_01", False, "Not now."),)
    assert isinstance(t.messages[13].parts[1], MediaPart)
    assert [p.kind for p in t.messages[14].parts] == ["text", "text"]
    assert {p.kind for p in t.problems} == set()


def test_responses_instructions_go_back_to_the_top_level() -> None:
    t = load("openai_responses_request.json")
    items, _ = t.to_wire()
    assert items[0]["type"] == "compaction"
    new = dataclasses.replace(t.messages[0], parts=(TextPart("Be careful."),), wire=None)
    doc = json.loads(dump_transcript(t.with_messages([new, *t.messages[1:]])))
    assert doc["instructions"] == "Be careful."
    doc = json.loads(dump_transcript(t.with_messages(t.messages[1:])))
    assert "instructions" not in doc and doc["model"] == "gpt-5"


def test_responses_response_object() -> None:
    t = load("openai_responses_response.json")
    assert t.container.path == ("output",)
    assert t.model == "gpt-5"
    assert t.messages[0].parts == (ReasoningPart("The user wants a haiku."),)


# --- Anthropic ----------------------------------------------------------------------------


def test_anthropic_request_body() -> None:
    t = load("anthropic_request.json")
    system = t.messages[0]
    assert system.role == "system" and system.meta[META_CONTAINER_KEY] == "system"
    assert system.text == "You are a careful research assistant.\nCite sources."
    assert t.model == "claude-sonnet-4-5"
    assert [m.role for m in t.messages[1:]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert t.messages[2].parts[0] == ReasoningPart("I need the price and the news.")
    opaque = [p.type for p in t.messages[4].parts if isinstance(p, OpaquePart)]
    assert opaque == ["redacted_thinking", "server_tool_use", "web_search_tool_result"]
    docs = [p for p in t.messages[5].parts if isinstance(p, MediaPart)]
    assert [d.media_type for d in docs] == ["image/png", "image", "application/pdf", "text/plain"]
    assert docs[2].filename == "Q3 report"
    errors = t.messages[7].tool_results
    assert errors[0].is_error and not errors[1].is_error
    assert isinstance(t.messages[7].parts[-1], MediaPart)
    assert t.problems == ()


def test_anthropic_system_goes_back_to_the_top_level() -> None:
    t = load("anthropic_request.json")
    items, _ = t.to_wire()
    assert all(item["role"] in ("user", "assistant") for item in items)
    new = dataclasses.replace(t.messages[0], parts=(TextPart("Be brief."),), wire=None)
    doc = json.loads(dump_transcript(t.with_messages([new, *t.messages[1:]])))
    assert doc["system"] == "Be brief."
    doc = json.loads(dump_transcript(t.with_messages(t.messages[1:])))
    assert "system" not in doc


def test_anthropic_changed_thinking_keeps_its_signature() -> None:
    t = load("anthropic_request.json")
    m = t.messages[2]
    parts = (ReasoningPart("Shorter."), *m.parts[1:])
    changed = dataclasses.replace(m, parts=parts, wire=None)
    item = get_format("anthropic").encode_message(changed).items[0]
    assert item["content"][0] == {
        "type": "thinking",
        "thinking": "Shorter.",
        "signature": "EuYBCkQYAiJAsig==",
    }


def test_anthropic_single_response_object() -> None:
    t = load("anthropic_response.json")
    assert t.container.kind == "single"
    assert t.messages[0].text == "Hello! How can I help?"


# --- AI SDK -------------------------------------------------------------------------------


def test_ai_sdk_outputs_and_approvals() -> None:
    t = load("ai_sdk_messages.json")
    results = {r.call_id: r for m in t.messages for r in m.tool_results}
    assert results["c1"].output == "2 results" and not results["c1"].is_error
    assert json.loads(results["c2"].output) == {"eur": 39.9}
    assert results["c3"].is_error and results["c3"].output == "stock service down"
    assert results["c4"].output == "photo"
    assert results["c5"].is_error and results["c5"].output == "too expensive"
    assert results["c6"].is_error and json.loads(results["c6"].output) == {"code": 422}
    assert t.messages[4].parts == (ApprovalRequestPart("ap1", call_id="c5"),)
    assert t.messages[5].parts[0] == ApprovalResponsePart("ap1", False, "too expensive")
    assert isinstance(t.messages[3].parts[-1], MediaPart)
    assert t.messages[2].parts[0] == ReasoningPart("Search two shops, then compare.")
    assert t.problems == ()


def test_ai_sdk_rebuild_keeps_output_type_and_provider_options() -> None:
    t = load("ai_sdk_messages.json")
    fmt = get_format("ai-sdk")
    tool = dataclasses.replace(t.messages[3], wire=None)
    items = fmt.encode_message(tool).items
    assert items[0]["content"] == t.messages[3].wire["content"]
    user = dataclasses.replace(t.messages[1], parts=t.messages[1].parts[:1], wire=None)
    assert fmt.encode_message(user).items[0]["providerOptions"] == {
        "anthropic": {"cacheControl": {"type": "ephemeral"}}
    }


# --- Claude Code --------------------------------------------------------------------------


def test_claude_code_merges_assistant_events_of_one_api_message() -> None:
    t = load("claude_code_session.jsonl")
    merged = t.messages[1]
    assert isinstance(merged.wire, tuple) and len(merged.wire) == 4
    assert merged.meta[META_POSITIONS] == (4, 5, 6, 9)
    assert [p.kind for p in merged.parts] == ["reasoning", "text", "tool_call", "tool_call"]
    assert [m.role for m in t.messages[2:4]] == ["tool", "tool"]
    assert [pos for pos, _ in t.container.passthrough] == [0, 1, 2, 7, 10, 12]
    assert t.messages[6].wire["message"]["id"] == "msg_B"


def test_claude_code_orphan_result_is_loaded_and_flagged() -> None:
    t = load("claude_code_session.jsonl")
    assert t.orphan_results == (8,)
    kinds_found = {p.kind for p in t.problems}
    assert kinds_found == {"orphan_result", "unresolved_call"}


def test_claude_code_dump_after_compaction_keeps_other_events_in_place() -> None:
    t = load("claude_code_session.jsonl")
    events = read_json_or_lines(FIXTURES / "claude_code_session.jsonl")
    summary = Message(role="user", parts=(TextPart("Summary: total() multiplies by 0."),))
    compacted = t.with_messages([t.messages[0], summary, *t.messages[4:]])
    out = parse_dump(dump_transcript(compacted), jsonl=True)
    assert out[:4] == events[:4]
    assert out[4] == {
        "type": "user",
        "message": {
            "role": "user",
            "content": "Summary: total() multiplies by 0.",
        },
    }
    assert [e for e in out if e.get("type") not in ("user", "assistant")] == [
        e for e in events if e.get("type") not in ("user", "assistant")
    ]
    assert out[-1] == events[-1]


# --- LangChain ----------------------------------------------------------------------------


def test_langchain_messages() -> None:
    t = load("langchain_messages.json")
    assert [m.role for m in t.messages] == [
        "system",
        "developer",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
        "system",
        "assistant",
    ]
    calls = t.messages[3].tool_calls
    assert [c.id for c in calls] == ["call_sql1", "call_bad"]
    assert calls[1].arguments == "{SELECT"
    assert t.messages[3].parts[0] == ReasoningPart("Count orders with shipped_at in range.")
    assert t.messages[5].tool_results[0].is_error
    assert t.messages[7].parts[0] == ReasoningPart("Dashboard shows 40, close enough.")
    assert t.problems == ()


# --- Agent Framework ----------------------------------------------------------------------


def test_agent_framework_messages() -> None:
    t = load("agent_framework_messages.json")
    assert t.messages[1].role == "user" and t.messages[1].name == "ana"
    assert t.messages[2].parts[1] == OpaquePart("agent-framework", "protected_data")
    assert json.loads(t.messages[2].tool_calls[1].arguments) == {"flight": "SK123"}
    results = t.messages[3].tool_results
    assert not results[0].is_error and results[1].is_error
    assert results[1].output == "seat map service timeout"
    assert t.messages[4].parts == (ApprovalRequestPart("appr1", call_id="call_f3", name="book"),)
    assert t.messages[5].parts == (ApprovalResponsePart("appr1", True),)
    assert t.problems == ()


def test_agent_framework_rebuild_keeps_role_object_and_argument_shape() -> None:
    t = load("agent_framework_messages.json")
    fmt = get_format("agent-framework")
    user = dataclasses.replace(t.messages[1], wire=None)
    assert fmt.encode_message(user).items[0]["role"] == {"type": "role", "value": "user"}
    assistant = dataclasses.replace(t.messages[2], wire=None)
    contents = fmt.encode_message(assistant).items[0]["contents"]
    assert contents == t.messages[2].wire["contents"]


# --- canonical ----------------------------------------------------------------------------


def test_canonical_document_carries_every_part_field() -> None:
    t = load("canonical_document.json")
    assert kinds(t) == {
        "text",
        "reasoning",
        "tool_call",
        "tool_result",
        "approval_request",
        "approval_response",
        "media",
        "opaque",
    }
    assert t.messages[2].parts[3] == ApprovalRequestPart("ap1", call_id="k1", name="chart_data")
    assert t.messages[4].parts[0] == ToolResultPart("k1", "[1, 2, 3]", name="chart_data")
    assert t.messages[2].parts[2] == ToolCallPart("k1", "chart_data", '{"id": 7}')


# --- OpenHands events ---------------------------------------------------------------------


def test_openhands_history() -> None:
    t = load("openhands_history.json")
    assert t.container.path == ("history",)
    assert [m.role for m in t.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "assistant",
    ]
    merged = t.messages[2]
    assert isinstance(merged.wire, tuple) and merged.meta[META_POSITIONS] == (4, 5)
    assert [c.id for c in merged.tool_calls] == ["toolu_01", "toolu_02"]
    assert merged.text == "Let me look at the repository and the failing test."
    assert [pos for pos, _ in t.container.passthrough] == [2, 3, 8]
    assert [p.kind for p in t.problems] == ["unresolved_call"]  # the final 'finish' call
