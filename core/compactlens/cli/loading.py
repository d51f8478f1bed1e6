"""Loading the command line's input: a transcript file within the size limits, the
``--max-bytes`` / ``--max-string`` sizes and the tokenizer named by ``--tokenizer``."""

from __future__ import annotations

import argparse
from pathlib import Path

from compactlens.cli.errors import CliError
from compactlens.model.tokens import EncodingUnavailableError
from compactlens.model.tokens import Tokenizer as _Tokenizer
from compactlens.model.tokens import make_tokenizer as _make_tokenizer
from compactlens.transcript import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_STRING,
    Transcript,
    load_transcript,
)

TOKENIZERS = ("estimate", "calibrated", "o200k_base", "cl100k_base")
_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def load_file(
    path: str,
    format: str | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_string: int = DEFAULT_MAX_STRING,
) -> Transcript:
    """Read a transcript file in any supported format (detected unless ``format`` is given)."""
    return load_transcript(
        Path(path), format, source=path, max_bytes=max_bytes, max_string=max_string
    )


def load_input(args: argparse.Namespace) -> Transcript:
    """The transcript named by parsed ``args`` (file, --format, --max-bytes, --max-string)."""
    return load_file(args.file, args.format, max_bytes=args.max_bytes, max_string=args.max_string)


def parse_size(text: str) -> int:
    """``1000``, ``512K``, ``200M``, ``1G`` (binary units; ``_`` and a trailing ``B`` allowed)."""
    raw = text.strip().upper().replace("_", "").removesuffix("B")
    unit = raw[-1:] if raw[-1:] in _SIZE_UNITS else ""
    number = raw[: len(raw) - len(unit)]
    if not number.isdigit() or int(number) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size; use a positive number, optionally with K, M or G"
        )
    return int(number) * _SIZE_UNITS[unit]


def make_tokenizer(name: str) -> _Tokenizer:
    """The counter ``--tokenizer`` names (:func:`compactlens.model.make_tokenizer`)."""
    try:
        return _make_tokenizer(name)
    except (EncodingUnavailableError, ValueError, KeyError) as exc:
        raise CliError(f"--tokenizer {name}: {exc}") from None
