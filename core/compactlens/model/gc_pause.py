"""Pause the cyclic garbage collector while a call builds many small objects.

Reading and indexing a transcript creates a few objects per message (the message,
its parts, groups, links). At tens of thousands of messages those allocations
trigger full collections that walk the caller's whole heap, their parsed JSON
included, which costs more than the work itself (about 40% of a 10,000-turn
compaction; an analysis, which extracts a fact object per value, pays the same). The
engine and the analysis build no reference cycles, so :func:`gc_paused` turns the
collector off for the duration of one call and turns it back on only if it was on:
a caller that disabled it keeps it disabled, and nested or concurrent calls leave
it as they found it once the outermost call returns.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block if it is enabled; restore it after."""
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
