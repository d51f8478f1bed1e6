"""Wire formats. Each module converts one provider's message shape to and from :class:`Message`."""

from __future__ import annotations

from compactlens.formats.agent_framework import FORMAT as AGENT_FRAMEWORK
from compactlens.formats.ai_sdk import FORMAT as AI_SDK
from compactlens.formats.anthropic import FORMAT as ANTHROPIC
from compactlens.formats.atif import FORMAT as ATIF
from compactlens.formats.base import ConversionWarning, Encoded, Split, WireFormat
from compactlens.formats.canonical import FORMAT as CANONICAL
from compactlens.formats.claude_code import FORMAT as CLAUDE_CODE
from compactlens.formats.codex import FORMAT as CODEX
from compactlens.formats.gemini_cli import FORMAT as GEMINI_CLI
from compactlens.formats.inspect_ai import FORMAT as INSPECT_AI
from compactlens.formats.langchain import FORMAT as LANGCHAIN
from compactlens.formats.openai_chat import FORMAT as OPENAI_CHAT
from compactlens.formats.openai_responses import FORMAT as OPENAI_RESPONSES
from compactlens.formats.openhands import FORMAT as OPENHANDS
from compactlens.formats.openhands_v1 import FORMAT as OPENHANDS_SDK
from compactlens.formats.otel_genai import FORMAT as OTEL_GENAI
from compactlens.formats.pydantic_ai import FORMAT as PYDANTIC_AI
from compactlens.formats.recording import FORMAT as RECORDING
from compactlens.formats.swe_agent import FORMAT as SWE_AGENT
from compactlens.model.errors import TranscriptError

FORMATS: dict[str, WireFormat] = {
    f.name: f
    for f in (
        OPENAI_CHAT,
        OPENAI_RESPONSES,
        ANTHROPIC,
        AI_SDK,
        CLAUDE_CODE,
        LANGCHAIN,
        AGENT_FRAMEWORK,
        OPENHANDS,
        PYDANTIC_AI,
        RECORDING,
        CANONICAL,
        CODEX,
        INSPECT_AI,
        OPENHANDS_SDK,
        SWE_AGENT,
        OTEL_GENAI,
        ATIF,
        GEMINI_CLI,
    )
}


def get_format(name: str) -> WireFormat:
    """The wire format registered under ``name`` (for example ``"openai-chat"``).

    Raises :class:`~compactlens.model.errors.TranscriptError` (a ``ValueError``) for an
    unknown name, listing the known ones.
    """
    try:
        return FORMATS[name]
    except (KeyError, TypeError):
        raise TranscriptError(
            f"unknown format {name!r}; known formats: {', '.join(sorted(FORMATS))}",
            source="<format>",
        ) from None


__all__ = [
    "AGENT_FRAMEWORK",
    "AI_SDK",
    "ANTHROPIC",
    "ATIF",
    "CANONICAL",
    "CLAUDE_CODE",
    "CODEX",
    "FORMATS",
    "GEMINI_CLI",
    "INSPECT_AI",
    "LANGCHAIN",
    "OPENAI_CHAT",
    "OPENAI_RESPONSES",
    "OPENHANDS",
    "OPENHANDS_SDK",
    "OTEL_GENAI",
    "PYDANTIC_AI",
    "RECORDING",
    "SWE_AGENT",
    "CallerMessages",
    "ConversionWarning",
    "Encoded",
    "Split",
    "WireFormat",
    "caller_format",
    "from_caller",
    "get_format",
]

from compactlens.formats.caller import (  # noqa: E402  (it uses get_format)
    CallerMessages,
    caller_format,
    from_caller,
)
