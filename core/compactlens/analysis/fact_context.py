"""What a fact's context says about it: the facts of a whole conversation, with the minor
kind their surroundings give and near-duplicates folded.

A value can be noise because of where it stands, not what it is:

- a *listing*: one tool output that names many paths (``ls -R``, ``find``, ``git
  status`` of a big tree) is one machine listing, not dozens of facts. Its paths are
  minor (``listing``) unless the conversation names them somewhere else too (the
  agent's own words, a tool call's arguments, another output): a file the agent opened
  or edited stays a fact.
- a *dump*: in a text full of addresses and hex (a disassembly), a number with a
  one-letter unit (``57h``, ``5d``) is hex machine code, not hours or days.

And a path that is a piece of another path of the conversation (``../path/to/your``
beside ``../path/to/your.db``, ``src/lib`` beside ``/repo/src/lib/a.c``) is the same
fact said twice: only the longer one is counted (when it survives, so does the shorter).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from compactlens.analysis.fact_values import Fact, MinorKind, NoiseOf, minor_kind, noise_memo

#: Distinct paths one tool output must name to be a listing.
LISTING_PATHS = 12
#: Addresses and hex values one tool output must hold to be a dump.
DUMP_VALUES = 4
#: A number a unit pattern took for a quantity that a dump shows is hex: ``57h`` (the
#: assembler's suffix), ``5d`` (a byte), ``0040068d`` (an address).
_HEX_NUMBER = re.compile(r"^[0-9A-Fa-f]+h?$")


def _segment_minor(facts: Sequence[Fact], noise_of: NoiseOf) -> dict[str, MinorKind]:
    """The minor kind of each value of one message's facts its surroundings give: the
    paths of a listing in a tool output, the hex numbers of a dump in any part (an agent
    harness may hand tool output back as user text)."""
    out: dict[str, MinorKind] = {}
    paths = [f.value for f in facts if f.source == "tool_result" and f.kind == "path"]
    if len(paths) >= LISTING_PATHS:
        out.update(dict.fromkeys(paths, "listing"))
    for source in {f.source for f in facts}:
        part = [f for f in facts if f.source == source]
        if sum(1 for f in part if noise_of(f.value) in ("hash", "address")) >= DUMP_VALUES:
            for f in part:
                if f.kind == "quantity" and _HEX_NUMBER.match(f.value):
                    out[f.value] = "address"
    return out


def contextual_minor(
    own: Mapping[int, Sequence[Fact]], noise_of: NoiseOf | None = None
) -> dict[str, MinorKind]:
    """The minor kind context gives each value, from every message's own facts (by
    index): a value gets one only when every message naming it gives it one (the first).
    ``noise_of``: a :func:`noise_memo` (default: a new one)."""
    noise_of = noise_of or noise_memo()
    given: dict[str, MinorKind | None] = {}
    for i in sorted(own):
        segment = _segment_minor(own[i], noise_of)
        for fact in own[i]:
            kind = segment.get(fact.value)
            if kind is None:
                given[fact.value] = None
            else:
                given.setdefault(fact.value, kind)
    return {value: kind for value, kind in given.items() if kind is not None}


_SEPARATORS = "/\\"


def _path_pieces(paths: Iterable[str]) -> set[str]:
    """Every proper piece of each path that starts at its start or after a separator and
    ends at its end or before a separator or a dot (``src/a`` and ``a/b.py`` of
    ``/x/src/a/b.py``; never ``rc/a``)."""
    out: set[str] = set()
    for path in paths:
        starts = [0] + [j + 1 for j, c in enumerate(path) if c in _SEPARATORS]
        ends = [j for j, c in enumerate(path) if c in "/\\." and j] + [len(path)]
        for a in starts:
            for b in ends:
                if b > a and (a, b) != (0, len(path)) and path[b - 1] not in "/\\.":
                    out.add(path[a:b])
    return out


def with_context(
    facts: Sequence[Fact], own: Mapping[int, Sequence[Fact]], noise_of: NoiseOf | None = None
) -> tuple[Fact, ...]:
    """``facts`` with the minor kinds of :func:`contextual_minor`, a path that is a piece
    of a longer path of ``facts`` folded into it (see the module docstring). A path that
    matters is folded only into one that matters too (a folder the agent named is not
    lost in the files of a listing). ``noise_of``: a :func:`noise_memo` (default: a new
    one)."""
    noise_of = noise_of or noise_memo()
    minor = contextual_minor(own, noise_of)
    given = [
        fact
        if (kind := minor.get(fact.value)) is None or fact.kind == "latest_request"
        else replace(fact, minor=kind)
        for fact in facts
    ]
    paths = [f for f in given if f.kind == "path"]
    major_pieces = _path_pieces(f.value for f in paths if minor_kind(f, noise_of) is None)
    all_pieces = _path_pieces(f.value for f in paths)
    out: list[Fact] = []
    for fact in given:
        if fact.kind == "path":
            pieces = major_pieces if minor_kind(fact, noise_of) is None else all_pieces
            if fact.value in pieces:
                continue
        out.append(fact)
    return tuple(out)


__all__ = ["DUMP_VALUES", "LISTING_PATHS", "contextual_minor", "with_context"]
