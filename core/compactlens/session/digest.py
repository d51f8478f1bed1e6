"""An incremental :func:`~compactlens.session.checkpoints.prefix_digest`.

A session hashes the history it is given and what it sends on every model call. The
canonical JSON of a list of messages is ``"[" + ",".join(item) + "]"``, so the SHA-256 of
a prefix is the SHA-256 state after ``"[" + item_0 + "," + ... + item_{k-1}`` fed
``"]"``. :class:`PrefixDigest` keeps a few such states (at the lengths it was asked for
last) and the messages they cover; a longer history that starts with the same messages
is hashed from the nearest kept state, so only the appended messages are serialised.

The same messages are recognised by identity first, then by equality (messages are
frozen and compare by role, name and parts, exactly what their canonical JSON holds), so
an edit or a rewind inside the prefix is seen and hashed again from the last state
before it. The digest is byte for byte the one :func:`prefix_digest` gives: checkpoints
written by either read the same. One known gap: Python's equality holds ``True == 1 ==
1.0`` where JSON writes them apart, so a caller that rewrites a value inside the prefix
to an equal one of another type (a tool argument ``true`` edited to ``1``) keeps the old
digest. Readers parse the same text to the same types, so it takes such an edit.

Memory kept: at most :data:`MAX_STATES` hasher states (a few hundred bytes each, never
the JSON text) and the messages last hashed, to compare the next call's with: the
references only when the caller passes the same message objects again, otherwise at
most one parsed copy of the history. :meth:`clear` releases them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from compactlens.model.errors import ConfigError
from compactlens.model.messages import Message
from compactlens.session.checkpoints import canonical_message_json, digest_bytes

#: How many hasher states a :class:`PrefixDigest` keeps (the lengths asked for last).
MAX_STATES = 4


class PrefixDigest:
    """``digest(messages, length)`` equals ``prefix_digest(messages[:length])``, hashing
    only what changed since the last call; see the module docstring."""

    def __init__(self) -> None:
        self._seen: list[Message] = []
        # length -> SHA-256 state over "[" + the first `length` items joined by ","
        # (least recently used first).
        self._states: dict[int, Any] = {}

    def clear(self) -> None:
        """Forget the kept messages and states."""
        self._seen = []
        self._states = {}

    def _common(self, messages: Sequence[Message]) -> int:
        """How many leading messages are the same as the ones hashed before."""
        seen = self._seen
        m = min(len(seen), len(messages))
        head = list(messages[:m])
        if (seen if m == len(seen) else seen[:m]) == head:  # identity first, then ==
            return m
        for i in range(m):
            a, b = seen[i], head[i]
            if a is not b and a != b:
                return i
        return m

    def digest(self, messages: Sequence[Message], length: int | None = None) -> str:
        """SHA-256 (hex) of the canonical JSON of ``messages[:length]`` (all of them when
        ``length`` is None)."""
        n = len(messages) if length is None else length
        if not 0 <= n <= len(messages):
            raise ConfigError(f"length {n} is outside 0..{len(messages)}")
        same = self._common(messages)
        states = self._states
        for key in [k for k in states if k > same]:
            del states[key]
        start = max((k for k in states if k <= n), default=0)
        if start:
            hasher = states.pop(start)
            states[start] = hasher  # most recently used
            hasher = hasher.copy()
        else:
            hasher = hashlib.sha256(b"[")
        for i in range(start, n):
            if i:
                hasher.update(b",")
            hasher.update(digest_bytes(canonical_message_json(messages[i])))
        if n and n not in states:
            states[n] = hasher.copy()
            while len(states) > MAX_STATES:
                del states[next(iter(states))]
        # The messages now behind the kept states: those of this call, as far as they
        # are known to match (identity next time when the caller passes them again).
        self._seen = list(messages[: max(n, same)])
        hasher.update(b"]")
        hexdigest: str = hasher.hexdigest()
        return hexdigest


__all__ = ["MAX_STATES", "PrefixDigest"]
