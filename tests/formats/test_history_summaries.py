"""Compaction summaries inside histories are recorded compactions, never user requests
(issue 29, second bullet).

Agents put their own compaction summary into the history as a message: Claude Code's
"This session is being continued from a previous conversation...", Codex's handoff
text, LangChain's "Here is a summary of the conversation to date:", Gemini CLI's
``<state_snapshot>``, OpenHands' condensation summaries. When the marker record that
usually sits beside it is missing (an export, a converted file, a format without one)
the summary would otherwise read as the user's latest request. The fixtures in
``tests/fixtures/summaries`` are ours, one per format; the expected positions are read
from the fixtures' records, not from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from formats_support import FIXTURES, REPO_ROOT

from compactlens import Message, dump_transcript, load_transcript
from compactlens.analysis import postmortem
from compactlens.analysis.facts import latest_user_request
from compactlens.engine import latest_request_index
from compactlens.engine.index import GroupKind, MessageIndex
from compactlens.engine.wire_index import wire_index
from compactlens.model import (
    META_SUMMARY_FORM,
    SUMMARY_PREFIX,
    TextPart,
    ToolResultPart,
    summary_form,
    text_summary_form,
)

SUMMARIES = REPO_ROOT / "tests" / "fixtures" / "summaries"

#: fixture -> (format, summary form, text only the summary record holds)
CASES: dict[str, tuple[str, str, str]] = {
    "claude_code_export.jsonl": ("claude-code", "claude_code", "This session is being continued"),
    "codex_handoff.jsonl": ("codex", "codex", "Another language model started"),
    "langchain_summarized.json": ("langchain", "langchain", "Here is a summary of the"),
    "gemini_cli_compressed.jsonl": ("gemini-cli", "gemini_cli", "<state_snapshot>"),
    "openhands_sdk_summary.json": ("openhands-sdk", "openhands", "CondensationSummaryEvent"),
    "openhands_v0_condensed.json": ("openhands-events", "openhands", '"condense"'),
}


def _records(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines()]
    doc = json.loads(text)
    return list(doc["history"] if isinstance(doc, dict) else doc)


def _summary_records(path: Path, marker: str) -> list[int]:
    """Positions of the records holding the summary (by their raw JSON text)."""
    return [i for i, r in enumerate(_records(path)) if marker in json.dumps(r)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_summary_message_is_a_recorded_compaction(name: str) -> None:
    fmt, form, marker = CASES[name]
    path = SUMMARIES / name
    t = load_transcript(path)
    assert t.format == fmt and t.problems == ()
    summaries = [i for i, m in enumerate(t.messages) if m.is_summary]
    assert len(summaries) == len(_summary_records(path, marker)) == 1
    assert [summary_form(t.messages[i]) for i in summaries] == [form]
    assert [(c.source, c.index, c.summary_index) for c in t.compactions] == [
        (f"{form}.summary_message", i, i) for i in summaries
    ]
    (c,) = t.compactions
    assert c.summary == t.messages[summaries[0]].text
    # The replaced history is the file's messages before the summary, when there are any
    # besides instructions.
    before = [m for m in t.messages[: summaries[0]] if not m.is_system]
    assert (c.replaced is not None) == bool(before)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_summary_is_never_the_latest_request(name: str) -> None:
    t = load_transcript(SUMMARIES / name)
    real = [
        i
        for i, m in enumerate(t.messages)
        if m.role == "user" and not m.is_summary and not m.tool_results and m.text.strip()
    ]
    expected = real[-1] if real else None
    assert latest_request_index(t.messages) == expected
    assert latest_user_request(t.messages) == expected
    latest = t.messages[expected] if expected is not None else None
    assert latest is None or not latest.is_summary


@pytest.mark.parametrize("name", sorted(CASES))
def test_summaries_are_summary_groups_and_files_write_back(name: str) -> None:
    path = SUMMARIES / name
    t = load_transcript(path)
    index = MessageIndex.build(t.messages)
    kinds = {i: index.groups[index.group_of[i]].kind for i in range(len(t.messages))}
    assert {i for i, k in kinds.items() if k is GroupKind.SUMMARY} == {
        i for i, m in enumerate(t.messages) if m.is_summary
    }
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        assert dump_transcript(t) == text
    else:
        assert json.loads(dump_transcript(t)) == json.loads(text)


@pytest.mark.parametrize("name", sorted(CASES))
def test_post_mortem_measures_each_summary(name: str) -> None:
    t = load_transcript(SUMMARIES / name)
    report = postmortem(t)
    assert len(report.compactions) == len(t.compactions) == 1
    measured = report.compactions[0]
    assert measured.recorded.source.endswith(".summary_message")
    assert (measured.agent is not None) == (measured.recorded.replaced is not None)


def test_a_marker_beside_the_summary_is_not_counted_twice() -> None:
    """Claude Code's compact_boundary + isCompactSummary pair stays one compaction."""
    path = FIXTURES / "claude_code_compacted.jsonl"
    records = _records(path)
    boundaries = [r for r in records if r.get("subtype") == "compact_boundary"]
    t = load_transcript(path)
    assert [c.source for c in t.compactions] == ["claude_code.compact_boundary"] * len(boundaries)
    assert [c.summary_index for c in t.compactions] == [
        i for i, m in enumerate(t.messages) if m.is_summary
    ]


def test_summary_forms_by_text_role_and_mark() -> None:
    assert text_summary_form(SUMMARY_PREFIX + "x") == "compactlens"
    assert text_summary_form("\n  <state_snapshot>\n</state_snapshot>") == "gemini_cli"
    bridge = "You were originally given instructions from a user over one or more turns."
    assert text_summary_form(bridge + " Here were the user messages:") == "codex"
    # The phrase quoted inside a real request is not a summary.
    quoted = "Why does Claude say 'This session is being continued from a previous conversation'?"
    assert text_summary_form(quoted) is None
    text = "Here is a summary of the conversation to date:\n\nok"
    assert summary_form(Message(role="user", parts=(TextPart(text),))) == "langchain"
    assert summary_form(Message(role="tool", parts=(ToolResultPart("c", text),))) is None
    assert summary_form(Message(role="developer", parts=(TextPart(text),))) is None
    marked = Message(
        role="user", parts=(TextPart("forgot 40 events"),), meta={META_SUMMARY_FORM: "openhands"}
    )
    assert summary_form(marked) == "openhands"
    assert summary_form(Message(role="user", parts=(TextPart("forgot 40 events"),))) is None


def test_the_chat_fast_path_groups_summaries_like_the_general_path() -> None:
    chat = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Fix the rounding."},
        {"role": "user", "content": "Here is a summary of the conversation to date:\n\nDone."},
        {"role": "assistant", "content": "Continuing."},
    ]
    fast = wire_index(chat, None)
    assert fast is not None
    messages, index = fast
    general = MessageIndex.build(list(messages.messages))
    assert [g.kind for g in index.groups] == [g.kind for g in general.groups]
    assert GroupKind.SUMMARY in {g.kind for g in index.groups}
    assert latest_request_index(list(messages.messages)) == 1


def test_an_openhands_v0_condensation_action_is_a_recorded_compaction() -> None:
    """V0 logs keep the condenser's ``condensation`` action (the summary observation is
    made when the view is built, not stored): forgotten ids, summary and its offset."""
    path = SUMMARIES / "openhands_v0_condensation.json"
    events = _records(path)
    action = next(e for e in events if e.get("action") == "condensation")
    args = action["args"]
    gone = set(range(args["forgotten_events_start_id"], args["forgotten_events_end_id"] + 1))
    t = load_transcript(path)
    (c,) = t.compactions
    assert (c.source, c.kind, c.summary) == ("openhands.condensation", "summary", args["summary"])
    before = [m for m in t.messages if m.wire["id"] < action["id"]]
    assert c.replaced == tuple(before)
    kept = [m for m in before if m.wire["id"] not in gone]
    summary = Message(role="user", parts=(TextPart(args["summary"]),))
    offset = args["summary_offset"]
    assert c.after == (*kept[:offset], summary, *kept[offset:])
    assert not any(m.is_summary for m in t.messages)
    assert latest_request_index(t.messages) == 1
