"""Convert a transcript file to another wire format in one call."""

from __future__ import annotations

import os
from collections.abc import Callable

from compactlens.formats import get_format
from compactlens.formats.base import ConversionWarning
from compactlens.transcript.read import load_transcript
from compactlens.transcript.write import dump_transcript


def convert_file(
    path: str | os.PathLike[str],
    to_format: str,
    out: str | os.PathLike[str] | None = None,
    *,
    on_warning: Callable[[ConversionWarning], None] | None = None,
) -> str:
    """Read the transcript at ``path``, convert it to ``to_format`` and return the text.

    Writes the text to ``out`` when given. What could not be carried over is
    passed to ``on_warning`` (one :class:`ConversionWarning` each). Raises
    :class:`~compactlens.model.errors.TranscriptError` for unreadable input or an
    unknown format name.
    """
    target = get_format(to_format)
    transcript = load_transcript(path)
    return dump_transcript(transcript, out, format=target.name, on_warning=on_warning)
