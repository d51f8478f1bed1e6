"""Dump, then load: what was dumped comes back, for every container (issue 14, item 5).

A transcript is stored in each container (JSON array, an object holding the list
with other keys, Anthropic ``system`` / Responses ``instructions`` beside it, JSON
lines, one message object, a ToolBench answer with several ``train_messages``
chains, the canonical document), changed the way compaction changes it (messages
dropped, new messages in their place), dumped, and loaded again: the loaded
messages are the dumped ones and dumping them again gives the same text.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactlens import Transcript, dump_transcript, load_transcript
from compactlens.formats import canonical as canonical_format
from compactlens.model import Message, TextPart, ToolCallPart, ToolResultPart

_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """A plain conversation: user turns, assistant answers, closed tool exchanges."""
    out: list[Message] = [Message("system", (TextPart(draw(_TEXT) or "system"),))]
    for turn in range(draw(st.integers(1, 4))):
        out.append(Message("user", (TextPart(draw(_TEXT) or "question"),)))
        for k in range(draw(st.integers(0, 2))):
            call_id = f"call_{turn}_{k}"
            call = ToolCallPart(call_id, "lookup", json.dumps({"q": draw(_TEXT)}))
            out.append(Message("assistant", (call,)))
            out.append(Message("tool", (ToolResultPart(call_id, draw(_TEXT), name="lookup"),)))
        out.append(Message("assistant", (TextPart(draw(_TEXT) or "answer"),)))
    return out


def _wire(messages: list[Message], fmt: str) -> list[Any]:
    """The messages as ``fmt`` wire items (through the canonical document)."""
    document = canonical_format.document([canonical_format.from_message(m) for m in messages])
    items, _ = load_transcript(document, "canonical").to_wire(fmt)
    return items


def _compacted(t: Transcript, drop: int, replace: int) -> Transcript:
    """Drop ``drop`` messages after the system one and rewrite the text of one message."""
    kept = [t.messages[0], *t.messages[1 + drop :]]
    k = replace % len(kept)
    m = kept[k]
    if m.text:
        kept[k] = dataclasses.replace(m, parts=(TextPart(m.text + " (edited)"),), wire=None)
    kept.insert(1, Message("user", (TextPart("Previous conversation summary:\nearlier"),)))
    return t.with_messages(kept)


Container = Callable[[list[Any]], tuple[Any, str]]


def _toolbench(items: list[Any]) -> tuple[Any, str]:
    # A ToolBench answer holds one chain per step; the last is the whole conversation,
    # and an earlier one may be longer than the last once that is compacted.
    chains = [items[:1], items[:-1], items]
    return {"answer_generation": {"train_messages": chains, "final_answer": "x"}}, "openai-chat"


CONTAINERS: dict[str, Container] = {
    "array": lambda items: (items, "openai-chat"),
    "object": lambda items: ({"model": "gpt-x", "messages": items, "tools": []}, "openai-chat"),
    "anthropic-system": lambda items: (
        {"model": "claude", "system": items[0]["content"], "messages": items[1:]},
        "anthropic",
    ),
    "responses-instructions": lambda items: (
        {"model": "gpt-x", "instructions": "Be brief.", "input": items},
        "openai-responses",
    ),
    "ai-sdk-array": lambda items: (items, "ai-sdk"),
    "langchain-array": lambda items: (items, "langchain"),
    "agent-framework-array": lambda items: (items, "agent-framework"),
    "openhands-history": lambda items: ({"history": items}, "openhands-events"),
    "canonical": lambda items: ({"format": "compactlens", "messages": items}, "canonical"),
    "toolbench": _toolbench,
}
#: container -> the wire format its items are written in.
ITEM_FORMAT = {
    "array": "openai-chat",
    "object": "openai-chat",
    "anthropic-system": "anthropic",
    "responses-instructions": "openai-responses",
    "ai-sdk-array": "ai-sdk",
    "langchain-array": "langchain",
    "agent-framework-array": "agent-framework",
    "openhands-history": "openhands-events",
    "canonical": "canonical",
    "toolbench": "openai-chat",
}


def _roundtrip(document: Any, fmt: str, drop: int, replace: int) -> None:
    original = load_transcript(document, fmt)
    changed = _compacted(original, drop, replace)
    text = dump_transcript(changed)
    loaded = load_transcript(text, fmt)
    assert [(m.role, m.text) for m in loaded.messages] == [
        (m.role, m.text) for m in changed.messages
    ]
    assert dump_transcript(loaded) == text


@pytest.mark.parametrize("container", sorted(CONTAINERS))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=conversations(), drop=st.integers(0, 4), replace=st.integers(0, 20))
def test_dump_then_load_returns_what_was_dumped(
    messages: list[Message], container: str, drop: int, replace: int
) -> None:
    items = _wire(messages, ITEM_FORMAT[container])
    document, fmt = CONTAINERS[container](items)
    _roundtrip(document, fmt, drop, replace)


@settings(max_examples=15, deadline=None)
@given(messages=conversations(), drop=st.integers(0, 3), replace=st.integers(0, 20))
def test_json_lines_dump_then_load(messages: list[Message], drop: int, replace: int) -> None:
    items = _wire(messages, "openai-chat")
    text = "".join(json.dumps(item) + "\n" for item in items)
    _roundtrip(text, "openai-chat", drop, replace)


@settings(max_examples=15, deadline=None)
@given(text=_TEXT)
def test_a_single_message_object_dump_then_load(text: str) -> None:
    document = {"role": "user", "content": text or "hello"}
    original = load_transcript(document, "openai-chat")
    changed = original.with_messages(
        [dataclasses.replace(original.messages[0], parts=(TextPart("new"),), wire=None)]
    )
    dumped = dump_transcript(changed)
    loaded = load_transcript(dumped, "openai-chat")
    assert [m.text for m in loaded.messages] == ["new"]
    assert dump_transcript(loaded) == dumped


def test_toolbench_write_back_reads_back_the_compacted_chain() -> None:
    """The reported case: 11 messages compacted to 6 came back as another chain of 10."""
    chain = [{"role": "system", "content": "tools"}]
    for k in range(5):
        chain.append({"role": "user" if k == 0 else "assistant", "content": f"step {k}"})
        chain.append({"role": "function", "name": "f", "content": f"result {k}"})
    other = chain[:10]
    document = {"answer_generation": {"train_messages": [chain[:4], other, chain]}}
    original = load_transcript(document)
    assert len(original.messages) == 11
    changed = original.with_messages(original.messages[:1] + original.messages[6:])
    loaded = load_transcript(dump_transcript(changed))
    assert len(loaded.messages) == 6
    assert [m.text for m in loaded.messages] == [m.text for m in changed.messages]
