"""Summarizers: the shared protocol, an offline extractive one, OpenAI-compatible and test doubles.

``compactlens.summarizers.openai`` imports the ``openai`` package lazily, so the
core works without it.
"""

from __future__ import annotations

from compactlens.summarizers.base import (
    FINISH_STOP,
    SUMMARY_PROMPT,
    AsyncSummarizer,
    Summarizer,
    SummaryRequest,
    SummaryResponse,
    Usage,
    build_prompt,
    build_summary_request,
    message_from_dict,
    message_to_dict,
    messages_to_json,
    part_from_dict,
    part_to_dict,
    summarize_async,
)

__all__ = [
    "FINISH_STOP",
    "SUMMARY_PROMPT",
    "AsyncSummarizer",
    "Summarizer",
    "SummaryRequest",
    "SummaryResponse",
    "Usage",
    "build_prompt",
    "build_summary_request",
    "message_from_dict",
    "message_to_dict",
    "messages_to_json",
    "part_from_dict",
    "part_to_dict",
    "summarize_async",
]
