"""Parameter names as words for charts: ``newest tool calls kept verbatim`` rather than
``keep_last_tool_call_groups``. The words live in :mod:`compactlens.viz` (the figures use
them too); tables and the Python snippet keep the names. No Streamlit here.
"""

from __future__ import annotations

from compactlens.viz import PARAM_WORDS, STAGE_PARAM_WORDS, param_words, part_words

__all__ = ["PARAM_WORDS", "STAGE_PARAM_WORDS", "param_words", "part_words"]
