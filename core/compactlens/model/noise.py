"""Values that look like facts but are noise to a reader: the one place that says which.

An extracted value (a fact of :mod:`compactlens.analysis.facts`, an identifier an
extractive summary lists) may be something no stakeholder would miss if it were gone:

- ``timestamp``: a date or time as logs and tools print them (``2026-02-12``,
  ``2024-04-11T02:00:01.874Z``, ``16:42:11``, ``Apr 9``, ``20270101``);
- ``hash``: hex digest text (``8e41c07``, a git commit; ``4883c480``, a machine-code blob)
  and encoded blobs (a base64 signature cut at a line's end, ``EvkLCkgICxABGAIqQGvS…``);
- ``api_id``: an id an API minted for a message, a call or a response (``msg_01P75r…``,
  ``toolu_bdrk_01M6PW…``, ``call_Xy12…``, ``chatcmpl-9a…``, ``resp_68…``);
- ``address``: a memory address or a disassembler's name for one (``0x400663``,
  ``00400663``, ``DAT_0040074c``, ``s_-Warm_Up-_00400741``);
- ``percentage``: a bare percentage (``3%``, as a test runner prints its progress);
- ``placeholder``: an example value from documentation or a test (``../path/to/your.db``,
  ``your_api_key``, ``...-placeholder``, ``abc123``, ``1234567890abcdefghij``);
- ``redaction``: a redaction marker or a secret (``[REDACTED]``, ``****``,
  ``dev-only-secret-...``), never worth quoting;
- ``number``: a bare run of 10 or more digits with no unit (``9971519902956727284``, a
  process handle in a ``ps`` listing; ``1752395122``, a counter or an epoch second).
  The fact check sets it apart only where a tool printed it: a number a person wrote (an
  order or an account number) still counts.

:func:`noise_kind` answers from the value alone; the fact check adds what the value's
kind and source say (a percentage is noise in tool output, not in what a person wrote).
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias

NoiseKind: TypeAlias = Literal[
    "timestamp", "hash", "api_id", "address", "percentage", "placeholder", "redaction", "number"
]

_MONTH_ABBR = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
_TIMESTAMP = re.compile(
    # an ISO date, with an optional time and zone
    r"^\d{4}-[01]\d-[0-3]\d(?:[T ][0-2]\d:[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?$"
    # a clock time: 16:42, 02:00:01.874Z, 9:30 pm
    r"|^\d\d?:[0-5]\d(?::[0-5]\d(?:\.\d+)?)?Z?(?:\s?[AaPp]\.?[Mm]\.?)?$"
    # an abbreviated month and day with no year, as logs print them (Apr 9)
    rf"|^{_MONTH_ABBR}\.? \d\d?$"
    # a compact calendar date, as model names and build stamps carry it (20270101)
    r"|^(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])$"
)
# An id an API minted: its object prefix (a message, a tool call, a completion, a
# response, a function call, a reasoning item; Bedrock's and Vertex's variants), then
# at least 16 letters and digits.
_API_ID = re.compile(
    r"^(?:(?:msg|toolu|call|resp|fc|rs|run|thread|asst|req|evt)_(?:(?:bdrk|vrtx)_)?"
    r"|chatcmpl-)[A-Za-z0-9]{16,}$"
)
# An encoded blob: 24 or more base64 characters with no word break, mixing upper and
# lower case (each at least a fifth of the letters) and digits; a camelCase name has
# few capitals and a word has no digits.
_BLOB = re.compile(r"^[A-Za-z0-9+/]{24,}={0,2}$")
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
#: A bare run of digits this long or longer is a machine number (a handle, a counter).
LONG_NUMBER_DIGITS = 10
_LONG_NUMBER = re.compile(rf"^\d{{{LONG_NUMBER_DIGITS},}}$")
_PLACEHOLDER = re.compile(
    r"(?:^|[/\\])path[/\\]to(?:[/\\]|$)|placeholder|changeme|change[-_]me|replace[-_]me"
    # the example values of docs and tests: abc123, xyz789, a run of the keyboard's digits
    # or the alphabet (1234567890abcdefghij)
    r"|^(?-i:abc|xyz)[-_]?\d{3}$|123456789|abcdefghi",
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
    if _API_ID.match(value):
        return "api_id"
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
    if _is_blob(value):
        return "hash"
    if _LONG_NUMBER.match(value):
        return "number"
    return None


def _is_blob(value: str) -> bool:
    if not _BLOB.match(value):
        return False
    letters = [c for c in value if c.isalpha()]
    upper = sum(1 for c in letters if c.isupper())
    digits = sum(1 for c in value if c.isdigit())
    return digits >= 2 and 5 * upper >= len(letters) and 5 * (len(letters) - upper) >= len(letters)


__all__ = ["LONG_NUMBER_DIGITS", "NoiseKind", "noise_kind"]
