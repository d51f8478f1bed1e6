"""The names the inspector stores under: session-state keys and query parameters.

One place for every key the app keeps in ``st.session_state`` outside widgets, and for the
query parameters that make a link reproduce a view, so no two modules spell one
differently. Plain constants (no Streamlit here).
"""

from __future__ import annotations

# -- session-state keys (the only ones the app stores outside widgets) -------------------------
SOURCES = "cl_sources"
ACTIVE = "cl_active"
TOKENIZER = "cl_tokenizer"
LAB = "cl_lab"
SUMMARIZER = "cl_summarizer"
LOAD_ERRORS = "cl_load_errors"
NONCE = "cl_nonce"
JUDGED_FIXES = "cl_judged_fixes"  # the lab run's judged fixes, with their run key
COMPACT_FIXES = "cl_compact_fixes"  # compact() mode's judged fixes, with their run key
INITIALIZED = "cl_initialized"
URL_NOTICE = "cl_url_notice"
ANALYSIS = "cl_analysis"
LAB_CHOSEN = "cl_lab_chosen"  # content hash -> the configuration the user chose for it
VISITOR_KEY = "cl_visitor_key"  # the visitor's own API key: this session only, never shown
VISITOR_TAG = "cl_visitor_tag"  # a random tag (not derived from the key) for its caches
LIMITER = "cl_limiter"  # this session's SummaryLimiter
LIMIT_NOTICE = "cl_limit_notice"  # why this rerun's run was cut short by the limits
SESSION_COPIES = "cl_session_copies"  # parsed values too large for the shared caches

#: Widgets seeded from the configuration's budget: re-seeded when the transcript changes.
BUDGET_WIDGETS = ("sb_", "landing_budget", "compare_budget")

#: Query parameters that make a link reproduce a view.
QP_SAMPLE = "sample"
QP_TOKENIZER = "tok"
QP_CONFIG = "cfg"
QP_PRESET = "preset"
QP_BUDGET = "budget"
QP_SUMMARIZER = "summ"

DEFAULT_PRESET = "reference"
PREFERRED_SAMPLES = ("coding_agent", "demo", "support_agent")
