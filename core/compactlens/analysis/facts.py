"""Fact survival: which facts of the original conversation are still in the compacted request.

A *fact* is a short verbatim string a continuation is likely to need: an identifier
(order numbers, ids, hashes, UUIDs, ``#1234`` references), a file path, a URL, an
e-mail address, a number with a unit, a money amount, a date or time, a quoted
string, a tool name, or the text of the latest user request.

Facts are extracted from every message of the original conversation
(:func:`conversation_facts`): one fixed set per transcript, so every compaction of it is
measured against the same denominator. A fact *survives* when its text appears
verbatim (after collapsing runs of whitespace, which tool-result collapse does) in
the text of the compacted messages, wherever it appears there. Recall is
``survived / extracted``; it is 1.0 when nothing was extracted. Minor values (dates and
times, hashes, addresses, tool names, listings, placeholders; see
:func:`~compactlens.analysis.fact_values.minor_kind`) are counted apart, outside recall.

Extraction is deterministic and model-free. To keep false positives down a bare
number is never a fact (``3``, ``2024``); it needs a unit, a currency, a date shape
or at least five digits (an order number). Words are never facts unless quoted, and
quoted strings are taken only from prose (text and reasoning), not from tool
payloads, where every JSON key is quoted. Tool-call arguments with JSON escapes are read
decoded (their keys and values, one a line), and the compacted text they are looked up in
holds that decoded text too: ``{"chars": "\\u0003"}`` (Ctrl-C) is no ``u0003`` fact, and a
path written ``a\\/b`` is the path ``a/b``.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeAlias

from ahocorasick_rs import BytesAhoCorasick

from compactlens.analysis.fact_context import with_context
from compactlens.analysis.fact_patterns import _ANSI, COMMON_QUOTED, COMMON_TECH_TOKENS
from compactlens.analysis.fact_rules import _quoted, _structured
from compactlens.analysis.fact_values import (
    FACT_KIND_LABELS,
    FACT_KINDS,
    MINOR_KIND_LABELS,
    Fact,
    FactCheck,
    FactKind,
    FactReport,
    FactSource,
    KindRecall,
    MinorKind,
    NoiseOf,
    minor_kind,
    noise_memo,
)
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

# ----------------------------------------------------------------------------- extraction


def normalize_space(text: str) -> str:
    """Drop terminal escape sequences, collapse runs of whitespace to one space, strip."""
    if "\x1b" in text:
        text = _ANSI.sub(" ", text)
    return " ".join(text.split())


def _leaves(value: Any) -> Iterator[str]:
    """The keys and values of a decoded JSON value, as text, in order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, str):
        yield value
    elif value is not None:
        yield json.dumps(value)


def argument_text(arguments: str) -> str:
    """Tool-call ``arguments`` as facts are read from them: as written, unless they are
    JSON with an escape in it (``\\u0003``, ``\\n``, ``\\"``): then its keys and values
    decoded, one a line, so an escape never reads as part of a word."""
    if "\\" not in arguments:
        return arguments
    try:
        return "\n".join(_leaves(json.loads(arguments)))
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads
        return arguments


def _segments(message: Message) -> Iterable[tuple[FactSource, str, bool]]:
    """(source, text, prose) for each readable part of a message."""
    for part in message.parts:
        if isinstance(part, TextPart):
            yield "text", part.text, True
        elif isinstance(part, ReasoningPart):
            yield "reasoning", part.text, True
        elif isinstance(part, ToolCallPart):
            if part.arguments:
                yield "tool_arguments", argument_text(part.arguments), False
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


#: A JSON escape left in text (a log or JSON file a tool printed, escapes and all) before a
#: digit: ``\\n2026-01-14`` is a line break and a date, not the word ``n2026-01-14``, and
#: ``\\u2026`` is an ellipsis. Letters after it are left alone (``C:\\new``, a path).
_ESCAPE_RESIDUE = re.compile(r"\\(?:[nrt](?=\d)|u[0-9a-fA-F]{4})")


def _text_facts(raw: str, prose: bool) -> _TextFacts:
    text = _ANSI.sub(" ", raw) if "\x1b" in raw else raw
    if "\\" in text:
        text = _ESCAPE_RESIDUE.sub(" ", text)
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
    text of that message is a ``latest_request`` fact as well (always: the verdict reads
    its presence as "the history has a request"). Any other value found in several
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
            if text:  # even when an earlier message had the same value: it is the task
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
    """The text facts are looked up in: every message's counted text and its tool-call
    arguments as facts are read from them (:func:`argument_text`), whitespace-normalized."""
    pieces: list[str] = []
    for m in messages:
        pieces.append(message_text(m))
        for part in m.parts:
            if isinstance(part, ToolCallPart) and "\\" in part.arguments:
                decoded = argument_text(part.arguments)
                if decoded != part.arguments:
                    pieces.append(decoded)
    return normalize_space("\n".join(pieces))


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


def conversation_facts(
    messages: Sequence[Message],
    *,
    cache: dict[int, list[Fact]] | None = None,
    noise_of: NoiseOf | None = None,
) -> tuple[Fact, ...]:
    """The facts of a whole conversation: every message's (:func:`extract_facts`, the
    latest request included), with the minor kinds their context gives and a path that
    starts another path folded into it (:mod:`compactlens.analysis.fact_context`).

    One fixed set per conversation: the denominator of every recall measured on it, so
    runs, fixes and presets of one transcript are compared on the same facts.
    ``noise_of``: a :func:`~compactlens.analysis.fact_values.noise_memo` the caller asks
    again (default: a new one).
    """
    own = {} if cache is None else cache
    latest = latest_user_request(messages)
    if cache is None:
        facts = extract_facts(messages, latest_request=latest, cache=own)
        return with_context(facts, own, noise_of)
    shape = (len(messages), latest)
    with _WHOLE_LOCK:
        known = _WHOLE.get(id(cache))
        if known is not None and known[0] is cache and known[1] == (*shape, len(cache)):
            _WHOLE.move_to_end(id(cache))
            return known[2]
    facts = with_context(extract_facts(messages, latest_request=latest, cache=own), own, noise_of)
    with _WHOLE_LOCK:
        _WHOLE[id(cache)] = (cache, (*shape, len(cache)), facts)
        while len(_WHOLE) > _WHOLE_MAX:
            _WHOLE.popitem(last=False)
    return facts


#: The whole conversation's facts of the latest few ``cache`` dicts given to
#: :func:`conversation_facts` (each kept with its dict, the messages' count and latest
#: request): a fix search judges many runs of one conversation, and the facts of its
#: messages in context are the same for each.
_WHOLE_MAX = 8
_WHOLE: OrderedDict[
    int, tuple[dict[int, list[Fact]], tuple[int, int | None, int], tuple[Fact, ...]]
] = OrderedDict()
_WHOLE_LOCK = threading.Lock()


def fact_survival(
    original: Sequence[Message],
    compacted: Sequence[Message],
    affected: Iterable[int],
    *,
    judge: JudgeScore | None = None,
    cache: dict[int, list[Fact]] | None = None,
) -> FactReport:
    """Check the facts of the whole ``original`` conversation (:func:`conversation_facts`)
    in ``compacted``.

    Every message's facts count, not only those of the ``affected`` (removed, collapsed
    or summarized) messages, so the denominator is the same for every compaction of
    ``original``: a run that keeps more facts never shows a lower recall for having
    touched more messages. A kept message's facts survive with it. ``affected`` is
    reported with the result. ``cache`` keeps each original message's facts by index
    (see :func:`extract_facts`): pass the same dict for every compaction of the same
    original to extract each message once.
    """
    noise_of = noise_memo()  # the values the context looked at are mostly the facts'
    facts = conversation_facts(original, cache=cache, noise_of=noise_of)
    checks = check_facts(facts, compacted)
    return FactReport.of(checks, tuple(sorted(set(affected))), judge, noise_of=noise_of)


__all__ = [
    "COMMON_QUOTED",
    "COMMON_TECH_TOKENS",
    "FACT_KINDS",
    "FACT_KIND_LABELS",
    "MINOR_KIND_LABELS",
    "Fact",
    "FactCheck",
    "FactKind",
    "FactReport",
    "FactSource",
    "KindRecall",
    "MinorKind",
    "check_facts",
    "conversation_facts",
    "extract_facts",
    "fact_survival",
    "latest_user_request",
    "message_facts",
    "minor_kind",
    "normalize_space",
    "present_values",
    "searchable_text",
]
