"""AI SDK 7 part types: each loads as the right part, and provider-executed tools are
ordinary closed tool exchanges (as ``@deepagents/compaction`` treats them)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from ai_sdk_schema import validate_model_message, validate_model_messages
from sources import FIXTURES, web_search_document

from compactlens import MessageIndex, compact, load_transcript
from compactlens.compact.boundary import analyze_boundary
from compactlens.model import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    estimate_message_tokens,
)
from compactlens.summarizers.testing import FakeSummarizer

PARTS_FILE = FIXTURES / "ai_sdk_v7_parts.json"


def _parts_document() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(PARTS_FILE.read_text(encoding="utf-8"))
    return data


#: (message index, wire part index) -> the canonical part it must become.
EXPECTED: dict[tuple[int, int], type] = {
    (1, 0): TextPart,
    (1, 1): MediaPart,  # image by URL
    (1, 2): OpaquePart,  # image by provider reference
    (1, 3): MediaPart,  # file, base64 string
    (1, 4): MediaPart,  # file, {"type": "data"}
    (1, 5): MediaPart,  # file, {"type": "url"}
    (1, 6): OpaquePart,  # file, {"type": "reference"}
    (1, 7): OpaquePart,  # file, {"type": "text"}
    (1, 8): OpaquePart,  # file, untagged provider reference
    (2, 0): ReasoningPart,
    (2, 1): OpaquePart,  # reasoning-file
    (2, 2): OpaquePart,  # custom
    (2, 3): TextPart,
    (2, 4): ToolCallPart,  # providerExecuted web search call
    (2, 5): ToolResultPart,  # its result, in the assistant message
    (2, 6): MediaPart,  # assistant file
    (2, 7): ToolCallPart,
    (2, 8): ToolCallPart,
    (2, 9): ApprovalRequestPart,
}


def _first_part_of_each_block(message: Any) -> dict[int, Any]:
    """Wire part index -> the first canonical part read from it."""
    blocks = message.meta["part_blocks"]
    wire_parts = message.wire["content"]
    out: dict[int, Any] = {}
    for part, block in zip(message.parts, blocks, strict=True):
        k = next(k for k, w in enumerate(wire_parts) if w is block)
        out.setdefault(k, part)
    return out


def test_the_fixture_is_valid_ai_sdk_7() -> None:
    assert validate_model_messages(_parts_document()) == []


@pytest.mark.parametrize(("where", "expected"), sorted(EXPECTED.items()))
def test_each_part_type_loads_as_its_canonical_part(where: tuple[int, int], expected: type) -> None:
    transcript = load_transcript(_parts_document(), "ai-sdk")
    i, k = where
    assert isinstance(_first_part_of_each_block(transcript.messages[i])[k], expected)


def test_tool_output_content_entries_all_load() -> None:
    transcript = load_transcript(_parts_document(), "ai-sdk")
    tool = transcript.messages[3]
    kinds = [type(p).__name__ for p in tool.parts]
    assert kinds[0] == "ToolResultPart"
    assert tool.parts[0].output == "39 EUR"  # type: ignore[union-attr]
    # 10 entries besides the text: media where we can read them, opaque where not.
    assert kinds[1:11].count("MediaPart") == 6
    assert kinds[1:11].count("OpaquePart") == 4  # references, fileId per provider, custom
    assert isinstance(tool.parts[11], ApprovalResponsePart)


def test_the_unchanged_transcript_dumps_back_equal() -> None:
    document = _parts_document()
    dumped, warnings = load_transcript(document, "ai-sdk").to_document()
    assert dumped == document
    assert warnings == []


def test_a_provider_executed_exchange_is_closed_in_its_message() -> None:
    transcript = load_transcript(web_search_document(), "ai-sdk")
    exchange = transcript.messages[1]
    assert not exchange.has_opaque
    assert [c.id for c in exchange.tool_calls] == [r.call_id for r in exchange.tool_results]
    assert transcript.problems == ()
    index = MessageIndex.build(transcript.messages)
    link = next(link for link in index.links if link.call_id == "srvtoolu_01")
    assert link.result_indices == (1,)
    assert "unresolved" not in index.groups[index.group_of[1]].flags


def test_the_default_estimate_counts_a_provider_executed_exchange() -> None:
    transcript = load_transcript(web_search_document(), "ai-sdk")
    assert estimate_message_tokens(transcript.messages) > 0


def test_the_boundary_replaces_the_exchange_like_deepagents() -> None:
    transcript = load_transcript(web_search_document(), "ai-sdk")
    boundary = analyze_boundary(transcript.messages, keep_last_messages=3)
    assert (boundary.start, boundary.end) == (0, 3)
    assert not [p for p in boundary.pins if p.kind == "opaque"]


def test_compact_summarizes_the_exchange_with_the_default_estimate() -> None:
    document = web_search_document()
    result = compact(
        document,
        summarizer=FakeSummarizer("Example Tower, 620 m, by Example Architects."),
        target_tokens=10_000,
        keep_last_messages=3,
        format="ai-sdk",
    )
    assert result.status == "compacted", result.detail
    assert result.replaced_range == (0, 3)
    assert result.messages[1:] == document[3:]
    assert validate_model_messages(result.messages) == []


def test_a_rebuilt_exchange_keeps_provider_executed_and_its_result() -> None:
    transcript = load_transcript(web_search_document(), "ai-sdk")
    exchange = transcript.messages[1]
    parts = tuple(
        TextPart("The tallest is Example Tower.") if isinstance(p, TextPart) else p
        for p in exchange.parts
    )
    changed = dataclasses.replace(exchange, parts=parts, wire=None)
    items, _ = transcript.with_messages([transcript.messages[0], changed]).to_wire()
    rebuilt = items[1]
    assert validate_model_message(rebuilt) == []
    call, result, text = rebuilt["content"]
    assert call["providerExecuted"] is True
    assert result == exchange.wire["content"][1]  # unchanged result: its very block
    assert text == {"type": "text", "text": "The tallest is Example Tower."}


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"role": "user", "content": [{"type": "file", "data": "x"}]}, "matches no member"),
        (
            {"role": "assistant", "content": [{"type": "custom"}]},
            "matches no member",
        ),
        (
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool-call",
                        "toolCallId": "c",
                        "toolName": "t",
                        "input": {},
                        "providerExecuted": "yes",
                    }
                ],
            },
            "matches no member",
        ),
        (
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "c",
                        "toolName": "t",
                        "output": {"type": "media", "data": "x", "mediaType": "image/png"},
                    }
                ],
            },
            "matches no member",
        ),
        ({"role": "tool", "content": [{"type": "text", "text": "x"}]}, "matches no member"),
        ({"role": "system", "content": [{"type": "text", "text": "x"}]}, "expected string"),
        ({"role": "function", "content": "x"}, "is not one of"),
    ],
)
def test_the_validator_rejects_what_the_schema_rejects(message: Any, problem: str) -> None:
    problems = validate_model_message(message)
    assert problems
    assert problem in " ".join(problems)


@pytest.mark.parametrize(
    "target",
    [
        "openai-chat",
        "openai-responses",
        "anthropic",
        "claude-code",
        "langchain",
        "agent-framework",
        "openhands-events",
    ],
)
def test_a_provider_executed_exchange_converts_to_text_not_to_an_open_call(target: str) -> None:
    transcript = load_transcript(web_search_document(), "ai-sdk")
    converted = transcript.convert(target)
    assert converted.problems == ()
    assert not any(m.tool_calls for m in converted.messages)
    assert any(
        "Tallest towers of 2025" in m.text and "web_search" in m.text for m in converted.messages
    )
    notes = [w for w in converted.warnings if "provider-executed" in w.detail]
    assert [w.message_indices for w in notes] == [(1,)]


def test_the_canonical_document_keeps_a_provider_executed_exchange() -> None:
    transcript = load_transcript(web_search_document(), "ai-sdk")
    back = transcript.convert("canonical").convert("ai-sdk")
    assert back.messages == transcript.messages
    assert not [w for w in back.warnings if w.message_indices]
