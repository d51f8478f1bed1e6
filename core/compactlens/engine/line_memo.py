"""Lines a strategy already built over one index, kept for the next plan over it.

Re-planning over the same :class:`~compactlens.engine.index.MessageIndex` (the inspector
on every parameter change, the cannot-fit search over variants) collapses the same
tool-call groups into the same lines again; building them (folding every output) was
most of the reference pipeline's planning. A line depends only on the group's original
messages, the formatter settings and the index's tokenizer, so the index keeps the
lines it has seen (:attr:`MessageIndex.lines`): the message and its token count by
``(strategy kind, group id, settings)``.

It is a cache, not part of the index's value: it is left out of equality and repr,
and a copy or a pickle of the index starts with an empty one. It holds at most
``max_chars`` characters of text (the index gives the transcript's UTF-8 size); a line
that would pass that starts it over, so changing the settings again and again keeps
it bounded.

Several threads may plan over one index at once (the inspector's sessions share it):
each operation is a single dict operation, so a reader never sees half a line, and a
line stored twice by two threads is the same line; the character count may then be off
by that line until the memo starts over.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from compactlens.model.messages import Message


class LineMemo:
    """Built lines by key, up to ``max_chars`` characters of text (see the module)."""

    __slots__ = ("_chars", "_entries", "max_chars")

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._entries: dict[Hashable, tuple[Message, int]] = {}
        self._chars = 0

    def get(self, key: Hashable) -> tuple[Message, int] | None:
        """The message and tokens stored under ``key``, or None."""
        return self._entries.get(key)

    def put(self, key: Hashable, message: Message, tokens: int, chars: int) -> None:
        """Keep ``message`` (``tokens`` tokens, ``chars`` characters of text) under ``key``;
        start over when full."""
        if chars > self.max_chars:
            return
        if self._chars + chars > self.max_chars:
            self._entries.clear()
            self._chars = 0
        self._entries[key] = (message, tokens)
        self._chars += chars

    def __len__(self) -> int:
        return len(self._entries)

    def messages(self) -> list[Message]:
        """The lines held now (a cache that sizes a plan's result leaves them out: they
        are counted with the index)."""
        held = tuple(self._entries.values())  # one C-level copy: safe beside a put
        return [message for message, _ in held]

    @property
    def chars(self) -> int:
        """Characters of text held now (a cache that sizes the index reads it to see
        that the index grew)."""
        return self._chars

    def __reduce__(self) -> tuple[Any, ...]:  # a pickle or a copy starts empty
        return (LineMemo, (self.max_chars,))

    def __repr__(self) -> str:
        return f"LineMemo({len(self._entries)} lines, {self._chars:,} chars)"
