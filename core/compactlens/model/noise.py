"""Values that look like facts but are noise to a reader: the one place that says which.

An extracted value (a fact of :mod:`compactlens.analysis.facts`, an identifier an
extractive summary lists) may be something no stakeholder would miss if it were gone:

- ``timestamp``: a date or time as logs and tools print them (``2026-02-12``,
  ``2024-04-11T02:00:01.874Z``, ``16:42:11``, ``Apr 9``);
- ``hash``: hex digest text (``8e41c07``, a git commit; ``4883c480``, a machine-code blob);
- ``address``: a memory address or a disassembler's name for one (``0x400663``,
  ``00400663``, ``DAT_0040074c``, ``s_-Warm_Up-_00400741``);
- ``percentage``: a bare percentage (``3%``, as a test runner prints its progress);
- ``placeholder``: an example value from documentation (``../path/to/your.db``,
  ``your_api_key``, ``...-placeholder``);
- ``redaction``: a redaction marker or a secret (``[REDACTED]``, ``****``,
  ``dev-only-secret-...``), never worth quoting.

:func:`noise_kind` answers from the value alone; the fact check adds what the value's
kind and source say (a percentage is noise in tool output, not in what a person wrote).
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias

NoiseKind: TypeAlias = Literal[
    "timestamp", "hash", "address", "percentage", "placeholder", "redaction"
]

_MONTH_ABBR = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
_TIMESTAMP = re.compile(
    # an ISO date, with an optional time and zone
    r"^\d{4}-[01]\d-[0-3]\d(?:[T ][0-2]\d:[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?$"
    # a clock time: 16:42, 02:00:01.874Z, 9:30 pm
    r"|^\d\d?:[0-5]\d(?::[0-5]\d(?:\.\d+)?)?Z?(?:\s?[AaPp]\.?[Mm]\.?)?$"
    # an abbreviated month and day with no year, as logs print them (Apr 9)
    rf"|^{_MONTH_ABBR}\.? \d\d?$"
)
# Hex digest text: a git commit (8e41c07), a content hash, with an optional algorithm;
# six hex characters only when they start with a digit (4889c7, not abc123).
_HASH = re.compile(
    r"^(?:(?:sha1|sha256|sha512|md5):)?(?:[0-9a-f]{7,128}|[0-9A-F]{7,128}|\d[0-9a-f]{5}|\d[0-9A-F]{5})$"
)
_DISASSEMBLER_PREFIXES = (
    r"(?:DAT|FUN|LAB|PTR|UNK|BYTE|WORD|DWORD|QWORD|s|u|ds|thunk_FUN|switchD|caseD|"
    r"sub|loc|off|byte|word|dword|qword|unk|stru|asc|j)"
)
_ADDRESS = re.compile(
    r"^0[xX][0-9a-fA-F]{4,16}$"
    r"|^00[0-9a-fA-F]{4,14}$"
    rf"|^{_DISASSEMBLER_PREFIXES}_(?:.*_)?(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{{4,16}}$"
)
_PERCENTAGE = re.compile(r"^\d+(?:\.\d+)?\s?%$")
_PLACEHOLDER = re.compile(
    r"(?:^|[/\\])path[/\\]to(?:[/\\]|$)|placeholder|changeme|change[-_]me|replace[-_]me",
    re.IGNORECASE,
)
#: ``your_api_key``, ``<your-token>``: only in a value that is not a file (``your-guide.md``).
_YOUR = re.compile(r"(?:^|[<_.-])your(?:[-_.][A-Za-z]|>|$)", re.IGNORECASE)
_REDACTION = re.compile(
    r"redact|^\W*(?:\*{3,}|x{4,}|█+)\W*$|^<(?:secret|hidden|removed)>$", re.IGNORECASE
)
_SECRET = re.compile(r"secret|passw(?:or)?d|api[-_]?key|private[-_]key", re.IGNORECASE)
_FILE_LIKE = re.compile(r"[/\\]|\.[A-Za-z]{1,5}$")


def noise_kind(value: str) -> NoiseKind | None:
    """The kind of noise ``value`` is (see the module docstring), None for a value a
    reader may need."""
    if _REDACTION.search(value):
        return "redaction"
    if _SECRET.search(value) and not _FILE_LIKE.search(value):
        return "redaction"  # a secret, or a placeholder for one: never worth quoting
    if _PLACEHOLDER.search(value) or (_YOUR.search(value) and not _FILE_LIKE.search(value)):
        return "placeholder"
    if _TIMESTAMP.match(value):
        return "timestamp"
    if _ADDRESS.match(value):
        return "address"
    if _HASH.match(value):
        digest = value.rpartition(":")[2]
        if any(c.isdigit() for c in digest) and any(c.isalpha() for c in digest):
            return "hash"
    if _PERCENTAGE.match(value):
        return "percentage"
    return None


__all__ = ["NoiseKind", "noise_kind"]
