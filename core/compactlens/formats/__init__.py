"""Wire formats. Each module converts one provider's message shape to and from :class:`Message`."""

from __future__ import annotations

from compactlens.formats.base import WireFormat
from compactlens.formats.openai_chat import FORMAT as OPENAI_CHAT

FORMATS: dict[str, WireFormat] = {OPENAI_CHAT.name: OPENAI_CHAT}


def get_format(name: str) -> WireFormat:
    """The wire format registered under ``name`` (for example ``"openai-chat"``)."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; known formats: {sorted(FORMATS)}") from None


__all__ = ["FORMATS", "OPENAI_CHAT", "WireFormat", "get_format"]
