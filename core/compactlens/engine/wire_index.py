"""The index straight from OpenAI Chat wire dicts, in two tight passes (the common shape only).

``apply_compaction`` on wire dicts used to read every dict into a :class:`Message`
(``formats.openai_chat.to_messages``) and then read every message again: once to group it
(``index._scan``) and once to measure it (``message_sizes``). For the common shape of Chat
Completions messages this module reads each dict once, builds the very message
``to_messages`` builds, and notes what grouping needs (a small code per message, its calls,
its result id) with its text length and UTF-8 size; a second pass over those notes groups
them by the rules of ``index._scan`` (``compactlens`` grouping), and the shared
``index.finish_scan`` and :meth:`MessageIndex.assemble` close the index.

The common shape: a list of ``dict`` whose role is system, developer, user, assistant or
tool; content a string or null (a tool message: a string); ``name`` a string or null;
well-formed function calls, on assistant messages only; reasoning text on assistant
messages only; no legacy ``function_call``. Anything else (content part lists, legacy
functions, the ``maf`` grouping...) gives None and the general path runs, so errors keep
their locations. ``tests/engine/test_fast_path.py`` checks, on generated transcripts, that
both paths build equal indexes and messages and give byte-identical results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compactlens.engine.index import (
    CallFields,
    Grouping,
    GroupKind,
    MessageIndex,
    ScanState,
    close_link,
    finish_scan,
    open_links,
)
from compactlens.formats import OPENAI_CHAT
from compactlens.formats.base import META_PART_BLOCKS
from compactlens.formats.caller import CallerMessages
from compactlens.formats.openai_chat import NAME, simple_call_fields
from compactlens.model.messages import (
    EMPTY_META,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    text_summary_form,
)
from compactlens.model.tokens import (
    CharEstimator,
    Tokenizer,
    count_messages,
    estimate_from_lengths,
    utf8_size,
)

# What the grouping pass needs to know of a message (see _Notes.codes).
_SYSTEM, _USER, _SUMMARY, _REASONING_ONLY, _ASSISTANT, _TOOL = range(6)
_INSTRUCTIONS = ("system", "developer")
_REASONING_FLAG = ("reasoning",)


class _Notes:
    """What the reading pass learned: per message a code, length and size; the calls of
    each assistant message that has some; the result id of each tool message; the
    messages that hold reasoning."""

    __slots__ = ("calls", "codes", "lengths", "reasoning", "result_ids", "sizes")

    def __init__(self) -> None:
        self.codes: list[int] = []
        self.lengths: list[int] = []
        self.sizes: list[int] = []
        self.calls: dict[int, CallFields] = {}
        self.result_ids: dict[int, str] = {}
        self.reasoning: set[int] = set()


def _size(text: str) -> int:
    return len(text) if text.isascii() else utf8_size(text)


def _calls(value: Any) -> CallFields | None:
    """The fields of a ``tool_calls`` list when every call is well formed, else None (no
    part is built: :class:`_WireMessage` builds them if its parts are read)."""
    if type(value) is not list:
        return None
    out: list[str] = []
    for call in value:
        got = simple_call_fields(call)
        if got is None:
            return None
        out.extend(got)
    return tuple(out)


def _reasoning(d: dict[str, Any]) -> str | None:
    """The reasoning text ``to_messages`` reads (``""`` for none), None when the dict needs
    the general reader (a ``reasoning_content`` that is not a string)."""
    first = d.get("reasoning_content")
    if first is not None and type(first) is not str:
        return None
    if first:
        return first
    second = d.get("reasoning")
    return second if type(second) is str else ""


def _read(items: Sequence[Any]) -> tuple[list[Message], _Notes] | None:
    """Lazy messages and notes for dicts of the common shape (module docstring), else None.

    Dicts whose keys are only the usual ones (a result's ``role``, ``content`` and
    ``tool_call_id``; a message's ``role``, ``content`` and ``tool_calls``) skip the
    lookups of fields they cannot hold (:func:`_read_other` reads the rest)."""
    out: list[Message] = []
    notes = _Notes()
    codes, lengths, sizes = notes.codes, notes.lengths, notes.sizes
    result_ids, calls_of = notes.result_ids, notes.calls
    add_code, add_length, add_size, add_message = (
        codes.append,
        lengths.append,
        sizes.append,
        out.append,
    )
    new, set_wire, set_origin, set_format, set_calls = _new, *_WIRE_SLOTS
    calls: CallFields
    tool_keys, plain_keys, no_calls = _TOOL_KEYS, _PLAIN_KEYS, _NO_CALLS
    for i, d in enumerate(items):
        if type(d) is not dict:
            return None
        keys = d.keys()
        role = d.get("role")
        calls = no_calls
        if type(role) is not str:
            return None
        if role == "tool" and keys <= tool_keys:
            content = d.get("content")
            call_id = d.get("tool_call_id")
            if type(content) is not str or type(call_id) is not str:
                return None
            # len("tool") + a newline + the output
            add_length(len(content) + 5)
            add_size((len(content) if content.isascii() else utf8_size(content)) + 5)
            result_ids[i] = call_id
            add_code(_TOOL)
        elif keys <= plain_keys:
            content = d.get("content")
            if (content is not None and type(content) is not str) or not (
                role == "assistant" or role == "user" or role in _INSTRUCTIONS
            ):
                return None
            chars = size = len(role)
            if content:
                chars += len(content) + 1
                size += (len(content) if content.isascii() else utf8_size(content)) + 1
            raw_calls = d.get("tool_calls")
            if raw_calls is not None:
                got = _calls(raw_calls) if role == "assistant" else None
                if got is None:
                    return None
                if got:
                    chars, size = _measure_calls(got, chars, size)
                    calls_of[i] = calls = got
            add_code(_code(role, content, "", bool(raw_calls)))
            add_length(chars)
            add_size(size)
        else:
            other = _read_other(d, i, notes)
            if other is None:
                return None
            calls = other
        m = new(_WireMessage)  # only the wire fields now (see _WireMessage)
        set_wire(m, d)
        set_origin(m, d)
        set_format(m, NAME)
        set_calls(m, calls)
        add_message(m)
    return out, notes


def _read_other(d: dict[str, Any], i: int, notes: _Notes) -> CallFields | None:
    """Note dict ``i`` of any key set (names, reasoning...) in ``notes`` and give its calls,
    or None when it is not of the common shape."""
    if d.get("function_call") is not None:
        return None
    role = d.get("role")
    content = d.get("content")
    name = d.get("name")
    if (content is not None and type(content) is not str) or (
        name is not None and type(name) is not str
    ):
        return None
    reasoning = _reasoning(d)
    if reasoning is None or (reasoning and role != "assistant"):
        return None
    chars = len(role) if type(role) is str else 0
    size = chars
    calls: CallFields = _NO_CALLS
    if name:
        chars += len(name) + 1
        size += _size(name) + 1
    if role == "tool":
        call_id = d.get("tool_call_id")
        if type(call_id) is not str or type(content) is not str or d.get("tool_calls") is not None:
            return None
        chars += len(content) + 1
        size += _size(content) + 1
        notes.result_ids[i] = call_id
        code = _TOOL
    elif role == "assistant" or role == "user" or role in _INSTRUCTIONS:
        if reasoning:
            chars += len(reasoning) + 1
            size += _size(reasoning) + 1
            notes.reasoning.add(i)
        if content:
            chars += len(content) + 1
            size += _size(content) + 1
        raw_calls = d.get("tool_calls")
        if raw_calls is not None:
            got = _calls(raw_calls) if role == "assistant" else None
            if got is None:
                return None
            if got:
                chars, size = _measure_calls(got, chars, size)
                notes.calls[i] = calls = got
        code = _code(role, content, reasoning, bool(raw_calls))
    else:
        return None
    notes.codes.append(code)
    notes.lengths.append(chars)
    notes.sizes.append(size)
    return calls


def _measure_calls(calls: CallFields, chars: int, size: int) -> tuple[int, int]:
    """``chars`` and ``size`` plus the counted text of ``calls`` (``name arguments``)."""
    for k in range(1, len(calls), 3):
        name, args = calls[k], calls[k + 1]
        if args:
            chars += len(name) + len(args) + 2
            size += len(name) if name.isascii() else utf8_size(name)
            size += (len(args) if args.isascii() else utf8_size(args)) + 2
        else:
            chars += len(name) + 1
            size += (len(name) if name.isascii() else utf8_size(name)) + 1
    return chars, size


def _code(role: str, content: str | None, reasoning: str, calls: bool) -> int:
    """The grouping code of a system, user or assistant message (see ``index._scan``)."""
    if role in _INSTRUCTIONS:
        return _SYSTEM
    # Message.is_summary: the first part is a text in a summary form.
    if not reasoning and content and text_summary_form(content) is not None:
        return _SUMMARY
    if role == "user":
        return _USER
    if reasoning and not content and not calls:
        return _REASONING_ONLY
    return _ASSISTANT


def _fields(d: dict[str, Any], calls: CallFields) -> tuple[Part, ...]:
    """The parts ``to_messages`` reads from a dict of the common shape: reasoning, text,
    then the parts of ``calls`` (read by :func:`_read`); a tool message's result."""
    content = d.get("content")
    if d["role"] == "tool":
        return (ToolResultPart(d["tool_call_id"], d["content"], name=d.get("name")),)
    parts: list[Part] = []
    reasoning = _reasoning(d)
    if reasoning:
        parts.append(ReasoningPart(reasoning))
    if content:
        parts.append(TextPart(content))
    parts.extend(
        ToolCallPart(calls[k], calls[k + 1], calls[k + 2]) for k in range(0, len(calls), 3)
    )
    return tuple(parts)


class _WireMessage(Message):
    """The :class:`Message` of a Chat dict of the common shape, read on first use.

    Only ``wire``, ``origin``, ``wire_format`` (and the calls :func:`_read` already built)
    are set when it is made; reading any other field reads the dict (as ``to_messages``
    does) and keeps the result, so messages that nothing looks at (most of what truncation
    drops) cost no parts. It compares and hashes as the eager message it stands for. The
    dict is the caller's, like the unchanged messages of ``result.messages``: change it
    after the call and a message not yet read shows the change.
    """

    __slots__ = ("_calls",)

    def __getattr__(self, field_name: str) -> Any:
        if field_name not in _LAZY_FIELDS:
            raise AttributeError(field_name)
        calls = self._calls
        if calls is None:  # read meanwhile (another thread): the fields are set
            return object.__getattribute__(self, field_name)
        d = self.wire
        parts = _fields(d, calls)
        _set(self, "role", d["role"])
        _set(self, "name", d.get("name"))
        _set(self, "parts", parts)
        if calls:  # part blocks: none for reasoning and text, each call's own dict
            blocks = (None,) * (len(parts) - len(calls) // 3) + tuple(d["tool_calls"])
            _set(self, "meta", {META_PART_BLOCKS: blocks})
        else:
            _set(self, "meta", EMPTY_META)
        _set(self, "_calls", None)  # read: see wire_tool_results
        return object.__getattribute__(self, field_name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return (self.role, self.parts, self.name) == (other.role, other.parts, other.name)

    __hash__ = Message.__hash__

    def __repr__(self) -> str:  # as the eager message's (the dataclass repr names the class)
        return "Message" + Message.__repr__(self).removeprefix(type(self).__qualname__)


def wire_tool_results(
    messages: Sequence[Message],
) -> tuple[dict[str, str], list[tuple[str, str | None, str]]] | None:
    """The calls (id to name, the last call of an id winning) and the results (call id,
    name, output, in order) of ``messages``, read from their dicts without building any
    part; None unless every message is one of this module's and not read yet (a message
    that was read shows its parts, which a later change of its dict does not reach)."""
    names: dict[str, str] = {}
    results: list[tuple[str, str | None, str]] = []
    for m in messages:
        if type(m) is not _WireMessage:
            return None
        calls = getattr(m, "_calls", None)  # unset on a copy, None once read
        if calls is None:
            return None
        d = m.wire
        if calls:
            names.update(zip(calls[::3], calls[1::3], strict=True))
        elif d["role"] == "tool":
            results.append((d["tool_call_id"], d.get("name"), d["content"]))
    return names, results


_NO_CALLS: CallFields = ()
_LAZY_FIELDS = frozenset({"role", "parts", "name", "meta"})
_new = object.__new__
_set = object.__setattr__
#: The keys of a plain tool result and of a plain message (see :func:`_read`).
_TOOL_KEYS = frozenset({"role", "content", "tool_call_id"})
_PLAIN_KEYS = frozenset({"role", "content", "tool_calls"})
#: Slot setters of what :func:`_read` sets on a new message (a third cheaper than
#: ``object.__setattr__``).
_WIRE_SLOTS = (
    Message.__dict__["wire"].__set__,
    Message.__dict__["origin"].__set__,
    Message.__dict__["wire_format"].__set__,
    _WireMessage.__dict__["_calls"].__set__,
)


def _group(notes: _Notes) -> ScanState:
    """``index._scan``'s grouping (``compactlens`` rules) over the notes of the common shape:
    reasoning-only messages join the next assistant message, a tool result joins the group
    of its call, each other message starts a group; calls open links by id."""
    raw = ScanState(group_of=[0] * len(notes.codes))
    held: list[int] = []  # reasoning-only messages waiting for the next assistant message
    calls_of, result_ids = notes.calls, notes.result_ids
    kind_of = {
        _SYSTEM: GroupKind.SYSTEM,
        _USER: GroupKind.USER,
        _SUMMARY: GroupKind.SUMMARY,
        _ASSISTANT: GroupKind.ASSISTANT_TEXT,
    }

    new_group = raw.new_group

    def flush() -> None:
        if held:
            raw.flags[new_group(GroupKind.ASSISTANT_TEXT, list(held))] = {"reasoning"}
            held.clear()

    for i, code in enumerate(notes.codes):
        if code == _REASONING_ONLY:
            held.append(i)
            continue
        if code == _TOOL:
            flush()
            _attach_result(raw, i, result_ids[i])
            continue
        calls = calls_of.get(i)
        kind = kind_of[code]
        if calls and code == _ASSISTANT:
            kind = GroupKind.TOOL_CALL
        if held and code == _ASSISTANT:
            gid = new_group(kind, [*held, i])
            held.clear()
            raw.flags[gid] = {"reasoning"}
        else:
            flush()
            gid = new_group(kind, [i])
        if calls:
            open_links(raw, i, gid, calls)
    flush()
    for i in notes.reasoning:
        raw.message_flags[i] = _REASONING_FLAG
    raw.message_calls.update(calls_of)
    return raw


def _attach_result(raw: ScanState, i: int, call_id: str) -> None:
    """Put tool message ``i`` in the group of the newest call of ``call_id`` still waiting
    for a result, or in an orphan group of its own."""
    link_no = close_link(raw, i, call_id)
    if link_no >= 0:
        gid = raw.link_group[link_no]
        raw.members[gid].append(i)
        raw.group_of[i] = gid
        return
    raw.flags[raw.new_group(GroupKind.TOOL_CALL, [i])] = {"orphan"}


def wire_index(
    items: Sequence[Any], tokenizer: Tokenizer | None, grouping: Grouping = "compactlens"
) -> tuple[CallerMessages, MessageIndex] | None:
    """The caller's messages and their index, read from OpenAI Chat dicts of the common
    shape in one pass; None when the general path must run (see the module docstring)."""
    if (
        grouping != "compactlens"
        or isinstance(items, str | bytes)
        or not isinstance(items, Sequence)
    ):
        return None
    read = _read(items)
    if read is None:
        return None
    messages, notes = read
    msgs = tuple(messages)
    scan = finish_scan(_group(notes))
    tok: Tokenizer = tokenizer if tokenizer is not None else CharEstimator()
    if type(tok) is CharEstimator:
        counts = estimate_from_lengths(tok, notes.lengths)
    else:
        counts = count_messages(msgs, tok)
    index = MessageIndex.assemble(msgs, scan, counts, notes.sizes, tok)
    return CallerMessages(msgs, tuple(items), "wire", OPENAI_CHAT), index
