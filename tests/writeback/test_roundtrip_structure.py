"""Round trips across formats keep the message structure, or warn (issue 14, item 7).

openai-chat -> openai-responses -> openai-chat used to split every assistant turn
with text and tool calls into one message per item (344 -> 484 messages on a corpus
transcript). Converting back now rebuilds the turns the items came from; what a
format cannot hold is reported as a ConversionWarning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactlens import Transcript, load_transcript
from compactlens.formats import canonical as canonical_format
from compactlens.model import (
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1)
INTERMEDIATE = [
    "openai-responses",
    "anthropic",
    "ai-sdk",
    "langchain",
    "agent-framework",
    "openhands-events",
    "claude-code",
    "canonical",
]


def shape(messages: Any) -> list[tuple[str, list[Any]]]:
    """Roles and parts, as far as every format can hold them."""
    out: list[tuple[str, list[Any]]] = []
    for m in messages:
        parts: list[Any] = []
        for p in m.parts:
            if isinstance(p, TextPart | ReasoningPart):
                parts.append((p.kind, p.text))
            elif isinstance(p, ToolCallPart):
                parts.append(("call", p.id, p.name))
            elif isinstance(p, ToolResultPart):
                parts.append(("result", p.call_id, p.output))
            else:
                parts.append((p.kind,))
        out.append((m.role, parts))
    return out


@st.composite
def chat_conversations(draw: st.DrawFn) -> list[Message]:
    """Assistant turns with text and several tool calls in one message, and their results."""
    out: list[Message] = [Message("system", (TextPart("You are terse."),))]
    for turn in range(draw(st.integers(1, 4))):
        out.append(Message("user", (TextPart(draw(_TEXT)),)))
        calls = [
            ToolCallPart(f"call_{turn}_{k}", "lookup", json.dumps({"k": k}))
            for k in range(draw(st.integers(0, 3)))
        ]
        lead = [TextPart(draw(_TEXT))] if draw(st.booleans()) or not calls else []
        out.append(Message("assistant", (*lead, *calls)))
        out.extend(
            Message("tool", (ToolResultPart(c.id, draw(_TEXT), name="lookup"),)) for c in calls
        )
        if calls:
            out.append(Message("assistant", (TextPart(draw(_TEXT)),)))
    return out


def _chat(messages: list[Message]) -> Transcript:
    document = canonical_format.document([canonical_format.from_message(m) for m in messages])
    items, _ = load_transcript(document, "canonical").to_wire("openai-chat")
    return load_transcript(items, "openai-chat")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=chat_conversations())
def test_chat_through_responses_and_back_keeps_every_message(messages: list[Message]) -> None:
    chat = _chat(messages)
    back = chat.convert("openai-responses").convert("openai-chat")
    assert shape(back.messages) == shape(chat.messages)


@pytest.mark.parametrize("middle", INTERMEDIATE)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=chat_conversations())
def test_a_round_trip_keeps_the_structure_or_warns(middle: str, messages: list[Message]) -> None:
    chat = _chat(messages)
    there = chat.convert(middle)
    back = there.convert("openai-chat")
    if shape(back.messages) != shape(chat.messages):
        assert there.warnings or back.warnings, f"{middle} changed the structure silently"


def test_anthropic_results_of_one_turn_come_back_in_one_message() -> None:
    document = {
        "messages": [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking both."},
                    {"type": "tool_use", "id": "t1", "name": "weather", "input": {"c": "Paris"}},
                    {"type": "tool_use", "id": "t2", "name": "weather", "input": {"c": "Rome"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "18 C"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "24 C"},
                ],
            },
            {"role": "assistant", "content": "Paris 18 C, Rome 24 C."},
        ]
    }
    anthropic = load_transcript(document, "anthropic")
    back = anthropic.convert("openai-responses").convert("anthropic")
    assert shape(back.messages) == shape(anthropic.messages)


def test_openhands_says_when_it_merges_text_parts() -> None:
    message = Message("assistant", (TextPart("first"), TextPart("second")))
    chat = _chat([Message("user", (TextPart("hi"),)), message])
    converted = chat.convert("openhands-events")
    assert any("text parts merged" in w.detail for w in converted.warnings)
    assert [w.message_indices for w in converted.warnings if "merged" in w.detail] == [(1,)]


def test_corpus_chat_through_responses_and_back(corpus_files: list[Path]) -> None:
    checked = 0
    for path in corpus_files:
        transcript = load_transcript(path)
        if transcript.format != "openai-chat":
            continue
        back = transcript.convert("openai-responses").convert("openai-chat")
        assert len(back.messages) == len(transcript.messages), path.name
        assert shape(back.messages) == shape(transcript.messages), path.name
        checked += 1
    assert checked, "no openai-chat transcript in the corpus"
