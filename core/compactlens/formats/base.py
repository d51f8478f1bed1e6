"""The adapter seam: one module per wire format, each a pair of pure functions."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactlens.messages import Message


@dataclass(frozen=True, slots=True)
class WireFormat:
    """A wire format: how a list of wire objects becomes :class:`Message` objects and back.

    ``to_messages(items, source)`` converts a whole list (some formats need the
    context of earlier items, for example to pair legacy function calls) and raises
    :class:`~compactlens.errors.TranscriptError` naming ``source`` and a location such
    as ``messages[3].content[1].type`` on bad input. Every message it returns keeps
    its wire object in ``Message.wire``.
    ``from_message(message)`` builds a new wire object; callers re-emit
    ``message.wire`` instead when the message is unchanged.
    """

    name: str
    to_messages: Callable[[Sequence[Any], str], list[Message]]
    from_message: Callable[[Message], Mapping[str, Any]]
    description: str = ""
