"""Parameter names as words for charts: ``newest tool calls kept verbatim`` rather than
``keep_last_tool_call_groups``. Tables and the Python snippet keep the names (they are
what a user types); a chart's axis, legend and title read as words, with the name in
the hover text. No Streamlit here.
"""

from __future__ import annotations

#: Words for a parameter, whatever the stage.
PARAM_WORDS: dict[str, str] = {
    "keep_last_tool_call_groups": "newest tool calls kept verbatim",
    "minimum_preserved": "newest groups never touched",
    "max_input_tokens": "summarizer input cap (tokens)",
    "max_summary_tokens": "summary length cap (tokens)",
    "keep_last_turns": "newest turns kept",
    "token_budget": "token budget",
    "keep_last_messages": "newest messages kept verbatim",
    "target_tokens": "target (tokens)",
    "trigger_tokens": "trigger (tokens)",
}

#: Words for a parameter of one stage type, where the general words would mislead.
STAGE_PARAM_WORDS: dict[tuple[str, str], str] = {
    ("sliding_window", "minimum_preserved"): "newest turns never dropped",
    ("truncation", "minimum_preserved"): "newest groups never dropped",
    ("summarization", "minimum_preserved"): "newest groups never summarized",
}


def param_words(name: str, stage_type: str = "") -> str:
    """Words for parameter ``name`` (of a stage of ``stage_type``); the name itself
    with spaces for a parameter without words of its own."""
    found = STAGE_PARAM_WORDS.get((stage_type, name)) or PARAM_WORDS.get(name)
    return found or name.replace("_", " ")


def part_words(label: str) -> str:
    """A budget part's label for a chart: a parameter name becomes words, other labels
    (already words, such as ``system messages``) stay."""
    return param_words(label) if label in PARAM_WORDS else label
