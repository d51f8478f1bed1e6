"""Transcript: messages grouped into their groups (paginated), filters and search, and the
charts: tokens per group, cumulative tokens with trigger and target, composition,
estimate vs exact."""

from __future__ import annotations

import math

import streamlit as st

import compactlens.viz as figures
from compactlens.viz import decisions_by_group
from compactlens_inspector import state
from compactlens_inspector.components.messages import show_groups
from compactlens_inspector.components.metric_row import Card, metric_row
from compactlens_inspector.components.sidebar import analysis_sidebar
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.style.numbers import num
from compactlens_inspector.views.run import GroupFilter, filter_groups, tool_names

PAGE_SIZES = (25, 50, 100)
#: Groups shown at first: each message is a bubble of several elements (tool calls and
#: results in folds with highlighted code), and the browser lays out every one of them:
#: 50 groups of an agent transcript took about 2.5-3 s of browser CPU, 25 about half.
DEFAULT_PAGE_SIZE = 25
ROLES = ("system", "developer", "user", "assistant", "tool")
KIND_LABELS = {
    "system": "system",
    "user": "user",
    "assistant_text": "assistant text",
    "tool_call": "tool call",
    "summary": "summary",
}
FLAGS = ("orphan", "unresolved", "approval_pending", "reasoning", "media", "opaque")


def _messages_view() -> None:
    ix = state.index()
    assert ix is not None
    with st.container(border=True):
        row = st.columns([3, 2, 2, 2, 2])
        row[0].text_input("Search text", key="tx_search", placeholder="words in any message")
        row[1].multiselect("Role", ROLES, key="tx_roles", placeholder="any role")
        row[2].multiselect(
            "Kind",
            list(KIND_LABELS),
            format_func=lambda k: KIND_LABELS[k],
            key="tx_kinds",
            placeholder="any kind",
        )
        row[3].multiselect("Tool", tool_names(ix), key="tx_tools", placeholder="any tool")
        row[4].multiselect("Flag", FLAGS, key="tx_flags", placeholder="any flag")
        opts = st.columns([2, 2, 2, 3])
        opts[0].toggle(
            "Render Markdown",
            key="tx_markdown",
            help="Off: text is shown literally. On: Markdown without HTML, script links or images.",
        )
        opts[1].toggle("Show the lab's decisions", key="tx_decisions")
        opts[2].toggle("Headers only", key="tx_headers_only", help="Hide message bodies.")
        state.widget("tx_page_size", DEFAULT_PAGE_SIZE)
        opts[3].segmented_control("Groups per page", PAGE_SIZES, key="tx_page_size", required=True)
    flt = GroupFilter(
        roles=tuple(st.session_state.get("tx_roles") or ()),
        kinds=tuple(st.session_state.get("tx_kinds") or ()),
        tools=tuple(st.session_state.get("tx_tools") or ()),
        text=str(st.session_state.get("tx_search") or ""),
        flags=tuple(st.session_state.get("tx_flags") or ()),
    )
    ids = filter_groups(ix, flt)
    size = int(st.session_state.get("tx_page_size") or DEFAULT_PAGE_SIZE)
    pages = max(1, math.ceil(len(ids) / size))
    current = int(st.session_state.get("tx_page", 1) or 1)
    if current > pages:
        st.session_state["tx_page"] = 1
        current = 1
    start = (current - 1) * size
    shown = ids[start : start + size]
    if not ids:
        st.info("No group matches these filters.", icon=":material/filter_alt_off:")
        return
    st.caption(
        f"{num(len(ids))} of {num(ix.total_groups)} groups match · showing {num(start + 1)}–"
        f"{num(start + len(shown))} · page {current} of {pages}"
    )
    decisions = None
    if st.session_state.get("tx_decisions"):
        outcome = state.run()
        decisions = decisions_by_group(outcome.result if outcome else None)
    show_groups(
        ix,
        shown,
        markdown=bool(st.session_state.get("tx_markdown")),
        decisions=decisions,
        expanded=not st.session_state.get("tx_headers_only"),
    )
    if pages > 1:
        st.pagination(pages, key="tx_page")


def _charts_view() -> None:
    ix = state.index()
    assert ix is not None
    config = state.lab()
    cfg = {"displaylogo": False}
    st.plotly_chart(figures.tokens_per_group(ix), key="tx_chart_groups", config=cfg)
    st.plotly_chart(
        figures.cumulative_tokens(
            ix, trigger_tokens=config.trigger_tokens, target_tokens=config.target_tokens
        ),
        key="tx_chart_cumulative",
        config=cfg,
    )
    left, right = st.columns(2)
    with left:
        st.plotly_chart(figures.composition(ix), key="tx_chart_composition", config=cfg)
    with right:
        state.widget("tx_exact_encoding", "o200k_base")
        enc = st.segmented_control(
            "Exact encoding",
            ["o200k_base", "cl100k_base"],
            key="tx_exact_encoding",
            required=True,
        )
        est = state.index("estimate")
        exact = state.index(str(enc or "o200k_base"))
        assert est is not None and exact is not None
        st.plotly_chart(figures.estimate_vs_exact(est, exact), key="tx_chart_exact", config=cfg)


def render() -> None:
    header("Transcript", "Every message in its group, with kinds, turns and token counts.")
    current, _config = analysis_sidebar()
    if current is None:
        need_transcript()
        return
    ix = state.index()
    assert ix is not None
    metric_row(
        [
            Card("Messages", num(ix.total_messages)),
            Card("Groups", num(ix.total_groups)),
            Card("Turns", num(ix.total_turns)),
            Card(f"Tokens ({ix.tokenizer_name})", num(ix.total_tokens)),
            Card("Pairing problems", num(len(ix.problems))),
        ],
        key="tx_counts",
        width=170,
    )
    state.widget("tx_view", "Messages")
    view = st.segmented_control("View", ["Messages", "Charts"], key="tx_view", required=True)
    if view == "Charts":
        _charts_view()
    else:
        _messages_view()


if __name__ == "__main__":
    page(render, "transcript")
