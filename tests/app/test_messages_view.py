"""Conversations that read like conversations: the message view data, literal prose,
and the Transcript and Diff pages drawing chat messages with inert text."""

from __future__ import annotations

import json
import re

from apptest_helpers import XSS_TEXT, go, no_exceptions
from hypothesis import given
from hypothesis import strategies as hs

from compactlens import CharEstimator, MessageIndex
from compactlens.formats import from_caller
from compactlens_inspector.style.theme import ROLE_ICONS, ROLES
from compactlens_inspector.views.message import (
    call_label,
    call_names,
    inline,
    message_card,
    prose,
)
from compactlens_inspector.views.run import render_message

_UNESCAPE = re.compile(r"\\(.)")
#: A character Markdown would act on, not preceded by a backslash.
_ACTIVE = re.compile(r"(?<!\\)[<>\[\]()*_`#!|~:&]")


def _messages(raw: list[dict[str, object]]):
    return from_caller(raw).messages


def test_each_role_has_its_own_label_icon_and_colour() -> None:
    raw = [
        {"role": "system", "content": "Rules."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
    ]
    cards = [message_card(m, i) for i, m in enumerate(_messages(raw))]
    assert [c.label for c in cards] == ["System", "User", "Assistant"]
    assert len({c.icon for c in cards}) == 3 and len({c.badge for c in cards}) == 3
    assert {c.icon for c in cards} <= set(ROLE_ICONS.values())
    assert [c.badge for c in cards] == [ROLES[r].badge for r in ("system", "user", "assistant")]


def test_a_compaction_summary_is_labelled_as_one_with_its_author() -> None:
    raw = [
        {"role": "user", "content": "Fix the rounding."},
        {
            "role": "user",
            "content": "This session is being continued from a previous conversation.",
        },
        {"role": "user", "content": "Previous conversation summary:\nRounding fixed."},
    ]
    labels = [message_card(m, i).label for i, m in enumerate(_messages(raw))]
    assert labels == [
        "User",
        "User · compaction summary (Claude Code)",
        "User · compaction summary (compactlens)",
    ]


def test_tool_call_and_result_become_folded_cards_with_name_and_size() -> None:
    raw = [
        {"role": "user", "content": "read it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path":"a.py","n":2}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "x" * 1234},
    ]
    msgs = _messages(raw)
    call = message_card(msgs[1], 1).blocks
    assert [b.kind for b in call] == ["tool_call"]
    # the tool and what it was asked, not the opaque call id
    assert "read_file: a.py" in call[0].title and "c1" not in call[0].title
    assert call[0].language == "json" and '"path": "a.py"' in call[0].body  # pretty-printed
    result = message_card(msgs[2], 2, call_names={"c1": "read_file"}).blocks[0]
    assert result.kind == "tool_result" and result.chars == 1234
    assert "1,234 characters" in result.title and "of read_file" in result.title


def test_arguments_that_are_not_json_are_shown_as_given() -> None:
    raw = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "ok"},
    ]
    block = message_card(_messages(raw)[0]).blocks[0]
    assert block.body == "{oops" and block.language is None


def test_reasoning_is_its_own_block() -> None:
    raw = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "answer", "reasoning_content": "thinking hard"},
    ]
    kinds = [b.kind for b in message_card(_messages(raw)[1]).blocks]
    assert "reasoning" in kinds and "text" in kinds


@given(hs.text(max_size=200))
def test_prose_shows_every_line_literally_and_leaves_nothing_active(text: str) -> None:
    shown = prose(text)
    expected = [" ".join(line.split()) for line in text.splitlines()]
    # What shows: the escapes resolved, the invisible word joiners (which keep bare URLs
    # and :icon: shortcodes from forming) dropped.
    assert _UNESCAPE.sub(r"\1", shown).replace("\u2060", "") == "  \n".join(expected)
    assert not _ACTIVE.search(shown)


def test_transcript_page_draws_chat_messages_by_role(app) -> None:
    at = go(app(sample="coding_agent").run(), "transcript")
    no_exceptions(at)
    bubbles = at.get("chat_message")
    assert bubbles, "no chat messages on the Transcript page"
    avatars = {b.proto.avatar for b in bubbles}
    assert {ROLE_ICONS["user"], ROLE_ICONS["assistant"], ROLE_ICONS["tool"]} <= {
        a if a.startswith(":material") else f":material/{a}:" for a in avatars
    }
    labels = [e.label for e in at.expander]
    assert any("Tool call" in label and "read\\_file" in label for label in labels)
    assert any(label.startswith("Result") and "characters" in label for label in labels)


def test_hostile_text_is_inert_on_transcript_and_diff(app) -> None:
    at = go(app(sample="hostile").run(), "transcript")
    no_exceptions(at)
    assert all(not getattr(m.proto, "allow_html", False) for m in at.markdown)
    assert not any("pwned" in str(h.proto) for h in at.get("html"))
    at = go(at, "diff")
    no_exceptions(at)
    if at.toggle(key="diff_changed_only").value:
        at.toggle(key="diff_changed_only").set_value(False).run()
    no_exceptions(at)
    shown = [m.value for m in at.markdown if "pwned" in m.value]
    assert shown, "the diff does not show the hostile message"
    for value in shown:
        assert not _ACTIVE.search(value.replace(":gray-badge[", "").replace(":blue-badge[", ""))
    assert all(not getattr(m.proto, "allow_html", False) for m in at.markdown)
    assert XSS_TEXT not in "\n".join(m.value for m in at.markdown)


def test_an_editor_tool_call_shows_the_file_it_works_on() -> None:
    """OpenHands' str_replace_editor: the sub-command alone ("create") does not say what
    the call did; the path does."""
    args = json.dumps({"command": "create", "path": "/workspace/app/models.py", "file_text": "x"})
    assert call_label("str_replace_editor", args) == (
        "str_replace_editor: create /workspace/app/models.py"
    )
    # A shell command is what matters by itself.
    assert call_label("execute_bash", json.dumps({"command": "ls -R /workspace"})) == (
        "execute_bash: ls -R /workspace"
    )


def test_a_tool_result_as_text_names_its_call_not_the_raw_id() -> None:
    """The message source views (the Analysis page's fact source, the report's diff) open a
    tool result with the call it answers ("result of bash: ls src"), never the raw call id
    the review saw ("<- tooluse_L7mJ…:")."""
    raw = [
        {"role": "user", "content": "list"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "tooluse_L7mJTNe5QYyKBsAFG8eA0Q",
                    "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps({"command": "ls src"})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "tooluse_L7mJTNe5QYyKBsAFG8eA0Q", "content": "a.py"},
    ]
    index = MessageIndex.build(_messages(raw), CharEstimator())
    text = render_message(index.messages[2], 2, call_names(index))
    assert "<- result of bash: ls src: a.py" in text
    assert "tooluse_" not in text
    # Without the calls: the tool's name when the result carries it, never the id.
    assert "tooluse_" not in render_message(index.messages[2], 2)


def test_a_terminal_input_call_shows_its_session_not_the_keys_typed() -> None:
    """Codex write_stdin (review 4 #15): Ctrl-C drew as a box ("write_stdin: " U+0003) and
    empty input as nothing; the session the keys went to is what the call is about."""
    ctrl_c = json.dumps({"session_id": 73925, "chars": "\u0003"})
    assert call_label("write_stdin", ctrl_c) == "write_stdin: session 73925"
    empty = json.dumps({"session_id": 73925, "chars": "", "yield_time_ms": 1000})
    assert call_label("write_stdin", empty) == "write_stdin: session 73925"
    # A command still comes first where a call has one.
    both = json.dumps({"cmd": "tail -f app.log", "session_id": 7})
    assert call_label("exec_command", both) == "exec_command: tail -f app.log"


def test_a_control_character_in_a_shown_argument_is_escaped() -> None:
    assert call_label("send_keys", json.dumps({"text": "y\u0003\u200b"})) == (
        "send_keys: y\\x03\\u200b"
    )
    m = from_caller(
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "k", "arguments": "\u0003"},
                    }
                ],
            }
        ]
    ).messages[0]
    assert render_message(m).splitlines()[1] == "-> k(\\x03)"


@given(hs.text(max_size=40))
def test_a_shown_argument_is_one_printable_line(text: str) -> None:
    for label in (inline(text), call_label("t", json.dumps({"text": text}))):
        assert label.isprintable() and "\n" not in label
