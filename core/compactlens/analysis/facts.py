"""Fact survival: which facts of the removed messages are still in the compacted request.

A *fact* is a short verbatim string a continuation is likely to need: an identifier
(order numbers, ids, hashes, UUIDs, ``#1234`` references), a file path, a URL, an
e-mail address, a number with a unit, a money amount, a date or time, a quoted
string, a tool name, or the text of the latest user request.

Facts are extracted only from the messages that compaction removed, collapsed or
summarized (the *affected* messages). A fact *survives* when its text appears
verbatim (after collapsing runs of whitespace, which tool-result collapse does) in
the text of the compacted messages, wherever it appears there. Recall is
``survived / extracted``; it is 1.0 when nothing was extracted.

Extraction is deterministic and model-free. To keep false positives down a bare
number is never a fact (``3``, ``2024``); it needs a unit, a currency, a date shape
or at least five digits (an order number). Words are never facts unless quoted, and
quoted strings are taken only from prose (text and reasoning), not from tool
payloads, where every JSON key is quoted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ahocorasick_rs import BytesAhoCorasick

from compactlens.analysis.judge import JudgeScore
from compactlens.engine.guards import latest_request_index
from compactlens.model.messages import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    message_text,
)

FactKind: TypeAlias = Literal[
    "url",
    "email",
    "path",
    "date",
    "money",
    "quantity",
    "identifier",
    "quoted",
    "tool_name",
    "latest_request",
]

#: Every fact kind, in reporting order.
FACT_KINDS: tuple[FactKind, ...] = (
    "latest_request",
    "identifier",
    "path",
    "url",
    "email",
    "money",
    "quantity",
    "date",
    "quoted",
    "tool_name",
)

#: Where in a message a fact was found.
FactSource: TypeAlias = Literal[
    "text", "reasoning", "tool_call", "tool_arguments", "tool_result", "approval", "media"
]

# ----------------------------------------------------------------------------- patterns

_URL = re.compile(r"(?:https?|ftp|file|s3|gs|wss?|ssh|git)://[^\s<>\"'`\\\[\]{}|^]+")
_EMAIL = re.compile(
    r"(?<![\w.+%-])[A-Za-z0-9][A-Za-z0-9._%+-]*@"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
    r"\.[A-Za-z]{2,24}(?![\w-])"
)
_UUID = re.compile(
    r"(?<![\w-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![\w-])"
)
_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DATES = (
    # ISO dates with an optional time and zone: 2024-05-15, 2024-05-15T15:00:00Z
    re.compile(
        r"\d(?<![\w.-]\d)\d{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
        r"(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
        r"(?![\w-])"
    ),
    # 05/15/2024, 15/05/24
    re.compile(
        r"(?<![\w/.-])(?:0?[1-9]|[12]\d|3[01])/(?:0?[1-9]|[12]\d|3[01])/(?:\d{4}|\d{2})(?![\w/])"
    ),
    # May 15, 2024 / May 15th / Sept. 3 2023
    re.compile(
        rf"\b{_MONTHS}\.?\s+(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?(?![\w])"
    ),
    # 15 May 2024 (a year is required: "3 March" alone is too vague)
    re.compile(rf"(?<![\w.])(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\s+{_MONTHS}\.?,?\s+\d{{4}}\b"),
    # 15:00, 9:30 pm, 23:59:59 (the hour's first digit is matched before the look back,
    # as in :func:`_led_number`; ``[01]?\d|2[0-3]`` spelled from that digit on)
    re.compile(
        r"\d(?<![\w:.]\d)(?:(?<=[01])\d|(?<=2)[0-3])?:[0-5]\d(?::[0-5]\d)?(?:\s?[AaPp]\.?[Mm]\.?)?"
        r"(?![\w:])"
    ),
)
_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"


def _led_number(not_after: str) -> str:
    """``(?<!not_after)`` + :data:`_NUMBER`, written to start with its first digit and
    look behind that digit (``not_after`` is one character class): a pattern that starts
    with a character class lets the regex engine skip to the next digit in C instead of
    trying every position. The number is atomic (``(?>...)``, no backtracking into it):
    every pattern that uses it goes on with something that cannot start with a digit, a
    comma or a dot, so a shorter number never leads to a match. The matches are the same.
    """
    return rf"\d(?<!{not_after}\d)(?>\d*(?:,\d{{3}})*(?:\.\d+)?)"


_NUMBER_NOT_AFTER_WORD_OR_DOT = _led_number(r"[\w.]")
_NUMBER_NOT_AFTER_WORD_DOT_OR_COMMA = _led_number(r"[\w.,]")
_CURRENCY_CODES = r"(?:USD|EUR|GBP|JPY|CHF|CAD|AUD|CNY|INR|NZD|SEK|NOK|DKK|BRL|MXN)"
_MONEY = (
    re.compile(
        rf"(?<![\w$€£¥])[$€£¥]\s?{_NUMBER}(?:\s?(?:[kKMB]|bn|million|billion|thousand)(?!\w))?"
    ),
    re.compile(rf"(?<![\w.]){_CURRENCY_CODES}\s?{_NUMBER}(?![\w])"),
    re.compile(
        rf"{_NUMBER_NOT_AFTER_WORD_OR_DOT}\s?(?:{_CURRENCY_CODES}|dollars?|euros?|cents?|bucks)(?![\w])"
    ),
)
_UNITS_SPACED = (
    r"ms|µs|ns|sec|secs|seconds?|mins?|minutes?|hrs?|hours?|days?|weeks?|months?|years?|yrs?|"
    r"KB|MB|GB|TB|PB|KiB|MiB|GiB|TiB|kB|kb|mb|gb|bytes?|bits?|Kbps|Mbps|Gbps|"
    r"px|em|rem|pt|dpi|°C|°F|km|cm|mm|nm|kg|mg|lbs?|oz|mi|miles?|ft|feet|meters?|metres?|"
    r"kilometers?|kilometres?|kilograms?|grams?|liters?|litres?|ml|mL|tokens?|rps|qps|"
    r"Hz|kHz|MHz|GHz|kW|MW|kWh|mAh|mph|kph|fps|vCPUs?|CPUs?|GPUs?|cores?|nights?"
)
#: The one-letter units, only when attached to the number.
_UNIT_LETTERS = "smhdwKMGTBx"
_UNIT_FIRSTS = "".join(sorted({u[0] for u in _UNITS_SPACED.split("|")}))
_QUANTITY = (
    # (the look-ahead: every unit starts with one of these characters)
    re.compile(
        rf"{_NUMBER_NOT_AFTER_WORD_DOT_OR_COMMA}\s?(?=[{_UNIT_FIRSTS}])(?:{_UNITS_SPACED})(?![\w])"
    ),
    # single-letter units only when attached: 30s, 5m, 2h, 7d, 512M, 2G, 3x
    re.compile(rf"{_NUMBER_NOT_AFTER_WORD_DOT_OR_COMMA}(?:[{_UNIT_LETTERS}])(?![\w])"),
    re.compile(rf"{_NUMBER_NOT_AFTER_WORD_DOT_OR_COMMA}\s?%"),
)
_PATH_EXTENSIONS = (
    "py|pyi|pyx|ipynb|js|mjs|cjs|ts|tsx|jsx|json|jsonl|ndjson|md|rst|txt|yaml|yml|toml|ini|cfg|"
    "conf|csv|tsv|parquet|sql|db|sqlite|sh|bash|zsh|ps1|bat|go|rs|java|kt|scala|rb|php|c|h|cc|"
    "cpp|hpp|cs|swift|jl|lua|pl|html|htm|css|scss|less|xml|svg|png|jpg|jpeg|gif|pdf|docx?|"
    "xlsx?|pptx?|zip|tar|gz|tgz|bz2|xz|whl|lock|log|env|pony|ex|exs|erl|hs|ml|vue|svelte|dart|"
    "tf|proto|gradle|mk|cmake|patch|diff"
)
_PATHS = (
    # Windows: C:\Users\me\file.txt
    re.compile(r"(?<![\w])[A-Za-z]:\\(?:[^\\/:*?\"<>|\s]+\\)*[^\\/:*?\"<>|\s]*"),
    # absolute, home or dot-relative: /etc/hosts, ~/x, ./a/b, ../c
    re.compile(r"(?<![\w/.:~@<-])(?:~|\.{1,2})?/(?:[\w.@+-]+/)*[\w.@+-]*[\w@+-]"),
    # relative with a slash: src/app/main.py, a/b/c
    # (the look-ahead: a slash ends the word's first run of those characters, which every
    # match needs, tested without backtracking)
    re.compile(r"(?<![\w/.:~@-])(?=[\w.@+-]*+/)[\w.@+-]*[\w@+-]/(?:[\w.@+-]+/)*[\w.@+-]*[\w@+-]"),
    # bare file names with a known extension: setup.py, README.md (the look-ahead: a dot
    # ends the first run of word characters, which every match needs)
    re.compile(rf"(?<![\w/.@-])(?=[\w-]++\.)[\w-]+(?:\.[\w-]+)*\.(?:{_PATH_EXTENSIONS})(?![\w-])"),
)
_HASH_REF = re.compile(r"(?<![\w&#])#\d{2,}(?![\w])")
_HEX = re.compile(r"(?<![\w.-])(?:[0-9a-f]{7,64}|[0-9A-F]{7,64})(?![\w-])")
#: A word that could be an identifier: the look-aheads ask for five word characters and
#: two characters that may be digits (ASCII digits or any non-ASCII character, a superset
#: of ``str.isdigit``) inside the word, so the words ``_is_identifier`` would reject
#: anyway are never matched. A word is a maximal run, so the look-aheads see exactly the
#: matched word. The word characters that cannot be digits are ``[A-Za-z_-]``, so the
#: look-ahead skips them without backtracking (the same answer as a lazy
#: ``[\w-]*?``, several times faster).
_TOKEN = re.compile(
    r"(?<![\w.-])(?=[\w-]{5})(?=[A-Za-z_-]*+[0-9\u0080-\U0010ffff][A-Za-z_-]*+[0-9\u0080-\U0010ffff])"
    r"[A-Za-z0-9](?:[\w-]*[A-Za-z0-9])?(?![\w-]|\.\d)"
)
_QUOTED = (
    re.compile(r"\"([^\"\n]{2,200})\""),
    re.compile(r"“([^”\n]{2,200})”"),
    re.compile(r"`([^`\n]{2,200})`"),
    re.compile(r"(?<![\w'])'([^'\n]{2,200})'(?![\w'])"),
)
_EXT_RE = re.compile(rf"\.(?:{_PATH_EXTENSIONS})$", re.IGNORECASE)
_JS_LIBS = re.compile(
    r"(?i)^(?:node|vue|next|react|express|three|d3|chart|nuxt|ember|backbone|angular|deno|"
    r"socket\.io|p5|moment|pixi|babylon)\.js$"
)
_TRAILING = ".,;:!?)]}'\""
_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")

#: Mixed letter/digit tokens that look like ids but are common technical words.
COMMON_TECH_TOKENS: frozenset[str] = frozenset(
    {
        "utf-16",
        "utf-32",
        "x86_64",
        "x86-64",
        "amd64",
        "arm64",
        "aarch64",
        "i386",
        "i686",
        "sha256",
        "sha384",
        "sha512",
        "sha-256",
        "sha-512",
        "base64",
        "base32",
        "int16",
        "int32",
        "int64",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "bfloat16",
        "complex64",
        "complex128",
        "h264",
        "h265",
        "480p",
        "720p",
        "1080p",
        "1440p",
        "2160p",
        "covid-19",
        "win32",
        "win64",
        "iso8601",
        "iso-8601",
        "rfc3339",
        "pep8",
        "es2015",
        "es2020",
        "es2022",
        "c++17",
        "c++20",
        "python3",
        "python311",
        "py311",
        "py312",
        "py310",
        "ipv4",
        "ipv6",
    }
)

#: Quoted strings that are too common to be a fact.
COMMON_QUOTED: frozenset[str] = frozenset(
    {
        "yes",
        "no",
        "ok",
        "okay",
        "true",
        "false",
        "none",
        "null",
        "nil",
        "the",
        "and",
        "this",
        "that",
        "it",
        "done",
        "error",
        "errors",
        "success",
        "failed",
        "failure",
        "name",
        "type",
        "value",
        "id",
        "text",
        "content",
        "role",
        "user",
        "assistant",
        "system",
        "tool",
        "function",
        "data",
        "result",
        "results",
        "message",
        "messages",
        "status",
        "string",
        "number",
        "object",
        "array",
        "default",
        "example",
        "test",
        "foo",
        "bar",
        "baz",
    }
)

# ----------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Fact:
    """A verbatim string a continuation may need, and the message it came from.

    ``message_index`` is the position in the original transcript of the first
    affected message holding it; ``source`` says which part (text, tool_result...).
    """

    kind: FactKind
    value: str
    message_index: int
    role: str
    source: FactSource

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "value": self.value,
            "message_index": self.message_index,
            "role": self.role,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class FactCheck:
    """One extracted fact and whether it still appears verbatim after compaction."""

    fact: Fact
    survived: bool

    def to_dict(self) -> dict[str, Any]:
        return {**self.fact.to_dict(), "survived": self.survived}


@dataclass(frozen=True, slots=True)
class KindRecall:
    """Recall of one fact kind."""

    kind: FactKind
    extracted: int
    survived: int

    @property
    def recall(self) -> float:
        return self.survived / self.extracted if self.extracted else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "extracted": self.extracted,
            "survived": self.survived,
            "recall": round(self.recall, 6),
        }


@dataclass(frozen=True, slots=True)
class FactReport:
    """Fact survival of one compaction (deterministic, no model).

    ``affected_messages`` are the original indices of the removed, collapsed or
    summarized messages the facts were extracted from. ``judge`` is an optional,
    model-graded score (see :mod:`compactlens.analysis.judge`), never part of
    ``recall``.
    """

    checks: tuple[FactCheck, ...]
    affected_messages: tuple[int, ...]
    judge: JudgeScore | None = None

    @property
    def extracted(self) -> int:
        return len(self.checks)

    @property
    def survived(self) -> int:
        return sum(1 for c in self.checks if c.survived)

    @property
    def recall(self) -> float:
        """``survived / extracted``; 1.0 when no fact was extracted."""
        return self.survived / self.extracted if self.checks else 1.0

    @property
    def lost(self) -> tuple[Fact, ...]:
        return tuple(c.fact for c in self.checks if not c.survived)

    @property
    def latest_request_lost(self) -> bool:
        return any(f.kind == "latest_request" for f in self.lost)

    def by_kind(self) -> tuple[KindRecall, ...]:
        counts: dict[FactKind, list[int]] = {}
        for c in self.checks:
            slot = counts.setdefault(c.fact.kind, [0, 0])
            slot[0] += 1
            slot[1] += int(c.survived)
        return tuple(KindRecall(k, counts[k][0], counts[k][1]) for k in FACT_KINDS if k in counts)

    def to_dict(self, *, max_lost: int | None = None) -> dict[str, Any]:
        lost = self.lost
        shown = lost if max_lost is None else lost[:max_lost]
        return {
            "extracted": self.extracted,
            "survived": self.survived,
            "recall": round(self.recall, 6),
            "latest_request_lost": self.latest_request_lost,
            "affected_messages": list(self.affected_messages),
            "by_kind": [k.to_dict() for k in self.by_kind()],
            "lost": [f.to_dict() for f in shown],
            "lost_total": len(lost),
            "judge": self.judge.to_dict() if self.judge is not None else None,
        }


# ----------------------------------------------------------------------------- extraction


def normalize_space(text: str) -> str:
    """Drop terminal escape sequences, collapse runs of whitespace to one space, strip."""
    if "\x1b" in text:
        text = _ANSI.sub(" ", text)
    return " ".join(text.split())


def _strip_trailing(value: str) -> str:
    while value and value[-1] in _TRAILING:
        # keep a closing bracket that closes one opened inside the value
        if value[-1] == ")" and value.count("(") >= value.count(")"):
            break
        value = value[:-1]
    return value


def _has_letter(text: str) -> bool:
    return any(map(str.isalpha, text))


#: A segment of an ASCII path with no letter in it.
_LETTERLESS_SEGMENT = re.compile(r"(?:^|/)[^/A-Za-z]+(?:/|$)")


def _is_path(value: str) -> bool:
    if "\\" in value:
        return True
    # _JS_LIBS ends in "js" without case: the last character is one of the three that
    # match "s" then (Python's case folding adds the long s)
    if value[-1] in "sS\u017f" and _JS_LIBS.match(value):
        return False
    if not value.strip("/"):  # no segment
        return False
    if value.startswith(("/", "~/", "./", "../")):
        return any(len(s) >= 2 and _has_letter(s) for s in value.split("/"))
    if "/" not in value:  # a bare file name
        return bool(_EXT_RE.search(value))
    if value.count("/") >= 2:  # every segment has a letter
        if value.isascii():
            return _LETTERLESS_SEGMENT.search(value) is None
        return all(_has_letter(s) for s in value.split("/") if s)
    return bool(_EXT_RE.search([s for s in value.split("/") if s][-1]))


def _is_identifier(token: str) -> bool:
    if len(token) < 5:
        return False
    digits = sum(map(str.isdigit, token))
    letters = sum(map(str.isalpha, token))
    if letters == 0:
        return digits >= 5 and not token.endswith("000")
    if digits < 2:
        return False
    return token.lower() not in COMMON_TECH_TOKENS


def _is_hex_id(token: str) -> bool:
    return any(map(str.isdigit, token)) and _has_letter(token)


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


def _segments(message: Message) -> Iterable[tuple[FactSource, str, bool]]:
    """(source, text, prose) for each readable part of a message."""
    for part in message.parts:
        if isinstance(part, TextPart):
            yield "text", part.text, True
        elif isinstance(part, ReasoningPart):
            yield "reasoning", part.text, True
        elif isinstance(part, ToolCallPart):
            if part.arguments:
                yield "tool_arguments", part.arguments, False
        elif isinstance(part, ToolResultPart):
            yield "tool_result", part.output, False
        elif isinstance(part, ApprovalResponsePart):
            if part.reason:
                yield "approval", part.reason, True
        elif isinstance(part, MediaPart) and part.url and not part.url.startswith("data:"):
            yield "media", part.url, False


#: The facts of one text: (kind, whitespace-normalized value), in the order they are
#: reported (structured facts in text order, then quoted strings for prose).
_TextFacts: TypeAlias = list[tuple[FactKind, str]]
#: Kinds whose patterns never match whitespace: their values are normalized already
#: unless they hold an escape character (a URL or a Windows path may).
_SPACELESS_KINDS: frozenset[FactKind] = frozenset({"identifier", "path", "url", "email"})


def _text_facts(raw: str, prose: bool) -> _TextFacts:
    text = _ANSI.sub(" ", raw) if "\x1b" in raw else raw
    if not text:
        return []
    found = _structured(text)
    if prose:
        found += [("quoted", value) for value in _quoted(text)]
    out: _TextFacts = []
    for kind, value in found:
        if kind not in _SPACELESS_KINDS or "\x1b" in value:
            value = normalize_space(value)
            if not value:
                continue
        out.append((kind, value))
    return out


#: (kind, value, source) of facts, in order.
_SourcedFacts: TypeAlias = list[tuple[FactKind, str, FactSource]]


def _all_message_values(
    message: Message, memo: dict[tuple[str, FactSource], _SourcedFacts]
) -> _SourcedFacts:
    """(kind, value, source) of each fact of ``message`` in order, repeats included
    (never an empty value). ``memo`` keeps each distinct text's facts for the caller (a
    text repeated in many messages, such as a file read again, is read once)."""
    out: _SourcedFacts = []
    for part in message.parts:
        if isinstance(part, ToolCallPart) and part.name:
            out.append(("tool_name", normalize_space(part.name), "tool_call"))
        elif isinstance(part, ApprovalRequestPart) and part.name:
            out.append(("tool_name", normalize_space(part.name), "approval"))
    if out:
        out = [fact for fact in out if fact[1]]
    for source, raw, prose in _segments(message):
        key = (raw, source)
        found = memo.get(key)
        if found is None:
            found = memo[key] = [(kind, value, source) for kind, value in _text_facts(raw, prose)]
        out += found
    return out


def _message_values(
    message: Message, memo: dict[tuple[str, FactSource], _SourcedFacts] | None = None
) -> _SourcedFacts:
    """(kind, value, source) of each fact of ``message``, unique by value (the first)."""
    out: _SourcedFacts = []
    seen: set[str] = set()
    for kind, value, source in _all_message_values(message, {} if memo is None else memo):
        if value not in seen:
            seen.add(value)
            out.append((kind, value, source))
    return out


def message_facts(message: Message, index: int) -> list[Fact]:
    """The facts of one message (tool names, structured facts, quoted strings), unique."""
    role = message.role
    return [
        Fact(kind, value, index, role, source) for kind, value, source in _message_values(message)
    ]


def latest_user_request(messages: Sequence[Message]) -> int | None:
    """Index of the latest user request, or None: the engine's one rule
    (:func:`compactlens.engine.latest_request_index`), so the fact check and the guard
    that keeps the request agree."""
    return latest_request_index(messages)


def extract_facts(
    messages: Sequence[Message],
    indices: Iterable[int] | None = None,
    *,
    latest_request: int | None = None,
    cache: dict[int, list[Fact]] | None = None,
) -> tuple[Fact, ...]:
    """Facts of ``messages[i]`` for ``i`` in ``indices`` (all when None), unique by value.

    When ``latest_request`` is one of those indices, the whole (whitespace-normalized)
    text of that message is a ``latest_request`` fact as well. A value found in several
    messages is reported once, for the first of them. ``cache`` keeps each message's own
    facts by index, for callers that extract from the same transcript many times.
    """
    chosen = range(len(messages)) if indices is None else sorted(set(indices))
    out: list[Fact] = []
    seen: set[str] = set()
    memo: dict[tuple[str, FactSource], _SourcedFacts] = {}
    for i in chosen:
        m = messages[i]
        if i == latest_request:
            text = normalize_space(m.text)
            if text and text not in seen:
                seen.add(text)
                out.append(Fact("latest_request", text, i, m.role, "text"))
        own = cache.get(i) if cache is not None else None
        if own is None and cache is not None:
            own = cache[i] = [
                Fact(kind, value, i, m.role, source)
                for kind, value, source in _message_values(m, memo)
            ]
        if own is not None:
            for fact in own:
                if fact.value not in seen:
                    seen.add(fact.value)
                    out.append(fact)
            continue
        # no cache: a Fact only for a value not seen before (the first message with a
        # value is also the first with it in that message)
        for kind, value, source in _all_message_values(m, memo):
            if value not in seen:
                seen.add(value)
                out.append(Fact(kind, value, i, m.role, source))
    return tuple(out)


def searchable_text(messages: Sequence[Message]) -> str:
    """The text facts are looked up in: every message's counted text, whitespace-normalized."""
    return normalize_space("\n".join(message_text(m) for m in messages))


#: Bytes of compacted text one search covers: the matches of one search are a list, so
#: a long text is searched in windows of this size (overlapping by the longest value).
_WINDOW = 1 << 20


#: Lengths of the text pieces :func:`_may_occur` rules values out with (a value is
#: probed with the longest that fits it; shorter values are kept).
_GRAMS = (8, 4)


def _may_occur(values: list[str], haystack: str) -> list[str]:
    """``values`` less those with a piece (first, middle or last, of the longest length
    in :data:`_GRAMS` that fits) nowhere in ``haystack``, so the value is not either.
    For a text shorter than the values together, these sets cost less than an
    automaton of every value (on a long text they would cost more)."""
    long_n, short_n = _GRAMS
    long_grams = {haystack[i : i + long_n] for i in range(len(haystack) - long_n + 1)}
    short_grams = {haystack[i : i + short_n] for i in range(len(haystack) - short_n + 1)}
    out: list[str] = []
    for value in values:
        size = len(value)
        if size >= long_n:
            n, pieces = long_n, long_grams
        elif size >= short_n:
            n, pieces = short_n, short_grams
        else:
            out.append(value)
            continue
        last = size - n
        middle = last // 2
        if value[:n] in pieces and value[middle : middle + n] in pieces and value[last:] in pieces:
            out.append(value)
    return out


def present_values(values: Sequence[str], haystack: str, *, window: int = _WINDOW) -> set[str]:
    """The ``values`` that occur in ``haystack`` (``value in haystack`` for each), in one
    multi-pattern pass: an Aho-Corasick automaton of every value over the UTF-8 bytes of
    the text, reporting overlapping matches (a value inside another is found too).

    UTF-8 is self-synchronizing, so a byte match is a character match; lone surrogates,
    which JSON may carry, are kept by ``surrogatepass``.
    """
    found: set[str] = {v for v in values if not v}  # the empty string is in every text
    unique = [v for v in dict.fromkeys(values) if v]
    if unique and len(haystack) < sum(map(len, unique)):
        unique = _may_occur(unique, haystack)
    if not unique or not haystack:
        return found
    patterns = [v.encode("utf-8", "surrogatepass") for v in unique]
    text = memoryview(haystack.encode("utf-8", "surrogatepass"))
    automaton = BytesAhoCorasick(patterns)
    overlap = max(map(len, patterns)) - 1
    hits: set[int] = set()
    for start in range(0, len(text), window):
        piece = text[start : start + window + overlap]
        hits.update(i for i, _, _ in automaton.find_matches_as_indexes(piece, overlapping=True))
    found.update(unique[i] for i in hits)
    return found


def check_facts(facts: Sequence[Fact], compacted: Sequence[Message]) -> tuple[FactCheck, ...]:
    """Whether each fact appears verbatim (whitespace-normalized) in ``compacted``: one
    pass over the compacted text for all facts (see :func:`present_values`)."""
    present = present_values([f.value for f in facts], searchable_text(compacted))
    return tuple(FactCheck(f, f.value in present) for f in facts)


def fact_survival(
    original: Sequence[Message],
    compacted: Sequence[Message],
    affected: Iterable[int],
    *,
    judge: JudgeScore | None = None,
    cache: dict[int, list[Fact]] | None = None,
) -> FactReport:
    """Extract facts from the ``affected`` original messages and check them in ``compacted``.

    The latest user request counts as a fact when its message is affected. ``cache``
    keeps each original message's facts by index (see :func:`extract_facts`): pass the
    same dict for every compaction of the same original to extract each message once.
    """
    chosen = tuple(sorted(set(affected)))
    facts = extract_facts(
        original, chosen, latest_request=latest_user_request(original), cache=cache
    )
    return FactReport(check_facts(facts, compacted), chosen, judge)
