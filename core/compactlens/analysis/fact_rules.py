"""The rules of structured-fact extraction: each pattern of
:mod:`compactlens.analysis.fact_patterns` with its kind, its check and the gate a text
must pass for it to run at all, in priority order (:data:`_RULES`); :func:`_structured`
runs them over one text (the first pattern to claim a span wins) and :func:`_quoted`
finds quoted strings."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from ahocorasick_rs import BytesAhoCorasick

from compactlens.analysis.fact_patterns import (
    _CURRENCY_CODES,
    _DATES,
    _EMAIL,
    _HASH_REF,
    _HEX,
    _MONEY,
    _PATH_EXTENSIONS,
    _PATHS,
    _QUANTITY,
    _QUOTED,
    _TOKEN,
    _TRAILING,
    _UNIT_FIRSTS,
    _UNIT_LETTERS,
    _URL,
    _UUID,
    COMMON_QUOTED,
    _is_hex_id,
    _is_identifier,
    _is_path,
    _strip_trailing,
)
from compactlens.analysis.fact_values import FactKind

_DIGIT = re.compile(r"\d")
_MONTH_PREFIXES = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)
_CURRENCY_LITERALS = tuple(_CURRENCY_CODES[3:-1].split("|"))
#: The first characters of every unit a quantity pattern accepts after a number.
_UNIT_STARTS = "".join(sorted(set(_UNIT_FIRSTS) | set(_UNIT_LETTERS)))


#: A gate: whether a text (and its UTF-8 bytes) can hold a match of the rules it guards.
_GateTest: TypeAlias = Callable[[str, bytes], bool]


@dataclass(frozen=True, slots=True)
class _Rule:
    """One structured-fact pattern and what a text must hold for it to match at all.

    The conditions are necessary, never sufficient: a text that fails one cannot hold a
    match, so the pattern is not run over it (twenty patterns over every long tool
    output are most of an analysis; texts share the answer of a gate several rules use,
    and the literal gates are answered together, see :data:`_LITERAL_GATES`).
    """

    pattern: re.Pattern[str]
    kind: FactKind
    check: Callable[[str], bool] | None = None
    #: Every match holds a decimal digit (or, with ``or_non_ascii``, a non-ASCII character).
    digit: bool = False
    or_non_ascii: bool = False
    #: The name of a gate in :data:`_LITERAL_GATES` or :data:`_GATES`: every match holds
    #: one of its literals, or the text passes its test.
    gate: str | None = None
    #: A match can end in :data:`_TRAILING` punctuation (to strip); the other patterns
    #: end in a word character, a digit or ``%``.
    strip: bool = False
    #: ``pattern.finditer(text)`` found a faster way, given the text and its ASCII byte
    #: classes (None for a text that is not ASCII).
    finder: Callable[[str, bytes | None], Iterable[re.Match[str]]] | None = None


#: Gates whose every match holds one of these literals: one Aho-Corasick pass over a
#: text's UTF-8 bytes answers them all (Python's ``re`` tries an alternation of literals
#: at every position, several times slower).
_LITERAL_GATES: dict[str, tuple[str, ...]] = {
    "scheme": ("://",),
    "at": ("@",),
    "drive": (":\\",),
    "percent": ("%",),
    "month": _MONTH_PREFIXES,
    "currency_sign": ("$", "€", "£", "¥"),
    "currency_code": _CURRENCY_LITERALS,
    "currency_word": (*_CURRENCY_LITERALS, "dollar", "euro", "cent", "bucks"),
}
_GATE_LITERALS = tuple(dict.fromkeys(lit for lits in _LITERAL_GATES.values() for lit in lits))
#: For each literal of :data:`_GATE_LITERALS`, the names of the gates it opens.
_GATES_OF_LITERAL = tuple(
    tuple(name for name, lits in _LITERAL_GATES.items() if lit in lits) for lit in _GATE_LITERALS
)
_LITERAL_SEARCH = BytesAhoCorasick([lit.encode("utf-8") for lit in _GATE_LITERALS])


def _searches(pattern: str) -> _GateTest:
    compiled = re.compile(pattern)
    return lambda text, _data: compiled.search(text) is not None


def _ascii_classes(classes: dict[bytes, str]) -> bytes:
    """A ``bytes.translate`` table: each ASCII byte to the key of the first pattern in
    ``classes`` it matches as a character, every other byte to ``.`` (the classes come
    from the regular expressions themselves, so ``\\d`` and ``\\s`` mean what they mean
    there)."""
    compiled = [(key, re.compile(pattern)) for key, pattern in classes.items()]
    table = bytearray(b"." * 256)
    for b in range(128):
        table[b] = next((k[0] for k, p in compiled if p.fullmatch(chr(b))), ord("."))
    return bytes(table)


#: ASCII characters by the classes the digit, unit and identifier gates need: a digit
#: (``\\d``) is ``0``, a space (``\\s``) `` ``, a unit's first letter ``u``, another word
#: character (``\\w``) ``a``, a hyphen ``-``. On an ASCII text a digit is a ``0`` in the
#: translation, ``\\d\\s?[unit starts]`` a ``0 ?u``, an attached one-letter unit a ``0u``
#: before a non-word character, and an identifier word (five characters of ``[\\w-]``,
#: two of them digits) a run of ``[0ua-]`` with two ``0``: one translation and searches
#: led by the rare ``0``, not four scans of the text.
_ASCII_CLASSES = _ascii_classes(
    {b"0": r"\d", b" ": r"\s", b"u": f"[{_UNIT_STARTS}]", b"a": r"\w", b"-": "-"}
)


def _ascii_classes_of(text: str) -> bytes | None:
    """``text`` translated by :data:`_ASCII_CLASSES`, or None when it is not ASCII."""
    return text.encode("ascii").translate(_ASCII_CLASSES) if text.isascii() else None


_UNIT_IN_CLASSES = re.compile(rb"0 ?u")
_UNIT_LETTER_IN_CLASSES = re.compile(rb"0u(?![0ua])")
#: Two digits with only letters between them, then the rest of their word, which (looking
#: back from its end) has five characters: ``_TOKEN`` can match in the text.
_WORD_DIGITS_IN_CLASSES = re.compile(rb"0[ua-]*+0[0ua-]*+(?<=[0ua-]{5})")
#: The ASCII hex digits to ``h``, every other byte to ``.``: seven hex characters in a
#: row are seven ``h`` in a row (UTF-8 keeps ASCII bytes for ASCII characters only), a
#: plain substring search instead of a character-class scan.
_HEX_BYTES = _ascii_classes({b"h": "[0-9a-fA-F]"})

_EXTENSION = re.compile(rf"\.(?:{_PATH_EXTENSIONS})(?![\w-])")
#: A slash that can end the first run of a relative path.
_RELATIVE_SLASH = re.compile(r"/(?<=[\w@+-]/)")
_RUN = re.compile(r"[\w.-]*+")


def _may_hold_bare_name(text: str, _data: bytes) -> bool:
    """Whether ``text`` has a known extension whose run of ``[\\w.-]`` characters does not
    follow a slash or an ``@``: a bare file name starts that run (inside a path, after
    its slash, it is not a bare name). Extensions hold no dot, so the hits of
    ``_EXTENSION`` never overlap and every one is seen; the run before a hit is measured
    in the reversed text."""
    reverse = ""
    for m in _EXTENSION.finditer(text):
        reverse = reverse or text[::-1]
        end = m.start()
        run = _RUN.match(reverse, len(text) - end)  # always a match, maybe empty
        start = len(text) - run.end() if run is not None else end
        if start == 0 or text[start - 1] not in "/@":
            return True
    return False


#: The gates that are not a set of literals, by name.
_GATES: dict[str, _GateTest] = {
    "uuid": _searches(r"-[0-9a-fA-F]{4}-"),
    "iso_date": _searches(r"-[01]\d-[0-3]\d"),
    "slash_date": _searches(r"/\d\d?/\d"),
    "clock": _searches(r":[0-5]\d"),
    "unit": _searches(rf"\d\s?[{_UNIT_STARTS}]"),  # (ASCII texts: see _rules)
    "unit_letter": _searches(rf"\d[{_UNIT_LETTERS}](?!\w)"),  # (ASCII texts: see _rules)
    "rooted_path": _searches(r"/(?<![\w/:@<-]/)"),
    "relative_path": lambda text, _data: _RELATIVE_SLASH.search(text) is not None,
    "bare_name": _may_hold_bare_name,
    "hash_ref": _searches(r"#\d\d"),
    "hex": lambda _text, data: b"hhhhhhh" in data.translate(_HEX_BYTES),
    # non-ASCII characters may be the digits of an identifier word: always run it there
    "word_digits": lambda _text, _data: True,  # (ASCII texts: see _rules)
}

_WORD_BEFORE_IN_CLASSES = re.compile(rb"[ua-]*+")


def _identifier_words(text: str, classes: bytes | None) -> Iterator[re.Match[str]]:
    """``_TOKEN.finditer(text)`` for an ASCII ``text`` and its ``classes``, without
    trying ``_TOKEN`` at every position: a match is a whole word (a run of ``[\\w-]``,
    ``[0ua-]`` in the classes) with two digits in it, so it starts where the run of a
    hit of :data:`_WORD_DIGITS_IN_CLASSES` starts (the hit starts at the run's first
    digit, and a run has one hit at most); ``_TOKEN`` is tried there only. The run
    before the digit is measured in the reversed classes."""
    if classes is None:
        yield from _TOKEN.finditer(text)
        return
    reverse = b""
    size = len(classes)
    for hit in _WORD_DIGITS_IN_CLASSES.finditer(classes):
        reverse = reverse or classes[::-1]
        run = _WORD_BEFORE_IN_CLASSES.match(reverse, size - hit.start())
        m = _TOKEN.match(text, size - run.end() if run is not None else hit.start())
        if m is not None:
            yield m


_PATH_RUN = re.compile(r"[\w.@+-]*+")


def _relative_paths(text: str, _classes: bytes | None) -> Iterator[re.Match[str]]:
    """``_PATHS[2].finditer(text)`` without trying the pattern at every position: a match
    starts in the run of ``[\\w.@+-]`` before its first slash (a slash after ``[\\w@+-]``),
    so the pattern is searched from the start of that run, for each such slash after
    the last match. Positions between the last match and that run cannot start a match:
    their own run's slash came earlier and was searched from already. The run is
    measured in the reversed text."""
    reverse = ""
    size = len(text)
    end = 0
    for hit in _RELATIVE_SLASH.finditer(text):
        slash = hit.start()
        if slash < end:  # inside the last match
            continue
        reverse = reverse or text[::-1]
        run = _PATH_RUN.match(reverse, size - slash)
        m = _PATHS[2].search(text, max(size - run.end() if run is not None else slash, end))
        if m is None:
            return
        yield m
        end = m.end()


#: Every structured-fact pattern, in priority order (the first to claim a span wins).
_RULES: tuple[_Rule, ...] = (
    _Rule(_URL, "url", gate="scheme", strip=True),
    _Rule(_EMAIL, "email", gate="at"),
    _Rule(_UUID, "identifier", gate="uuid"),
    _Rule(_DATES[0], "date", digit=True, gate="iso_date"),
    _Rule(_DATES[1], "date", digit=True, gate="slash_date"),
    _Rule(_DATES[2], "date", digit=True, gate="month"),
    _Rule(_DATES[3], "date", digit=True, gate="month"),
    _Rule(_DATES[4], "date", digit=True, gate="clock", strip=True),
    _Rule(_MONEY[0], "money", digit=True, gate="currency_sign"),
    _Rule(_MONEY[1], "money", digit=True, gate="currency_code"),
    _Rule(_MONEY[2], "money", digit=True, gate="currency_word"),
    _Rule(_QUANTITY[0], "quantity", digit=True, gate="unit"),
    _Rule(_QUANTITY[1], "quantity", digit=True, gate="unit_letter"),
    _Rule(_QUANTITY[2], "quantity", digit=True, gate="percent"),
    _Rule(_PATHS[0], "path", _is_path, gate="drive", strip=True),
    _Rule(_PATHS[1], "path", _is_path, gate="rooted_path"),
    _Rule(_PATHS[2], "path", _is_path, gate="relative_path", finder=_relative_paths),
    _Rule(_PATHS[3], "path", _is_path, gate="bare_name"),
    _Rule(_HASH_REF, "identifier", digit=True, gate="hash_ref"),
    _Rule(_HEX, "identifier", _is_hex_id, digit=True, gate="hex"),
    _Rule(
        _TOKEN,
        "identifier",
        _is_identifier,
        digit=True,
        or_non_ascii=True,
        gate="word_digits",
        finder=_identifier_words,
    ),
)


#: The rules a text without a decimal digit can need: those that need no digit, and
#: when the text has a non-ASCII character, the identifier word too.
_ASCII_NO_DIGIT_RULES = tuple(r for r in _RULES if not r.digit)
_NO_DIGIT_RULES = tuple(r for r in _RULES if not r.digit or r.or_non_ascii)


def _rules(text: str) -> tuple[list[_Rule], bytes | None]:
    """The rules whose patterns can match in ``text``, in priority order, and for an
    ASCII text its translation by :data:`_ASCII_CLASSES` (None for another text)."""
    data = text.encode("utf-8", "surrogatepass")
    hits = dict.fromkeys(_LITERAL_GATES, False)
    for i, _, _ in _LITERAL_SEARCH.find_matches_as_indexes(data, overlapping=True):
        hits.update(dict.fromkeys(_GATES_OF_LITERAL[i], True))
    classes = _ascii_classes_of(text)
    if classes is not None:
        hits["unit"] = _UNIT_IN_CLASSES.search(classes) is not None
        hits["unit_letter"] = _UNIT_LETTER_IN_CLASSES.search(classes) is not None
        hits["word_digits"] = _WORD_DIGITS_IN_CLASSES.search(classes) is not None
        candidates = _RULES if b"0" in classes else _ASCII_NO_DIGIT_RULES
    else:
        candidates = _RULES if _DIGIT.search(text) is not None else _NO_DIGIT_RULES
    out: list[_Rule] = []
    for rule in candidates:
        gate = rule.gate
        if gate is not None:
            hit = hits.get(gate)
            if hit is None:
                hit = hits[gate] = _GATES[gate](text, data)
            if not hit:
                continue
        out.append(rule)
    return out, classes


def _structured(text: str, rules: Sequence[_Rule] | None = None) -> list[tuple[FactKind, str]]:
    """Structured facts of one text, in text order (spans never overlap).

    Patterns run in priority order; a later match that overlaps an earlier fact's span
    is skipped, so the first pattern to claim a span wins. ``rules``: default, those
    that can match in ``text`` (:func:`_rules`); given, each runs over all of ``text``.
    """
    classes = None
    gated = rules is None
    if rules is None:
        rules, classes = _rules(text)
    found: list[tuple[int, FactKind, str]] = []
    mask = bytearray(len(text))
    for rule in rules:
        kind, check, strip = rule.kind, rule.check, rule.strip
        if gated and rule.finder is not None:
            matches = rule.finder(text, classes)
        else:
            matches = rule.pattern.finditer(text)
        for m in matches:
            start, end = m.span()
            value = m.group()
            if strip and value[-1] in _TRAILING:
                value = _strip_trailing(value)
                if not value:
                    continue
                end = start + len(value)
            if mask.find(1, start, end) >= 0 or (check is not None and not check(value)):
                continue
            mask[start:end] = b"\x01" * (end - start)
            found.append((start, kind, value))
    found.sort()
    return [(kind, value) for _, kind, value in found]


#: The quote character every match of each :data:`_QUOTED` pattern starts with (the
#: last pattern starts with a look-behind, which is tried at every position).
_QUOTE_OPENERS = ('"', "“", "`", "'")


def _quoted(text: str) -> list[str]:
    out: list[str] = []
    for p, opener in zip(_QUOTED, _QUOTE_OPENERS, strict=True):
        if opener not in text:
            continue
        for m in p.finditer(text):
            value = m.group(1).strip()
            if len(value) < 3 or not any(map(str.isalnum, value)):
                continue
            if value.lower() in COMMON_QUOTED:
                continue
            out.append(value)
    return out
