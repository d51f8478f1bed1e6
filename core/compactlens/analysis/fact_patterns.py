"""The patterns a fact is found with: regular expressions for URLs, e-mail addresses,
UUIDs, dates, money, quantities, paths, ``#1234`` references, hex ids, identifier words
and quoted strings, the common words that are never facts, and the checks a match must
pass (:func:`_is_path`, :func:`_is_identifier`, :func:`_is_hex_id`)."""

from __future__ import annotations

import re

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
        if all(len(s) == 1 for s in value.split("/")):
            return False  # choices, not a path: A/B/C/D, x/y/z
        if value.isascii():
            return _LETTERLESS_SEGMENT.search(value) is None
        return all(_has_letter(s) for s in value.split("/") if s)
    return bool(_EXT_RE.search([s for s in value.split("/") if s][-1]))


#: Two numbers joined by a hyphen, the first smaller: a range (``200-300 words``).
_RANGE = re.compile(r"([0-9]{1,6})-([0-9]{1,6})")


def _is_range(token: str) -> bool:
    m = _RANGE.fullmatch(token)
    return m is not None and int(m.group(1)) < int(m.group(2))


def _is_identifier(token: str) -> bool:
    if len(token) < 5:
        return False
    digits = sum(map(str.isdigit, token))
    letters = sum(map(str.isalpha, token))
    if letters == 0:
        return digits >= 5 and not token.endswith("000") and not _is_range(token)
    if digits < 2:
        return False
    return token.lower() not in COMMON_TECH_TOKENS


def _is_hex_id(token: str) -> bool:
    return any(map(str.isdigit, token)) and _has_letter(token)
