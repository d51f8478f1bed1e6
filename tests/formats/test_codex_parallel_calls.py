"""Codex rollouts with parallel tool calls: one model turn is one assistant message (issue 29).

Codex writes every output item of a model response as its own ``response_item`` record
(reasoning, text, each of several ``function_call`` items, hosted ``web_search_call``
items), then the calls' outputs. Read as they are, the calls of one turn would be
separate messages and every result but the last would be "separated from its call".
The fixture ``codex_parallel_calls.jsonl`` is written in the compact JSON Codex writes;
the expected values are read from its records, not from the code under test.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from formats_support import FIXTURES

from compactlens import dump_transcript, load_transcript
from compactlens.engine.index import MessageIndex
from compactlens.formats import get_format
from compactlens.formats.base import META_POSITIONS
from compactlens.model import TextPart

FIXTURE = FIXTURES / "codex_parallel_calls.jsonl"
CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
#: Item types the model writes (with assistant ``message`` items): one turn's run is one message.
MODEL_ITEMS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def _is_model_item(record: dict[str, Any]) -> bool:
    payload = record["payload"]
    return record["type"] == "response_item" and (
        payload.get("role") == "assistant" or payload.get("type") in MODEL_ITEMS
    )


def _turns(records: list[dict[str, Any]]) -> list[tuple[int, ...]]:
    """Positions of the model items of each model turn (runs with no other item between)."""
    turns: list[list[int]] = []
    open_turn = False
    for pos, r in enumerate(records):
        if _is_model_item(r):
            if not open_turn:
                turns.append([])
            turns[-1].append(pos)
            open_turn = True
        elif r["type"] in ("turn_context", "compacted") or (
            r["type"] == "response_item" and r["payload"].get("type") != "ghost_snapshot"
        ):
            open_turn = False
    return [tuple(t) for t in turns]


def test_the_fixture_has_parallel_calls_and_every_item_kind() -> None:
    records = _records()
    kinds = {r["payload"].get("type") for r in records if r["type"] == "response_item"}
    assert {"function_call", "function_call_output", "reasoning", "custom_tool_call"} <= kinds
    assert {"custom_tool_call_output", "web_search_call", "message"} <= kinds
    assert max(len(t) for t in _turns(records)) >= 4


def test_one_model_turn_is_one_assistant_message() -> None:
    records = _records()
    t = load_transcript(FIXTURE)
    assert t.format == "codex"
    merged = [m for m in t.messages if m.role == "assistant"]
    assert [m.meta[META_POSITIONS] for m in merged] == _turns(records)
    for m in merged:
        wires = m.wire if isinstance(m.wire, tuple) else (m.wire,)
        assert [records.index(w) for w in wires] == list(m.meta[META_POSITIONS])
    calls = [
        r["payload"]["call_id"] for r in records if r["payload"].get("type") == "function_call"
    ]
    assert [c.id for m in merged for c in m.tool_calls if c.name == "shell"] == calls


def test_parallel_calls_have_no_pairing_problems_and_groups_do_not_overlap() -> None:
    t = load_transcript(FIXTURE)
    assert t.problems == ()
    index = MessageIndex.build(t.messages)
    assert index.problems == ()
    spans = sorted((g.indices[0], g.indices[-1]) for g in index.groups)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))
    assert sorted(i for g in index.groups for i in g.indices) == list(range(len(t.messages)))


def test_writes_back_byte_for_byte() -> None:
    t = load_transcript(FIXTURE)
    assert dump_transcript(t) == FIXTURE.read_text(encoding="utf-8")
    items, warnings = t.to_wire()
    assert warnings == [] and items == _records()


def test_a_changed_turn_is_written_as_its_items_in_order() -> None:
    """A turn whose text changed: one record per item again, in the order read, each with
    the timestamp of the record it came from (the changed message keeps the first one)."""
    records = _records()
    t = load_transcript(FIXTURE)
    k, turn = next((k, m) for k, m in enumerate(t.messages) if m.text and m.tool_calls)
    parts = tuple(
        TextPart(p.text + " (edited)") if isinstance(p, TextPart) else p for p in turn.parts
    )
    changed = dataclasses.replace(turn, parts=parts, wire=None)
    encoded = get_format("codex").encode_message(changed)
    positions = turn.meta[META_POSITIONS]
    assert [line["payload"]["type"] for line in encoded.items] == [
        records[p]["payload"]["type"] for p in positions
    ]
    for line, pos in zip(encoded.items, positions, strict=True):
        if line["payload"] == records[pos]["payload"]:
            assert line == records[pos]
    out = t.with_messages([*t.messages[:k], changed, *t.messages[k + 1 :]])
    again = load_transcript(dump_transcript(out), "codex")
    assert again.messages[k].parts == parts and again.problems == ()


def _corpus_rollouts() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(
        p
        for p in CORPUS.rglob("*")
        if p.is_file() and "codex" in p.name.lower() and p.suffix in (".jsonl", ".json")
    )


@pytest.mark.parametrize("path", _corpus_rollouts() or [None])
def test_real_codex_rollouts_have_no_split_pairs_and_write_back_bytes(path: Path | None) -> None:
    if path is None:
        pytest.skip("no Codex rollout in the shared corpus")
    t = load_transcript(path)
    if t.format != "codex":
        pytest.skip(f"{path.name} is read as {t.format}")
    assert [p for p in t.problems if p.kind == "split_pair"] == []
    text = path.read_text(encoding="utf-8")
    if text.endswith("\n") and "\r" not in text:
        assert dump_transcript(t) == text
