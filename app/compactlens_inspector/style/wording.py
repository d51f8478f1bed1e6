"""The inspector's words: the library's one vocabulary (:mod:`compactlens.engine`), so a
page words a stage, parameter, decision, reason or condition as every other surface does
(``newest tool calls kept verbatim``, not ``keep_last_tool_call_groups``; ``at most 4,300
tokens``, not ``tokens <= 4300``). Tables of configuration and the Python snippet keep the
names, which are what a user types. No Streamlit here.
"""

from __future__ import annotations

from compactlens.engine import (
    change_words,
    condition_words,
    decision_term,
    decision_words,
    event_words,
    pairing_words,
    plural,
    reason_words,
    source_words,
    stage_change_words,
    stage_term,
    stage_words,
    start_words,
    stop_words,
    verb,
)
from compactlens.viz import PARAM_WORDS, STAGE_PARAM_WORDS, param_words, part_words

__all__ = [
    "KIND_TEXT",
    "PARAM_WORDS",
    "STAGE_PARAM_WORDS",
    "change_words",
    "condition_words",
    "decision_term",
    "decision_words",
    "event_words",
    "pairing_words",
    "param_words",
    "part_words",
    "plural",
    "reason_words",
    "source_words",
    "stage_change_words",
    "stage_term",
    "stage_words",
    "start_words",
    "stop_words",
    "verb",
]

#: A group kind in words (badges, tables, the HTML report).
KIND_TEXT = {
    "system": "system",
    "user": "user",
    "assistant_text": "assistant",
    "tool_call": "tool call",
    "summary": "summary",
}
