"""What every integration test checks: the strategy under test, pairing, the model's
requests against the recording, spans, and that the recording loads."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compactlens import apply_compaction, load_transcript
from compactlens.formats.recording import COMPACTION
from compactlens.integrations import Compactor
from compactlens.integrations.compactor import changed
from compactlens.integrations.runs import iter_calls

#: The configuration under test: collapse old tool results, then truncate, at 700 tokens.
CONFIG: dict[str, Any] = {
    "type": "pipeline",
    "strategies": [
        {
            "type": "tool_result_collapse",
            "trigger": {"op": "exceed", "metric": "tokens", "n": 700},
            "keep_last_tool_call_groups": 1,
        },
        {
            "type": "truncation",
            "trigger": {"op": "exceed", "metric": "tokens", "n": 700},
            "minimum_preserved": 4,
        },
    ],
}
QUESTIONS = ("rust borrow checker", "python gil", "postgres vacuum", "tcp slow start")


def make_compactor(folder: Path) -> Compactor:
    return Compactor.from_config(CONFIG, record_to=folder)


def assert_paired(messages: Sequence[dict[str, Any]]) -> None:
    """Every tool call the model sees has its result after it, and every result its call."""
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        for call in m.get("tool_calls") or []:
            open_calls.add(call["id"])
        if m.get("role") == "tool":
            assert m["tool_call_id"] in open_calls, f"message {i}: result without its call"
            open_calls.discard(m["tool_call_id"])
        elif m.get("role") in ("user", "system") and open_calls:
            raise AssertionError(f"message {i}: calls {open_calls} have no result before it")
    assert not open_calls, f"calls without results: {open_calls}"


def compaction_records(folder: Path) -> list[dict[str, Any]]:
    """The compaction records of the folder's one recording, each with ``before`` (the
    history the call saw) and ``after`` (what the model got), rebuilt from its deltas."""
    files = sorted(folder.glob("*.jsonl"))
    assert len(files) == 1, files
    lines = [json.loads(line) for line in files[0].read_text().splitlines()]
    calls = {c.seq: c for c in iter_calls(files[0].read_bytes())}
    return [
        {**r, "before": calls[r["seq"]].history, "after": calls[r["seq"]].after}
        for r in lines
        if r.get("type") == COMPACTION
    ]


def _signature(messages: Sequence[Any]) -> list[tuple[str, tuple[str, ...], str]]:
    """Role, tool-call / result ids and user text of each non-system message."""
    from compactlens.model import ToolCallPart, ToolResultPart

    out: list[tuple[str, tuple[str, ...], str]] = []
    for m in messages:
        if m.role in ("system", "developer"):
            continue
        ids = tuple(
            p.id if isinstance(p, ToolCallPart) else p.call_id
            for p in m.parts
            if isinstance(p, ToolCallPart | ToolResultPart)
        )
        out.append((m.role, ids, m.text if m.role == "user" else ""))
    return out


def assert_model_got(records: Sequence[dict[str, Any]], server: Any, fmt: str) -> None:
    """At each compaction, a model request opened with exactly the compacted history (the
    request at the same call for per-call hooks; the framework may append the new input)."""
    sent = [
        _signature(load_transcript(r.messages, format="openai-chat").messages)
        for r in server.requests
    ]
    for record in records:
        after = _signature(load_transcript(record["after"], format=fmt).messages)
        at = record["seq"]
        if at < len(sent) and sent[at] == after:
            continue
        assert any(s[: len(after)] == after for s in sent), f"no request began with {after}"


def check_run(folder: Path, spans: Any, fmt: str, compactor: Compactor) -> list[dict[str, Any]]:
    """The recording's compactions replay with apply_compaction, carry spans, and load."""
    records = compaction_records(folder)
    assert records, "the conversation never compacted: the test does not test anything"
    finished = spans.get_finished_spans()
    for record in records:
        again = apply_compaction(
            record["before"], compactor.strategy, format=fmt, guards=compactor.guards
        )
        assert again.status == record["status"]
        assert json.loads(json.dumps(again.messages)) == record["after"]
    compacted = [
        s
        for s in finished
        if s.attributes.get("gen_ai.operation.name") == "compact"
        and s.attributes.get("gen_ai.conversation.compacted") is True
    ]
    assert len(compacted) == len(records)
    for s in compacted:
        assert s.attributes["compactlens.tokens_after"] < s.attributes["compactlens.tokens_before"]
        assert "compactlens.content.before" not in s.attributes
    transcript = load_transcript(next(folder.glob("*.jsonl")))
    assert transcript.format == "compactlens-recording"
    assert len(transcript.compactions) == len(records)
    for found, record in zip(transcript.compactions, records, strict=True):
        assert found.tokens_before == record["tokens_before"]
        assert found.after is not None and len(found.after) == len(record["after"])
    return records


RECORDED_CONFIG = {
    "type": "truncation",
    "trigger": {"op": "exceed", "metric": "messages", "n": 10},
    "minimum_preserved": 4,
}


def _turn(t: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"question {t}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"c{t}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": f"c{t}", "content": f"result {t}"},
        {"role": "assistant", "content": f"answer {t}"},
    ]


def record_a_run(folder: Path, turns: int) -> tuple[Path, int]:
    """An agent loop that sends what the compactor keeps; returns the file and compactions."""
    compactor = Compactor.from_config(RECORDED_CONFIG, record_to=folder, format="openai-chat")
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    compactions = 0
    for t in range(turns):
        history = [*history, *_turn(t)[:1]]
        result = compactor.run(history, "openai-chat")
        compactions += changed(result)
        history = [*result.messages, *_turn(t)[1:]]
    assert compactor.recorder is not None
    return compactor.recorder.path, compactions
