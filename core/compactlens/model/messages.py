"""The canonical, immutable message model.

Every wire format is converted to :class:`Message` objects made of small typed
parts. A message keeps the wire object it came from (``wire``) and the name of
that format (``wire_format``) so that an unchanged message can be emitted again
byte-for-byte. Nothing here mutates anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeAlias

from compactlens.model.errors import UsageError

Role: TypeAlias = Literal["system", "developer", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "developer", "user", "assistant", "tool")


class _EmptyMeta(Mapping[str, Any]):
    """An empty, immutable mapping; one instance is shared (and copied and pickled as itself)."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "{}"

    def __reduce__(self) -> str:
        return "EMPTY_META"


#: The shared, read-only ``meta`` of messages that have none (no dict per message).
EMPTY_META: Mapping[str, Any] = _EmptyMeta()

#: Prefix that marks a summary message produced by compaction.
SUMMARY_PREFIX = "Previous conversation summary:\n"

#: The form compactlens's own summary messages have (:data:`SUMMARY_PREFIX`).
COMPACTLENS_FORM = "compactlens"

#: How the agents we read open the compaction summary they put into the history as a
#: message, (form, opening): Claude Code's continuation message, Codex's handoff text
#: (``compact/summary_prefix.md``) and its older history bridge, LangChain's
#: ``SummarizationMiddleware`` and Gemini CLI's compressed ``<state_snapshot>``.
SUMMARY_OPENINGS: tuple[tuple[str, str], ...] = (
    ("claude_code", "This session is being continued from a previous conversation"),
    ("codex", "Another language model started to solve this problem"),
    ("codex", "You were originally given instructions from a user over one or more turns"),
    ("langchain", "Here is a summary of the conversation to date:"),
    ("gemini_cli", "<state_snapshot>"),
)

#: Meta key a reader sets (to the form's name) on a message that is a compaction summary by
#: the kind of record it was read from, not by its text (OpenHands condensation summaries).
META_SUMMARY_FORM = "summary_form"

#: Leading characters of a text looked at to recognise a summary opening.
_HEAD = 200


@dataclass(frozen=True, slots=True)
class TextPart:
    """Plain text."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ReasoningPart:
    """Model reasoning ("thinking") in clear text."""

    text: str
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A request by the assistant to run a tool. ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str = ""
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """The result of a tool call, linked to it by ``call_id``."""

    call_id: str
    output: str
    name: str | None = None
    is_error: bool = False
    kind: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True)
class ApprovalRequestPart:
    """A request for a human to approve a tool call before it runs."""

    id: str
    call_id: str | None = None
    name: str | None = None
    kind: Literal["approval_request"] = "approval_request"


@dataclass(frozen=True, slots=True)
class ApprovalResponsePart:
    """A human's answer to an :class:`ApprovalRequestPart`."""

    id: str
    approved: bool
    reason: str | None = None
    kind: Literal["approval_response"] = "approval_response"


@dataclass(frozen=True, slots=True)
class MediaPart:
    """An image, audio clip or file, by URL or inline data (``data`` is not decoded)."""

    media_type: str
    url: str | None = None
    data: str | None = None
    filename: str | None = None
    kind: Literal["media"] = "media"


@dataclass(frozen=True, slots=True)
class OpaquePart:
    """Provider content we carry but cannot read (encrypted reasoning, server tool blocks...)."""

    provider: str
    type: str
    text: str = ""
    kind: Literal["opaque"] = "opaque"


Part: TypeAlias = (
    TextPart
    | ReasoningPart
    | ToolCallPart
    | ToolResultPart
    | ApprovalRequestPart
    | ApprovalResponsePart
    | MediaPart
    | OpaquePart
)


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation.

    ``wire`` is the original wire object (never modified, never compared) and
    ``wire_format`` the name of its format, for example ``"openai-chat"``.
    ``meta`` holds provider fields that have no part of their own. ``origin`` is the
    wire object the message was read from; it stays when a strategy clears ``wire``
    to have the message rebuilt, so unknown keys survive the rebuild.
    """

    role: Role
    parts: tuple[Part, ...] = ()
    name: str | None = None
    wire: Any = field(default=None, compare=False, repr=False)
    wire_format: str | None = field(default=None, compare=False)
    meta: Mapping[str, Any] = field(default_factory=lambda: EMPTY_META, compare=False, repr=False)
    origin: Any = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        """All text parts joined by newlines (no reasoning, no tool content)."""
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolCallPart))

    @property
    def tool_results(self) -> tuple[ToolResultPart, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolResultPart))

    @property
    def is_system(self) -> bool:
        """System and developer messages are both instructions."""
        return self.role in ("system", "developer")

    @property
    def is_reasoning_only(self) -> bool:
        """An assistant message that holds only reasoning (clear or opaque reasoning).

        Other opaque content (hosted tool calls and results, usage, errors) is not
        reasoning: see :func:`is_opaque_reasoning`.
        """
        return (
            self.role == "assistant"
            and bool(self.parts)
            and all(is_reasoning_part(p) for p in self.parts)
        )

    @property
    def has_reasoning(self) -> bool:
        """True when any part is reasoning (clear or opaque), beside whatever else."""
        return any(is_reasoning_part(p) for p in self.parts)

    @property
    def hosted_tool_parts(self) -> tuple[OpaquePart, ...]:
        """The hosted (provider-executed) tool calls and results among the parts."""
        return tuple(p for p in self.parts if isinstance(p, OpaquePart) and is_hosted_tool(p))

    @property
    def has_media(self) -> bool:
        return any(isinstance(p, MediaPart) for p in self.parts)

    @property
    def has_opaque(self) -> bool:
        return any(isinstance(p, OpaquePart) for p in self.parts)

    @property
    def is_summary(self) -> bool:
        """True for a compaction summary: one compactlens inserted (by its prefix) or one
        an agent wrote into its own history (see :func:`summary_form`)."""
        return summary_form(self) is not None


def text_summary_form(text: str) -> str | None:
    """The summary form a message text opens with (:data:`SUMMARY_PREFIX`, else one of
    :data:`SUMMARY_OPENINGS` after leading whitespace), or None."""
    if text.startswith(SUMMARY_PREFIX):
        return COMPACTLENS_FORM
    head = text[:_HEAD].lstrip()
    for form, opening in SUMMARY_OPENINGS:
        if head.startswith(opening):
            return form
    return None


def summary_form(message: Message) -> str | None:
    """Which compaction summary ``message`` is, or None when it is not one.

    A system, user or assistant message is a summary when a reader marked it so
    (:data:`META_SUMMARY_FORM`) or when its first part is a text in one of the known forms
    (:func:`text_summary_form`): ``"compactlens"``, ``"claude_code"``, ``"codex"``,
    ``"langchain"``, ``"gemini_cli"``, or the reader's mark (``"openhands"``).
    """
    if message.role not in ("user", "assistant", "system"):
        return None
    marked = message.meta.get(META_SUMMARY_FORM)
    if isinstance(marked, str) and marked:
        return marked
    first = message.parts[0] if message.parts else None
    if not isinstance(first, TextPart):
        return None
    return text_summary_form(first.text)


#: Opaque part types that carry reasoning (encrypted, redacted or protected thinking).
OPAQUE_REASONING_TYPES = frozenset(
    {"encrypted_reasoning", "protected_data", "redacted-reasoning", "redacted_thinking"}
)


def is_opaque_reasoning(part: Part) -> bool:
    """An opaque part that is reasoning the provider keeps to itself."""
    return isinstance(part, OpaquePart) and part.type in OPAQUE_REASONING_TYPES


def is_reasoning_part(part: Part) -> bool:
    """Clear or opaque reasoning."""
    return isinstance(part, ReasoningPart) or is_opaque_reasoning(part)


def is_hosted_tool_call(part: Part) -> bool:
    """An opaque part that is a hosted (provider-executed) tool call.

    By type name: ``*_call`` (``mcp_call``, ``code_interpreter_tool_call``,
    ``shell_tool_call``...), ``*_tool_use`` (``server_tool_use``, ``mcp_tool_use``),
    ``tool-call`` (AI SDK, provider-executed) and ``mcp_list_tools``.
    """
    if not isinstance(part, OpaquePart):
        return False
    kind = part.type
    return (
        kind.endswith("_call")
        or kind.endswith("_tool_use")
        or kind in ("tool-call", "mcp_list_tools")
    )


def is_hosted_tool_result(part: Part) -> bool:
    """An opaque part that is the result of a hosted tool call.

    By type name: ``*_tool_result`` (``mcp_server_tool_result``,
    ``web_search_tool_result``...), ``*_output`` (``shell_command_output``) and
    ``tool-result`` (AI SDK, provider-executed).
    """
    if not isinstance(part, OpaquePart):
        return False
    kind = part.type
    return kind.endswith("_tool_result") or kind.endswith("_output") or kind == "tool-result"


def is_hosted_tool(part: Part) -> bool:
    """A hosted tool call or result."""
    return is_hosted_tool_call(part) or is_hosted_tool_result(part)


def text_message(role: Role, text: str, *, name: str | None = None) -> Message:
    """``Message(role=role, parts=(TextPart(text),), name=name)``, its slots set directly
    (a collapse builds one per tool-call group: ten thousand at 10,000 turns, where the
    frozen dataclasses' ``__init__`` cost about four times as much)."""
    part: TextPart = _new(TextPart)
    _TEXT_SLOTS[0](part, text)
    _TEXT_SLOTS[1](part, "text")
    message: Message = _new(Message)
    s_role, s_parts, s_name, s_wire, s_format, s_meta, s_origin = _MESSAGE_SLOTS
    s_role(message, role)
    s_parts(message, (part,))
    s_name(message, name)
    s_wire(message, None)
    s_format(message, None)
    s_meta(message, EMPTY_META)
    s_origin(message, None)
    return message


_new = object.__new__


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    """The slot setters of ``cls``'s fields ``names``, which must be all its fields in order
    (a field added later must be set in :func:`text_message` too, or importing fails here)."""
    if tuple(f.name for f in fields(cls)) != names:
        raise UsageError(f"{cls.__name__}'s fields changed: update text_message")
    return tuple(cls.__dict__[n].__set__ for n in names)


_TEXT_SLOTS = _slot_setters(TextPart, ("text", "kind"))
_MESSAGE_SLOTS = _slot_setters(
    Message, ("role", "parts", "name", "wire", "wire_format", "meta", "origin")
)


def part_text(part: Part) -> str:
    """The text of a part as counted and searched: content, tool names and arguments."""
    if isinstance(part, TextPart | ReasoningPart):
        return part.text
    if isinstance(part, ToolCallPart):
        return f"{part.name} {part.arguments}" if part.arguments else part.name
    if isinstance(part, ToolResultPart):
        return part.output
    if isinstance(part, ApprovalRequestPart):
        return part.name or ""
    if isinstance(part, ApprovalResponsePart):
        return part.reason or ""
    if isinstance(part, MediaPart):
        return part.url or part.filename or ""
    return part.text


def message_text(message: Message) -> str:
    """The text of a whole message as counted: role, name, then each part's text."""
    pieces: list[str] = [message.role]
    if message.name:
        pieces.append(message.name)
    pieces.extend(part_text(p) for p in message.parts)
    return "\n".join(pieces)
