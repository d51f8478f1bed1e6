"""A frozen copy of the fact extractor as it was before the one-pass rewrite (every
pattern over every text, no gates): the reference the property tests compare
``compactlens.analysis.facts`` with. Do not optimize this file; it is the specification
by example.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence

from compactlens.analysis.facts import Fact, FactKind, FactSource
from compactlens.model.messages import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

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
        r"(?<![\w.-])\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
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
    # 15:00, 9:30 pm, 23:59:59
    re.compile(
        r"(?<![\w:.])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s?[AaPp]\.?[Mm]\.?)?(?![\w:])"
    ),
)
_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"
_CURRENCY_CODES = r"(?:USD|EUR|GBP|JPY|CHF|CAD|AUD|CNY|INR|NZD|SEK|NOK|DKK|BRL|MXN)"
_MONEY = (
    re.compile(
        rf"(?<![\w$€£¥])[$€£¥]\s?{_NUMBER}(?:\s?(?:[kKMB]|bn|million|billion|thousand)(?!\w))?"
    ),
    re.compile(rf"(?<![\w.]){_CURRENCY_CODES}\s?{_NUMBER}(?![\w])"),
    re.compile(
        rf"(?<![\w.]){_NUMBER}\s?(?:{_CURRENCY_CODES}|dollars?|euros?|cents?|bucks)(?![\w])"
    ),
)
_UNITS_SPACED = (
    r"ms|µs|ns|sec|secs|seconds?|mins?|minutes?|hrs?|hours?|days?|weeks?|months?|years?|yrs?|"
    r"KB|MB|GB|TB|PB|KiB|MiB|GiB|TiB|kB|kb|mb|gb|bytes?|bits?|Kbps|Mbps|Gbps|"
    r"px|em|rem|pt|dpi|°C|°F|km|cm|mm|nm|kg|mg|lbs?|oz|mi|miles?|ft|feet|meters?|metres?|"
    r"kilometers?|kilometres?|kilograms?|grams?|liters?|litres?|ml|mL|tokens?|rps|qps|"
    r"Hz|kHz|MHz|GHz|kW|MW|kWh|mAh|mph|kph|fps|vCPUs?|CPUs?|GPUs?|cores?|nights?"
)
_QUANTITY = (
    re.compile(rf"(?<![\w.,]){_NUMBER}\s?(?:{_UNITS_SPACED})(?![\w])"),
    # single-letter units only when attached: 30s, 5m, 2h, 7d, 512M, 2G, 3x
    re.compile(rf"(?<![\w.,]){_NUMBER}(?:[smhdwKMGTBx])(?![\w])"),
    re.compile(rf"(?<![\w.,]){_NUMBER}\s?%"),
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
    re.compile(r"(?<![\w/.:~@-])[\w.@+-]*[\w@+-]/(?:[\w.@+-]+/)*[\w.@+-]*[\w@+-]"),
    # bare file names with a known extension: setup.py, README.md
    re.compile(rf"(?<![\w/.@-])[\w-]+(?:\.[\w-]+)*\.(?:{_PATH_EXTENSIONS})(?![\w-])"),
)
_HASH_REF = re.compile(r"(?<![\w&#])#\d{2,}(?![\w])")
_HEX = re.compile(r"(?<![\w.-])(?:[0-9a-f]{7,64}|[0-9A-F]{7,64})(?![\w-])")
#: A word that could be an identifier: the lookahead asks for two characters that may be
#: digits (ASCII digits or any non-ASCII character, a superset of ``str.isdigit``) inside
#: the word, so the words ``_is_identifier`` would reject anyway are never matched. A
#: word is a maximal run, so the lookahead sees exactly the matched word.
_TOKEN = re.compile(
    r"(?<![\w.-])(?=[\w-]*?[0-9\u0080-\U0010ffff][\w-]*?[0-9\u0080-\U0010ffff])"
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


def _free(mask: bytearray, start: int, end: int) -> bool:
    return mask.find(1, start, end) < 0


def _claim(mask: bytearray, start: int, end: int) -> None:
    mask[start:end] = b"\x01" * (end - start)


def _is_path(value: str) -> bool:
    if "\\" in value:
        return True
    if _JS_LIBS.match(value):
        return False
    segments = [s for s in value.split("/") if s]
    if not segments:
        return False
    if value.startswith(("/", "~/", "./", "../")):
        return any(len(s) >= 2 and any(ch.isalpha() for ch in s) for s in segments)
    if "/" not in value:  # a bare file name
        return bool(_EXT_RE.search(value))
    if value.count("/") >= 2:
        if all(len(s) == 1 for s in value.split("/")):  # A/B/C/D: choices
            return False
        return all(any(ch.isalpha() for ch in s) for s in segments)
    return bool(_EXT_RE.search(segments[-1]))


def _is_identifier(token: str) -> bool:
    if len(token) < 5:
        return False
    digits = sum(map(str.isdigit, token))
    letters = sum(map(str.isalpha, token))
    if letters == 0:
        low, _, high = token.partition("-")
        is_range = (
            "-" in token
            and low.isdigit()
            and high.isdigit()
            and len(low) <= 6
            and len(high) <= 6
            and low.isascii()
            and high.isascii()
            and int(low) < int(high)
        )
        return digits >= 5 and not token.endswith("000") and not is_range
    if digits < 2:
        return False
    return token.lower() not in COMMON_TECH_TOKENS


def _is_hex_id(token: str) -> bool:
    has_digit = any(ch.isdigit() for ch in token)
    has_letter = any(ch.isalpha() for ch in token)
    return has_digit and has_letter


#: Every structured-fact pattern, in priority order (the first to claim a span wins).
_RULES: tuple[tuple[re.Pattern[str], FactKind, Callable[[str], bool] | None], ...] = (
    (_URL, "url", None),
    (_EMAIL, "email", None),
    (_UUID, "identifier", None),
    *((d, "date", None) for d in _DATES),
    *((m, "money", None) for m in _MONEY),
    *((q, "quantity", None) for q in _QUANTITY),
    *((p, "path", _is_path) for p in _PATHS),
    (_HASH_REF, "identifier", None),
    (_HEX, "identifier", _is_hex_id),
    (_TOKEN, "identifier", _is_identifier),
)


def _structured(text: str) -> list[tuple[FactKind, str]]:
    """Structured facts of one text, in text order (spans never overlap).

    Patterns run in priority order; a later match that overlaps an earlier fact's span
    is skipped, so the first pattern to claim a span wins.
    """
    found: list[tuple[int, FactKind, str]] = []
    mask = bytearray(len(text))
    for pattern, kind, check in _RULES:
        for m in pattern.finditer(text):
            start = m.start()
            value = _strip_trailing(m.group(0))
            end = start + len(value)
            if not value or not _free(mask, start, end):
                continue
            if check is not None and not check(value):
                continue
            _claim(mask, start, end)
            found.append((start, kind, value))
    found.sort(key=lambda item: item[0])
    return [(kind, value) for _, kind, value in found]


def _quoted(text: str) -> list[str]:
    out: list[str] = []
    for p in _QUOTED:
        for m in p.finditer(text):
            value = m.group(1).strip()
            if len(value) < 3 or not any(ch.isalnum() for ch in value):
                continue
            if value.lower() in COMMON_QUOTED:
                continue
            out.append(value)
    return out


def _argument_text(arguments: str) -> str:
    """JSON arguments with an escape: their keys and values decoded, one a line."""
    if "\\" not in arguments:
        return arguments
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    lines: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, item in node.items():
                lines.append(key)
                walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, str):
            lines.append(node)
        elif node is not None:
            lines.append(json.dumps(node))

    walk(value)
    return "\n".join(lines)


def _segments(message: Message) -> Iterable[tuple[FactSource, str, bool]]:
    """(source, text, prose) for each readable part of a message."""
    for part in message.parts:
        if isinstance(part, TextPart):
            yield "text", part.text, True
        elif isinstance(part, ReasoningPart):
            yield "reasoning", part.text, True
        elif isinstance(part, ToolCallPart):
            if part.arguments:
                yield "tool_arguments", _argument_text(part.arguments), False
        elif isinstance(part, ToolResultPart):
            yield "tool_result", part.output, False
        elif isinstance(part, ApprovalResponsePart):
            if part.reason:
                yield "approval", part.reason, True
        elif isinstance(part, MediaPart) and part.url and not part.url.startswith("data:"):
            yield "media", part.url, False


def message_facts(message: Message, index: int) -> list[Fact]:
    """The facts of one message (tool names, structured facts, quoted strings), unique."""
    out: list[Fact] = []
    seen: set[str] = set()

    def add(kind: FactKind, value: str, source: FactSource) -> None:
        value = normalize_space(value)
        if value and value not in seen:
            seen.add(value)
            out.append(Fact(kind, value, index, message.role, source))

    for part in message.parts:
        if isinstance(part, ToolCallPart) and part.name:
            add("tool_name", part.name, "tool_call")
        elif isinstance(part, ApprovalRequestPart) and part.name:
            add("tool_name", part.name, "approval")
    for source, raw, prose in _segments(message):
        text = _ANSI.sub(" ", raw) if "\x1b" in raw else raw
        # A JSON escape before a digit is a line break or a character, not part of a word.
        text = re.sub(r"\\(?:[nrt](?=\d)|u[0-9a-fA-F]{4})", " ", text)
        if not text:
            continue
        for kind, value in _structured(text):
            add(kind, value, source)
        if prose:
            for value in _quoted(text):
                add("quoted", value, source)
    return out


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
    for i in chosen:
        m = messages[i]
        if i == latest_request:
            text = normalize_space(m.text)
            if text:  # always, even when an earlier message had the same value
                seen.add(text)
                out.append(Fact("latest_request", text, i, m.role, "text"))
        own = cache.get(i) if cache is not None else None
        if own is None:
            own = message_facts(m, i)
            if cache is not None:
                cache[i] = own
        for fact in own:
            if fact.value not in seen:
                seen.add(fact.value)
                out.append(fact)
    return tuple(out)
