"""Codex rollouts whose user prompts are recorded only as ``user_message`` events (review 4 #2).

The Codex CLI (``codex-tui``) records what the person typed twice: a ``response_item``
user message and, right after it, an ``event_msg`` ``user_message``. Some rollouts (a
Codex Desktop 0.128 file trimmed to its events) have only the event; read as response
items alone they had no user turn at all. The fixture ``codex_desktop_events.jsonl`` has
that shape (our own text); the expected values are read from its records.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from formats_support import FIXTURES

from compactlens import dump_transcript, load_transcript
from compactlens.formats import get_format
from compactlens.formats.base import META_POSITIONS

DESKTOP = FIXTURES / "codex_desktop_events.jsonl"
BOTH = FIXTURES / "codex_rollout.jsonl"
#: The review's real rollouts (Apache-2.0 fixtures of codemie-ai/codemie-code), kept outside
#: the repository: /work/review4/codex/SOURCE.md.
REAL = Path("/work/review4/codex")


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _events(records: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [
        (pos, r["payload"]["message"])
        for pos, r in enumerate(records)
        if r["type"] == "event_msg" and r["payload"].get("type") == "user_message"
    ]


def test_event_only_prompts_are_user_messages_at_their_positions() -> None:
    records = _records(DESKTOP)
    assert not any(
        r["type"] == "response_item" and r["payload"].get("role") == "user" for r in records
    )
    t = load_transcript(DESKTOP)
    users = [m for m in t.messages if m.role == "user"]
    assert [(m.meta[META_POSITIONS], m.text) for m in users] == [
        ((pos,), text) for pos, text in _events(records)
    ]
    # Each prompt comes before the model turn that answers it.
    starts = [m.meta[META_POSITIONS][0] for m in t.messages]
    assert starts == sorted(starts)
    assert t.problems == ()


def test_event_only_prompts_write_back_byte_for_byte_and_changed_ones_as_items() -> None:
    t = load_transcript(DESKTOP)
    assert dump_transcript(t) == DESKTOP.read_text(encoding="utf-8")
    first = next(m for m in t.messages if m.role == "user")
    changed = dataclasses.replace(first, wire=None)
    (line,) = get_format("codex").encode_message(changed).items
    assert line["type"] == "response_item"
    assert line["payload"]["role"] == "user"
    assert line["payload"]["content"][0]["text"] == first.text


def test_an_image_recorded_only_as_a_local_path_is_named_in_a_warning() -> None:
    records = _records(DESKTOP)
    pos = next(p for p, r in enumerate(records) if r["payload"].get("local_images"))
    t = load_transcript(DESKTOP)
    assert [w.kind for w in t.warnings] == ["dropped"]
    assert f"line {pos + 1}" in str(t.warnings[0]) and "local file path" in str(t.warnings[0])


def test_a_prompt_recorded_as_both_an_item_and_an_event_is_one_message() -> None:
    records = _records(BOTH)
    items = [
        r["payload"]["content"][0]["text"]
        for r in records
        if r["type"] == "response_item" and r["payload"].get("role") == "user"
    ]
    assert [text for _, text in _events(records)] and all(
        text in items for _, text in _events(records)
    )
    t = load_transcript(BOTH)
    assert [m.text for m in t.messages if m.role == "user"] == items
    assert t.warnings == ()


def _real(prefix: str) -> Path:
    found = sorted(REAL.glob(f"rollout-{prefix}*.jsonl")) if REAL.is_dir() else []
    if not found:
        pytest.skip(f"the review's real Codex rollout {prefix} is not on this machine")
    return found[0]


@pytest.mark.parametrize("prefix", ["2026-05-11T11-26-55", "2026-05-11T13-28-45"])
def test_real_rollouts_load_every_prompt_once_and_write_back_bytes(prefix: str) -> None:
    path = _real(prefix)
    records = _records(path)
    items = {
        "\n".join(c["text"] for c in r["payload"]["content"]).strip()
        for r in records
        if r["type"] == "response_item" and r["payload"].get("role") == "user"
    }
    events = [text.strip() for _, text in _events(records)]
    t = load_transcript(path)
    typed = [m.text.strip() for m in t.messages if m.role == "user"]
    # Every prompt the person typed is a message, exactly once.
    assert all(typed.count(e) == 1 for e in events)
    assert len(typed) == len(items | set(events))
    assert dump_transcript(t) == path.read_text(encoding="utf-8")
