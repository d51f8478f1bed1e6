"""Summarizers: the shared protocol, an offline extractive one, OpenAI-compatible and test doubles.

``compactlens.summarizers.openai`` imports the ``openai`` package lazily, so the
core works without it.
"""

from __future__ import annotations

from compactlens.model.serialize import (
    message_from_dict,
    message_to_dict,
    messages_to_json,
    part_from_dict,
    part_to_dict,
)
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
    is_offline,
    summarize_async,
)
from compactlens.summarizers.caching import CachingSummarizer
from compactlens.summarizers.extractive import ExtractiveSummarizer
from compactlens.summarizers.openai import CREDENTIAL_SETTINGS, OFFICIAL_BASE_URL, OpenAISummarizer
from compactlens.summarizers.testing import FakeSummarizer, StaticSummarizer

__all__ = [
    "CREDENTIAL_SETTINGS",
    "FINISH_STOP",
    "OFFICIAL_BASE_URL",
    "SUMMARY_PROMPT",
    "AsyncSummarizer",
    "CachingSummarizer",
    "ExtractiveSummarizer",
    "FakeSummarizer",
    "OpenAISummarizer",
    "StaticSummarizer",
    "Summarizer",
    "SummaryRequest",
    "SummaryResponse",
    "Usage",
    "build_prompt",
    "build_summary_request",
    "is_offline",
    "message_from_dict",
    "message_to_dict",
    "messages_to_json",
    "part_from_dict",
    "part_to_dict",
    "summarize_async",
]
