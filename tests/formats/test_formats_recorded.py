"""Recorded compactions: Claude Code, Codex, Inspect AI, Anthropic and Responses markers.

Expected values are read from the fixtures themselves (the marker records), not from
the code under test.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from formats_support import FIXTURES

from compactlens import load_transcript
from compactlens.model import TranscriptError


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (FIXTURES / name).read_text().splitlines() if x.strip()]


def test_claude_code_boundaries_become_compactions() -> None:
    events = _lines("claude_code_compacted.jsonl")
    boundaries = [e for e in events if e.get("subtype") == "compact_boundary"]
    summaries = [e for e in events if e.get("isCompactSummary")]
    t = load_transcript(FIXTURES / "claude_code_compacted.jsonl")
    assert len(t.compactions) == len(boundaries) == 2
    for c, b, s in zip(t.compactions, boundaries, summaries, strict=True):
        assert c.source == "claude_code.compact_boundary"
        assert c.trigger == b["compactMetadata"]["trigger"]
        assert c.tokens_before == b["compactMetadata"]["preTokens"]
        assert c.timestamp == b["timestamp"]
        assert c.summary == s["message"]["content"]
        assert c.summary_index is not None
        assert t.messages[c.summary_index].text == s["message"]["content"]
        assert c.replaced and c.replaced == t.messages[c.index - len(c.replaced) : c.index]
    first, second = t.compactions
    # The first compaction replaced everything before it; the second starts at the summary.
    assert first.replaced == t.messages[: first.index]
    assert second.replaced is not None and second.replaced[0] == t.messages[first.summary_index]


def test_summary_records_are_session_titles_not_compactions() -> None:
    # Claude Code writes {"type": "summary", "leafUuid"} lines for its resume list, at the
    # top and between messages; only the compact_boundary + isCompactSummary pair is one.
    events = _lines("claude_code_titles.jsonl")
    titles = [e for e in events if e.get("type") == "summary"]
    boundaries = [e for e in events if e.get("subtype") == "compact_boundary"]
    assert len(titles) == 6 and len(boundaries) == 1
    t = load_transcript(FIXTURES / "claude_code_titles.jsonl")
    (c,) = t.compactions
    (summary,) = [e for e in events if e.get("isCompactSummary")]
    assert c.source == "claude_code.compact_boundary"
    assert c.tokens_before == boundaries[0]["compactMetadata"]["preTokens"]
    assert c.summary == summary["message"]["content"]
    assert c.summary_index is not None
    assert t.messages[c.summary_index].text == summary["message"]["content"]
    # Its history: every message before it (the titles between them cut nothing).
    assert c.replaced == t.messages[: c.index]
    before = events[: events.index(boundaries[0])]
    assert len(c.replaced) == sum(1 for e in before if "message" in e)


def test_a_lone_summary_record_is_a_title() -> None:
    user = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}}
    top = {"type": "summary", "summary": "Fix export job", "leafUuid": "x"}
    later = {"type": "summary", "summary": "The user said hi.", "leafUuid": "y"}
    assert load_transcript([top, user]).compactions == ()
    assert load_transcript([user, later, user]).compactions == ()


def test_a_summary_record_right_after_a_boundary_is_its_summary() -> None:
    user = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}}
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "compactMetadata": {"trigger": "auto", "preTokens": 900},
    }
    record = {"type": "summary", "summary": "The user said hi.", "leafUuid": "y"}
    (c,) = load_transcript([user, boundary, record, user]).compactions
    assert (c.source, c.summary, c.index, c.trigger) == (
        "claude_code.compact_boundary",
        "The user said hi.",
        1,
        "auto",
    )
    assert c.replaced is not None and len(c.replaced) == 1


def test_a_compact_summary_without_a_boundary_is_a_compaction() -> None:
    user = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}}
    summary = {
        "type": "user",
        "isCompactSummary": True,
        "message": {"role": "user", "content": "Summary: the user said hi."},
    }
    (c,) = load_transcript([user, user, summary, user]).compactions
    assert (c.source, c.index, c.summary_index, c.summary) == (
        "claude_code.compact_summary",
        2,
        2,
        "Summary: the user said hi.",
    )
    assert c.replaced is not None and len(c.replaced) == 2


#: Responses items the model writes (one model turn's run of them is one assistant message).
_CODEX_ASSISTANT_ITEMS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)


def _codex_messages(records: list[dict[str, Any]]) -> int:
    """Messages of rollout records: a response item each, but consecutive assistant items
    (only non-message records between them, no ``turn_context``) make one."""
    count, in_turn = 0, False
    for r in records:
        if r["type"] == "turn_context":
            in_turn = False
        if r["type"] != "response_item" or r["payload"].get("type") == "ghost_snapshot":
            continue
        payload = r["payload"]
        assistant = payload.get("role") == "assistant" or payload["type"] in _CODEX_ASSISTANT_ITEMS
        count += 0 if assistant and in_turn else 1
        in_turn = assistant
    return count


def test_codex_compacted_record_with_replacement_history() -> None:
    records = _lines("codex_rollout.jsonl")
    pos = next(i for i, r in enumerate(records) if r["type"] == "compacted")
    replacement = records[pos]["payload"]["replacement_history"]
    t = load_transcript(FIXTURES / "codex_rollout.jsonl")
    assert t.format == "codex" and "'compacted' records" in t.detection
    (c,) = t.compactions
    assert c.source == "codex.compacted"
    messages_before = _codex_messages(records[:pos])
    assert c.index == messages_before
    assert c.after is not None and len(c.after) == len(replacement)
    assert c.summary == replacement[-1]["content"][0]["text"]
    token_counts = [r for r in records[:pos] if r["payload"].get("type") == "token_count"]
    assert (
        c.tokens_before == token_counts[-1]["payload"]["info"]["last_token_usage"]["input_tokens"]
    )


def test_codex_older_compacted_record_has_only_a_message() -> None:
    records = [
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": "go"}},
        {"type": "compacted", "payload": {"message": "we went"}},
    ]
    (c,) = load_transcript(records, "codex").compactions
    assert (c.summary, c.after, c.index) == ("we went", None, 1)


def test_codex_encrypted_compaction_has_no_summary() -> None:
    enc = {"type": "compaction", "encrypted_content": "gAAA"}
    records = [
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": "go"}},
        {"type": "compacted", "payload": {"message": "", "replacement_history": [enc]}},
    ]
    (c,) = load_transcript(records, "codex").compactions
    assert c.summary is None and "encrypted" in c.note


def test_inspect_summary_compaction_is_placed_at_its_summary_message() -> None:
    log = json.loads((FIXTURES / "inspect_log.json").read_text())
    sample = log["samples"][0]
    event = next(e for e in sample["events"] if e["event"] == "compaction")
    where = next(
        i for i, m in enumerate(sample["messages"]) if m.get("metadata", {}).get("summary")
    )
    t = load_transcript(FIXTURES / "inspect_log.json")
    assert t.format == "inspect-ai"
    (c,) = t.compactions
    assert (c.kind, c.tokens_before, c.tokens_after) == (
        event["type"],
        event["tokens_before"],
        event["tokens_after"],
    )
    assert c.index == c.summary_index == where
    assert c.replaced == t.messages[:where]
    assert c.after is not None and c.after[-1] == t.messages[where]
    assert {m.role for m in c.after[:-1]} <= {"system", "user"}


def test_inspect_trim_compaction_is_placed_by_message_ids() -> None:
    sample = {
        "id": 1,
        "epoch": 1,
        "messages": [
            {"id": "a", "role": "user", "content": "q"},
            {"id": "b", "role": "assistant", "content": "r"},
            {"id": "c", "role": "user", "content": "q2"},
        ],
        "events": [
            {
                "event": "model",
                "input": [{"id": "a"}],
                "output": {"choices": [{"message": {"id": "b"}}]},
            },
            {"event": "compaction", "type": "trim", "tokens_before": 9},
        ],
    }
    t = load_transcript(sample)
    assert t.format == "inspect-ai"
    (c,) = t.compactions
    assert (c.kind, c.index, c.summary, len(c.replaced or ())) == ("trim", 2, None, 2)


def test_anthropic_compaction_block_and_responses_compaction_item() -> None:
    anthropic = {
        "messages": [
            {"role": "user", "content": "long task"},
            {"role": "assistant", "content": [{"type": "compaction", "content": "we did X"}]},
            {"role": "user", "content": "continue"},
        ],
        "system": "be brief",
    }
    t = load_transcript(anthropic)
    (c,) = t.compactions
    assert (c.source, c.summary, c.index) == ("anthropic.compaction", "we did X", 2)
    assert t.messages[c.index].role == "assistant"
    responses = {
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "compaction", "encrypted_content": "gAAA"},
        ]
    }
    (r,) = load_transcript(responses).compactions
    assert (r.source, r.summary, r.index) == ("openai.compaction", None, 1)


@pytest.mark.parametrize(
    ("records", "location"),
    [
        ([{"type": "response_item"}], "messages[0].payload"),
        (
            [{"type": "response_item", "payload": {"type": "message", "role": 7}}],
            "messages[0].payload.role",
        ),
        (
            [{"type": "response_item", "payload": {"type": "function_call", "name": "f"}}],
            "messages[0].payload.call_id",
        ),
        ([{"payload": {}}], "messages[0].type"),
    ],
)
def test_codex_errors_are_located(records: list[Any], location: str) -> None:
    with pytest.raises(TranscriptError) as info:
        load_transcript(records, "codex")
    assert info.value.location == location


def test_codex_error_in_a_file_names_the_line(tmp_path: Any) -> None:
    path = tmp_path / "rollout.jsonl"
    good = {"type": "session_meta", "payload": {"id": "x"}}
    bad = {"type": "response_item", "payload": {"type": "message", "role": "robot", "content": []}}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(TranscriptError) as info:
        load_transcript(path)
    assert info.value.location == "line 2: payload.role"
    assert "robot" in info.value.message


@pytest.mark.parametrize(
    ("message", "location"),
    [
        ({"role": "robot", "content": "x"}, "messages[0].role"),
        ({"role": "user", "content": [{"type": "hologram"}]}, "messages[0].content[0].type"),
        (
            {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "function": 3}]},
            "messages[0].tool_calls[0].function",
        ),
        (
            {"role": "assistant", "tool_calls": [{"id": "a", "function": "f", "arguments": "x"}]},
            "messages[0].tool_calls[0].arguments",
        ),
        ({"role": "tool", "content": "x"}, "messages[0].tool_call_id"),
    ],
)
def test_inspect_errors_are_located(message: dict[str, Any], location: str) -> None:
    with pytest.raises(TranscriptError) as info:
        load_transcript([message], "inspect-ai")
    assert info.value.location == location


def test_inspect_error_in_a_log_names_the_sample_path() -> None:
    log = json.loads((FIXTURES / "inspect_log.json").read_text())
    log["samples"][0]["messages"][3]["tool_call_id"] = 5
    with pytest.raises(TranscriptError) as info:
        load_transcript(log)
    assert info.value.location == "samples[0].messages[3].tool_call_id"


def test_otel_compaction_part_is_a_recorded_compaction() -> None:
    doc = json.loads((FIXTURES / "otel_genai_messages.json").read_text())
    where = next(i for i, m in enumerate(doc) if m["parts"][0]["type"] == "compaction")
    t = load_transcript(FIXTURES / "otel_genai_messages.json")
    assert t.format == "otel-genai"
    (c,) = t.compactions
    assert (c.source, c.index, c.summary) == (
        "otel.compaction",
        where,
        doc[where]["parts"][0]["content"],
    )
    assert c.replaced == t.messages[:where]


def test_atif_summarization_step_is_a_recorded_compaction() -> None:
    doc = json.loads((FIXTURES / "atif_trajectory.json").read_text())
    step = next(s for s in doc["steps"][1:] if s["source"] == "system")
    t = load_transcript(FIXTURES / "atif_trajectory.json")
    assert t.format == "atif"
    (c,) = t.compactions
    assert c.summary == step["message"] and c.summary_index == c.index
    assert t.messages[c.index].wire is step or t.messages[c.index].wire == step
    # The tool message of the agent step before it is in the replaced history.
    assert c.replaced is not None and any(m.role == "tool" for m in c.replaced)


@pytest.mark.parametrize(
    ("items", "fmt", "location"),
    [
        ([{"role": "user", "parts": [{"type": 3}]}], "otel-genai", "messages[0].parts[0].type"),
        (
            [{"role": "user", "parts": [{"type": "text"}]}],
            "otel-genai",
            "messages[0].parts[0].content",
        ),
        ([{"role": "user", "parts": "hi"}], "otel-genai", "messages[0].parts"),
        ([{"role": "robot", "parts": []}], "otel-genai", "messages[0].role"),
        (
            [{"role": "assistant", "parts": [{"type": "tool_call", "id": "a"}]}],
            "otel-genai",
            "messages[0].parts[0].name",
        ),
        ([{"step_id": 1, "source": "robot"}], "atif", "messages[0].source"),
        (
            [{"step_id": 1, "source": "agent", "tool_calls": [{"tool_call_id": "a"}]}],
            "atif",
            "messages[0].tool_calls[0].function_name",
        ),
        (
            [
                {
                    "step_id": 1,
                    "source": "agent",
                    "observation": {"results": [{"source_call_id": 4}]},
                }
            ],
            "atif",
            "messages[0].observation.results[0].source_call_id",
        ),
    ],
)
def test_otel_and_atif_errors_are_located(items: list[Any], fmt: str, location: str) -> None:
    with pytest.raises(TranscriptError) as info:
        load_transcript(items, fmt)
    assert info.value.location == location


def test_atif_error_in_a_file_names_the_step() -> None:
    doc = json.loads((FIXTURES / "atif_trajectory.json").read_text())
    doc["steps"][2]["tool_calls"][0]["function_name"] = None
    with pytest.raises(TranscriptError) as info:
        load_transcript(doc)
    assert info.value.location == "steps[2].tool_calls[0].function_name"


def _subagent_log(path: Any, summary: str, history: list[dict[str, Any]] | None = None) -> None:
    events = list(history or [])
    events.append(
        {
            "type": "user",
            "isSidechain": True,
            "sessionId": "s",
            "message": {"role": "user", "content": "Your task is to create a detailed summary."},
        }
    )
    events.append(
        {
            "type": "assistant",
            "isSidechain": True,
            "sessionId": "s",
            "message": {"role": "assistant", "content": [{"type": "text", "text": summary}]},
        }
    )
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


def test_compaction_subagent_log_recovers_history_from_the_parent_session(tmp_path: Any) -> None:
    parent = tmp_path / "7c1e.jsonl"
    parent.write_text((FIXTURES / "claude_code_compacted.jsonl").read_text())
    first = load_transcript(parent).compactions[0]
    assert first.summary is not None
    summary = first.summary.split("Summary:", 1)[1].strip()
    sub = tmp_path / "7c1e" / "subagents" / "agent-acompact-01.jsonl"
    _subagent_log(sub, summary)
    (c,) = load_transcript(sub).compactions
    assert c.source == "claude_code.compaction_subagent"
    assert c.summary == summary
    assert c.replaced == first.replaced
    assert "parent session file 7c1e.jsonl" in c.note


def test_compaction_subagent_log_without_a_parent_keeps_its_own_copy(tmp_path: Any) -> None:
    own = [
        {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "fix /a/b.py"}}
    ]
    sub = tmp_path / "x" / "subagents" / "agent-acompact-02.jsonl"
    _subagent_log(sub, "We fixed /a/b.py.", own)
    (c,) = load_transcript(sub).compactions
    assert c.replaced is not None and [m.text for m in c.replaced] == ["fix /a/b.py"]
    lone = tmp_path / "y" / "subagents" / "agent-acompact-03.jsonl"
    _subagent_log(lone, "nothing to match")
    (c,) = load_transcript(lone).compactions
    assert c.replaced is None and "neither in this file" in c.note


def _session_with_subagent(tmp_path: Any) -> tuple[Any, Any]:
    """A parent session file and its compaction sub-agent's log (no history of its own):
    (the parent's first compaction, the log's path)."""
    parent = tmp_path / "7c1e.jsonl"
    parent.write_text((FIXTURES / "claude_code_compacted.jsonl").read_text())
    first = load_transcript(parent).compactions[0]
    assert first.summary is not None and first.replaced
    sub = tmp_path / "7c1e" / "subagents" / "agent-acompact-01.jsonl"
    _subagent_log(sub, first.summary.split("Summary:", 1)[1].strip())
    return first, sub


def test_an_uploaded_subagent_log_never_reads_the_parent_session_from_disk(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 27, High 1: an upload's file name chose a file on the server to read
    first, sub = _session_with_subagent(tmp_path)
    assert load_transcript(sub).compactions[0].replaced == first.replaced  # the file leaks
    data = sub.read_bytes()
    monkeypatch.chdir(tmp_path)
    labels = [str(sub), "7c1e/subagents/agent-acompact-01.jsonl", "agent-acompact-01.jsonl"]
    for label in labels:
        for src in (data, data.decode(), load_transcript(sub).to_document()[0]):
            t = load_transcript(src, source=label)
            (c,) = t.compactions
            assert t.source == label
            assert c.source == "claude_code.compaction_subagent" and c.summary
            assert c.replaced is None, label
            assert "7c1e.jsonl" not in c.note and "only for a log read from a path" in c.note


def test_an_explicit_log_dir_finds_the_parent_session_and_the_label_chooses_no_folder(
    tmp_path: Any,
) -> None:
    first, sub = _session_with_subagent(tmp_path)
    data = sub.read_bytes()
    found = load_transcript(data, source="agent-acompact-01.jsonl", log_dir=sub.parent)
    assert found.compactions[0].replaced == first.replaced
    elsewhere = tmp_path / "other" / "subagents"
    elsewhere.mkdir(parents=True)
    (c,) = load_transcript(data, source=str(sub), log_dir=elsewhere).compactions
    assert c.replaced is None and "neither in this file" in c.note
    (c,) = load_transcript(data, source="<upload>", log_dir=sub.parent).compactions or (None,)
    assert c is None  # not named like a compaction sub-agent's log


def test_a_subagent_log_read_from_a_path_names_it_by_the_path_not_the_label(
    tmp_path: Any,
) -> None:
    first, sub = _session_with_subagent(tmp_path)
    (c,) = load_transcript(sub, source="upload.jsonl").compactions
    assert c.replaced == first.replaced
    assert load_transcript(str(sub)).compactions[0].replaced == first.replaced


def test_inspect_eval_zip_reads_its_first_sample(tmp_path: Any) -> None:
    import zipfile

    log = json.loads((FIXTURES / "inspect_log.json").read_text())
    path = tmp_path / "run.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "eval": log["eval"]}))
        archive.writestr("samples/1_epoch_1.json", json.dumps(log["samples"][0]))
    t = load_transcript(path)
    assert t.format == "inspect-ai" and len(t.messages) == len(log["samples"][0]["messages"])
    (c,) = t.compactions
    assert c.tokens_before == log["samples"][0]["events"][4]["tokens_before"]
    empty = tmp_path / "empty.eval"
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("header.json", "{}")
    with pytest.raises(TranscriptError) as info:
        load_transcript(empty)
    assert "samples/<id>_epoch_<n>.json" in info.value.message
