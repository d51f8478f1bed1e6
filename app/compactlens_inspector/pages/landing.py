"""Landing page: the story in one screen. A bundled transcript, its budget, one click to
compact, before and after."""

from __future__ import annotations

import streamlit as st

import compactlens.viz as figures
from compactlens_inspector import state
from compactlens_inspector.components import budget_bar
from compactlens_inspector.components.context_gauge import show_gauge
from compactlens_inspector.components.metric_row import Card, metric_row
from compactlens_inspector.components.sidebar import source_and_tokenizer
from compactlens_inspector.components.verdict_bar import page_verdict
from compactlens_inspector.lab.config import preset
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.style.numbers import INT_FORMAT, num
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.views.run import DECISION_MAP_BARS

DONE = "landing_done"


def _pick_sample() -> None:
    name = st.session_state.get("landing_sample")
    if isinstance(name, str):
        state.load_sample(name)
        st.session_state.pop(DONE, None)
        state.forget("landing_budget")


def _compact() -> None:
    budget = int(st.session_state.get("landing_budget") or 0)
    if budget > 0:
        state.set_lab(preset("reference", budget))
        state.forget("sb_")
        st.session_state[DONE] = True


def render() -> None:
    header(
        "compactlens inspector",
        "See exactly what compaction keeps, collapses, summarizes and drops, and why.",
    )
    current = source_and_tokenizer()
    if current is None:
        need_transcript()
        return
    ix = state.index()
    assert ix is not None
    st.markdown(
        "Long-running agents outgrow their context window. **Compaction** shrinks the "
        "history (collapses old tool results, summarizes, drops old turns) **without "
        "breaking a tool call from its result**. Pick a transcript, set a budget, compact."
    )
    st.page_link(
        "compactlens_inspector/pages/story.py",
        label="New here? Take the five-step story: from the problem to the fix",
        icon=":material/auto_stories:",
    )
    samples = state.samples()
    ref = state.active_ref()
    left, right = st.columns([2, 3], gap="large")
    with left:
        if samples:
            names = [s.name for s in samples]
            active = ref.sample if ref is not None and ref.sample in names else None
            st.session_state["landing_sample"] = active
            # With a file of the user's active, the select says so (it read "Bundled
            # transcript: Choose a sample" as if nothing were loaded).
            shown = "Transcript" if active is None else "Bundled transcript"
            st.selectbox(
                shown,
                names,
                format_func=lambda n: next(s.title for s in samples if s.name == n),
                key="landing_sample",
                on_change=_pick_sample,
                # Not the file's name: a placeholder renders markdown, and the caption below
                # names it, escaped.
                placeholder="Your own file (or pick a sample)",
            )
        st.caption(md_escape(current.description or current.title or current.name))
        metric_row(
            [
                # Counts as every other surface gives them ("97,232", never "97.2k").
                # As wide as each needs, so the three fit one row beside the chart.
                Card("Messages", num(ix.total_messages), width="content"),
                Card("Turns", num(ix.total_turns), width="content"),
                Card("Tokens", num(ix.total_tokens), width="content"),
            ],
            key="landing_counts",
        )
        top = max(200, ix.total_tokens)
        state.widget("landing_budget", min(max(100, state.budget()), top))
        st.slider(
            "Token budget (the history must fit in it)",
            min_value=100,
            max_value=top,
            step=max(10, top // 200),
            key="landing_budget",
            format=INT_FORMAT,
        )
        st.button(
            "Compact",
            key="landing_compact",
            type="primary",
            icon=":material/compress:",
            on_click=_compact,
            width="stretch",
        )
        st.caption(
            "Uses the reference pipeline (tool-result collapse, summarization, sliding "
            "window, truncation) with the extractive (offline) summarizer; no API key."
        )
    with right:
        done = bool(st.session_state.get(DONE))
        outcome = state.run() if done else None
        budget = int(st.session_state.get("landing_budget") or 0)
        if outcome is None or outcome.result is None:
            st.plotly_chart(
                figures.cumulative_tokens(ix, target_tokens=budget),
                key="landing_before_chart",
                config={"displaylogo": False},
            )
            st.caption("Before: the history grows with every turn. Press **Compact**.")
            show_gauge(ix, None, preset("reference", budget), key="landing_context")
        else:
            r = outcome.result
            page_verdict(outcome, page="overview")
            c = st.columns(3)
            c[0].metric("Before", num(r.tokens_before), border=True)
            c[1].metric(
                "After",
                num(r.tokens_after),
                delta=num(-r.tokens_saved) if r.tokens_saved else None,
                delta_color="inverse",
                border=True,
            )
            saved = r.tokens_saved / r.tokens_before if r.tokens_before else 0.0
            c[2].metric("Saved", f"{saved:.0%}", border=True)
            budget_bar.budget_bar(outcome, key="landing_budget_bar")
            show_gauge(ix, r, outcome.config, key="landing_context")
            st.plotly_chart(
                figures.decision_map(r, max_bars=DECISION_MAP_BARS),
                key="landing_decision_map",
                config={"displaylogo": False},
            )
    st.divider()
    links = st.columns(4)
    links[0].page_link(
        "compactlens_inspector/pages/lab.py",
        label="Tune it in the Strategy lab",
        icon=":material/tune:",
    )
    links[1].page_link(
        "compactlens_inspector/pages/diff.py", label="See the diff", icon=":material/difference:"
    )
    links[2].page_link(
        "compactlens_inspector/pages/cannot_fit.py", label="Why cannot-fit?", icon=":material/help:"
    )
    links[3].page_link(
        "compactlens_inspector/pages/load.py",
        label="Load your own transcript",
        icon=":material/upload_file:",
    )


if __name__ == "__main__":
    page(render, "landing")
