"""What a message looks like on screen, as plain data (no Streamlit here).

:func:`message_card` turns a :class:`~compactlens.Message` into a :class:`MessageCard`:
who speaks (role, label, colour, icon), its token count, and one :class:`Block` per part
(text, dimmed reasoning, a tool call with its name and arguments, a tool result folded
with its size, media and provider notes). ``components/messages.py`` draws it; nothing
here is HTML, and every transcript string stays a plain string for the renderer to show
inert.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from compactlens import Message, MessageIndex
from compactlens.model import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    summary_form,
)
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.style.theme import ROLE_ICONS, role_badge

BlockKind = Literal["text", "reasoning", "tool_call", "tool_result", "note"]

ROLE_LABELS = {
    "system": "System",
    "developer": "Developer",
    "user": "User",
    "assistant": "Assistant",
    "tool": "Tool",
}
#: How a compaction summary's card names it (beside its role): the agent that wrote it.
SUMMARY_AUTHORS = {
    "compactlens": "compactlens",
    "claude_code": "Claude Code",
    "codex": "Codex",
    "langchain": "LangChain",
    "gemini_cli": "Gemini CLI",
    "openhands": "OpenHands",
}


def card_label(message: Message) -> str:
    """The role's label; for a compaction summary, ``User · compaction summary (Claude Code)``."""
    role = str(message.role)
    label = ROLE_LABELS.get(role, role)
    form = summary_form(message)
    if form is None:
        return label
    return f"{label} · compaction summary ({SUMMARY_AUTHORS.get(form, form)})"


@dataclass(frozen=True, slots=True)
class Block:
    """One part of a message as shown.

    ``title`` is the fold's label (tool calls, results, reasoning), built from our own
    words plus transcript strings (tool name, call id) that the renderer escapes;
    ``body`` is transcript text, shown verbatim; ``language`` the code highlighting of
    the body (``json`` for arguments that parse).
    """

    kind: BlockKind
    body: str
    title: str = ""
    language: str | None = None
    chars: int = 0
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class MessageCard:
    """A message ready to draw: who speaks, where, how many tokens, and its blocks."""

    position: int | None
    role: str
    label: str
    badge: str
    icon: str
    name: str
    tokens: int | None
    blocks: tuple[Block, ...]


def size(chars: int) -> str:
    """``1,234 characters`` (one character: ``1 character``)."""
    return f"{num(chars)} character{'s' if chars != 1 else ''}"


def arguments(raw: str) -> tuple[str, str | None]:
    """Tool-call arguments pretty-printed as JSON when they parse, else as given."""
    try:
        return json.dumps(json.loads(raw), indent=2, ensure_ascii=False), "json"
    except (ValueError, TypeError):
        return raw, None


#: Argument names that say what a tool call does, most telling first.
KEY_ARGUMENTS = (
    "command",
    "cmd",
    "path",
    "file_path",
    "filepath",
    "filename",
    "file",
    "query",
    "pattern",
    "url",
    "q",
    "search",
    "target",
    "code",
    "text",
    "input",
    # a terminal session's input (Codex write_stdin: the keys typed, often a control
    # character such as Ctrl-C, say less than which session they went to)
    "session_id",
)
#: Argument names shown with a word before their value (a bare number says nothing).
NAMED_ARGUMENTS = {"session_id": "session"}
#: Characters of a key argument shown in a title.
KEY_CHARS = 80
#: Argument names of the file a tool call works on.
PATH_ARGUMENTS = ("path", "file_path", "filepath", "filename", "file")


def printable(text: str, keep: str = "\n\t") -> str:
    """``text`` with every character a screen cannot draw (a control character such as
    Ctrl-C, a zero-width format character) as its escape, ``\\x03``; the characters in
    ``keep`` stay as they are."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def inline(text: str) -> str:
    """``text`` on one line that a screen can draw: runs of whitespace become one space,
    every other character that is not printable its escape (:func:`printable`)."""
    return printable(" ".join(text.split()), keep="")


def key_argument(raw: str) -> str:
    """The argument that says what a tool call does (its command, path, query...), on one
    line and cut to :data:`KEY_CHARS`; empty when the arguments name none."""
    try:
        data = json.loads(raw)
    except (ValueError, TypeError):
        return ""
    if not isinstance(data, dict):
        return ""
    key = next((k for k in KEY_ARGUMENTS if data.get(k)), None)
    value: object = data[key] if key is not None else None
    path = next((data[k] for k in PATH_ARGUMENTS if isinstance(data.get(k), str) and data[k]), None)
    if key in ("command", "cmd") and path and isinstance(value, str) and len(value.split()) == 1:
        # An editor's sub-command (str_replace_editor: create, view, str_replace): the
        # file it works on is what matters, after the sub-command.
        value = f"{value} {path}"
    if value is None:
        texts = [v for v in data.values() if isinstance(v, str) and v.strip()]
        value = texts[0] if len(texts) == 1 else None
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    if not isinstance(value, str | int | float):
        return ""
    line = inline(str(value))
    if key in NAMED_ARGUMENTS:
        line = f"{NAMED_ARGUMENTS[key]} {line}"
    return line if len(line) <= KEY_CHARS else line[: KEY_CHARS - 1] + "…"


def call_label(name: str, raw_arguments: str) -> str:
    """``bash: git log --oneline`` (the tool and what it was asked), or the name alone."""
    key = key_argument(raw_arguments)
    return f"{name}: {key}" if key else name


def call_names(index: MessageIndex) -> dict[str, str]:
    """Each call id's label: the tool and what it was asked (``bash: git log``)."""
    out = {link.call_id: link.name for link in index.links}
    for m in index.messages:
        for p in m.parts:
            if isinstance(p, ToolCallPart) and p.id:
                out[p.id] = call_label(p.name, p.arguments)
    return out


def _call(part: ToolCallPart) -> Block:
    body, lang = arguments(part.arguments)
    return Block(
        "tool_call",
        body,
        title=f"Tool call · {call_label(part.name, part.arguments)}",
        language=lang,
        chars=len(part.arguments),
    )


def _result(part: ToolResultPart, names: Mapping[str, str]) -> Block:
    name = names.get(part.call_id) or part.name or ""
    error = " · error" if part.is_error else ""
    of = f" of {name}" if name else f" of call {part.call_id}"
    return Block(
        "tool_result",
        part.output,
        title=f"Result{of}{error} · {size(len(part.output))}",
        chars=len(part.output),
        is_error=part.is_error,
    )


def _note(part: object) -> Block | None:
    if isinstance(part, MediaPart):
        what = part.filename or part.url or "inline data"
        return Block("note", f"Media ({part.media_type}): {what[:200]} (not loaded)")
    if isinstance(part, OpaquePart):
        return Block(
            "note", f"Opaque provider content ({part.provider} {part.type}), carried as is"
        )
    if isinstance(part, ApprovalRequestPart):
        return Block("note", f"Approval requested for {part.name or part.call_id or part.id}")
    if isinstance(part, ApprovalResponsePart):
        verdict = "granted" if part.approved else "denied"
        return Block("note", f"Approval {verdict}" + (f": {part.reason}" if part.reason else ""))
    return None


def block(part: object, names: Mapping[str, str]) -> Block | None:
    """The block of one part (None for a part kind we do not show)."""
    if isinstance(part, TextPart):
        return Block("text", part.text, chars=len(part.text))
    if isinstance(part, ReasoningPart):
        return Block(
            "reasoning",
            part.text,
            title=f"Reasoning · {size(len(part.text))}",
            chars=len(part.text),
        )
    if isinstance(part, ToolCallPart):
        return _call(part)
    if isinstance(part, ToolResultPart):
        return _result(part, names)
    return _note(part)


def message_card(
    message: Message,
    position: int | None = None,
    tokens: int | None = None,
    call_names: Mapping[str, str] | None = None,
) -> MessageCard:
    """The card of one message; ``call_names`` (call id -> tool name) names results."""
    names = call_names or {}
    blocks = tuple(b for b in (block(p, names) for p in message.parts) if b is not None)
    role = str(message.role)
    return MessageCard(
        position=position,
        role=role,
        label=card_label(message),
        badge=role_badge(role),
        icon=ROLE_ICONS.get(role, ":material/chat:"),
        name=message.name or "",
        tokens=tokens,
        blocks=blocks,
    )


def prose(text: str) -> str:
    """Markdown that shows ``text`` literally, line by line (no formatting, links, HTML
    or directives): each line escaped, the breaks kept as hard line breaks."""
    return "  \n".join(md_escape(line) for line in text.splitlines())
