"""The adapter seam: one module per wire format, each a pair of pure functions.

Conventions every format module follows (so that dumping is lossless and conversion
reports what it cannot carry):

* ``Message.wire`` is the original wire object of a message. When one message was
  built from several wire items (Claude Code assistant events of one API message)
  it is a ``tuple`` of them.
* ``Message.wire_format`` is the format name.
* ``Message.meta`` may hold these keys (all optional, all read-only):

  ``part_blocks``
      a tuple aligned with ``parts``: the wire block (content part, tool call
      entry, item...) each part was read from, or ``None``. Several parts may share
      one block. :func:`WireFormat.encode` uses them for messages that changed:
      an opaque part is re-emitted as its block, and keys of a block that no part
      field carries (``cache_control``, ``signature``, ``citations``...) are kept.
  ``original``
      the wire object the message was read from (the same object as ``wire``).
      It survives ``dataclasses.replace(message, wire=None)``, so a changed
      message is rebuilt with the keys we do not read (ids, metadata).
  ``positions``
      the indices, in the container's item list, of the wire items of this message
      (several for a merged message). Used to put items back in their order.
  ``container_key``
      set on a system message that lives outside the message list (Anthropic's
      top-level ``system``, the Responses API ``instructions``): the key it goes
      back to.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactlens.model.messages import Message

#: meta keys shared by the format modules.
META_PART_BLOCKS = "part_blocks"
META_ORIGINAL = "original"
META_POSITIONS = "positions"
META_CONTAINER_KEY = "container_key"


@dataclass(frozen=True, slots=True)
class ConversionWarning:
    """Something a conversion could not carry over exactly.

    ``kind`` is ``dropped`` (left out), ``approximated`` (carried in another shape,
    for example as text) or ``moved`` (placed elsewhere in the document).
    ``message_indices`` are positions in the transcript being converted.
    """

    kind: str
    detail: str
    message_indices: tuple[int, ...] = ()

    def __str__(self) -> str:
        where = ""
        if self.message_indices:
            shown = ", ".join(str(i) for i in self.message_indices[:8])
            more = len(self.message_indices) - 8
            where = f" (messages {shown}{f' and {more} more' if more > 0 else ''})"
        return f"{self.kind}: {self.detail}{where}"


@dataclass(frozen=True, slots=True)
class Encoded:
    """The wire items a message becomes in one format, and what did not fit.

    ``notes`` are ``(kind, detail)`` pairs; see :class:`ConversionWarning`.
    """

    items: tuple[Any, ...]
    notes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Split:
    """What ``split`` returns: the messages and the items that are not messages.

    ``passthrough`` holds ``(position, item)`` pairs (for example Claude Code
    progress events) that dumping puts back at their positions. ``notes`` say what
    the reader could not load (they become :attr:`Transcript.warnings`).
    """

    messages: list[Message]
    passthrough: list[tuple[int, Any]] = field(default_factory=list)
    notes: list[ConversionWarning] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class WireFormat:
    """A wire format: how a list of wire objects becomes :class:`Message` objects and back.

    ``to_messages(items, source)`` converts a whole list (some formats need the
    context of earlier items, for example to pair legacy function calls) and raises
    :class:`~compactlens.model.errors.TranscriptError` naming ``source`` and a location such
    as ``messages[3].content[1].type`` on bad input. Every message it returns keeps
    its wire object in ``Message.wire``.
    ``from_message(message)`` builds a new wire object; callers re-emit
    ``message.wire`` instead when the message is unchanged.

    ``encode(message)`` is the complete form of ``from_message``: it may return
    several items (one Chat Completions tool message per tool result) and notes on
    what the format cannot express. ``split`` is like ``to_messages`` but also
    returns the items that are not messages (formats whose logs hold other events).
    ``message_keys`` and ``block_keys`` name the wire keys that message fields and
    parts carry; any other key is format-specific and is reported when a message is
    converted to another format.
    """

    name: str
    to_messages: Callable[[Sequence[Any], str], list[Message]]
    from_message: Callable[[Message], Mapping[str, Any]]
    description: str = ""
    encode: Callable[[Message], Encoded] | None = None
    split: Callable[[Sequence[Any], str], Split] | None = None
    message_keys: frozenset[str] = frozenset()
    block_keys: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def encode_message(self, message: Message) -> Encoded:
        """The wire items for ``message`` (built from its parts, ``wire`` is not used)."""
        if self.encode is not None:
            return self.encode(message)
        return Encoded((dict(self.from_message(message)),))

    def split_items(self, items: Sequence[Any], source: str = "<input>") -> Split:
        """Messages plus the non-message items with their positions."""
        if self.split is not None:
            return self.split(items, source)
        return Split(self.to_messages(items, source), [])
