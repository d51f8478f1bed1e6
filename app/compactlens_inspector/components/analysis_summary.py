"""The analysis in a few numbers (for the Strategy lab): fact recall, the cached prefix,
protocol problems the compaction introduced, and turns until it fires again."""

from __future__ import annotations

import streamlit as st

from compactlens_inspector import state
from compactlens_inspector.lab.runs import RunOutcome
from compactlens_inspector.style.numbers import group_digits, num, share
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.style.wording import plural
from compactlens_inspector.views.analysis import protocol_card, recall_text, turns_text

#: Above this many messages the lab does not analyze every preview live: fact extraction
#: takes seconds there, and a parameter change must re-render within one.
LIVE_ANALYSIS_MAX_MESSAGES = 2_000


def analysis_wanted(outcome: RunOutcome) -> bool:
    """Whether the lab analyzes this run now: always up to
    :data:`LIVE_ANALYSIS_MAX_MESSAGES` messages, above that once the visitor asked."""
    result = outcome.result
    if result is None or result.messages_before <= LIVE_ANALYSIS_MAX_MESSAGES:
        return True
    return bool(st.session_state.get("lab_analysis_for") == outcome.config.key())


def analysis_summary(outcome: RunOutcome) -> None:
    """A bordered row of the analysis' key numbers with a link to the Analysis page.

    On long transcripts the analysis runs on request (a button), not on every change.
    """
    result = outcome.result
    if result is not None and not analysis_wanted(outcome):
        with st.container(border=True):
            head = st.columns([3, 1], vertical_alignment="center")
            head[0].markdown(
                f"**Analysis** · not run live on transcripts over "
                f"{num(LIVE_ANALYSIS_MAX_MESSAGES)} messages (this one has "
                f"{num(result.messages_before)}), so that parameter changes stay fast."
            )
            if head[1].button("Analyze this run", key="lab_analyze"):
                st.session_state["lab_analysis_for"] = outcome.config.key()
                st.rerun()
        return
    report = state.analysis(outcome)
    if report is None:
        return
    facts = report.facts
    cache = report.cache
    # The verdict's counts and words: problems introduced for the provider it judges for,
    # a cost or a note as the verdict says (a note is not in the warning colour).
    judged = state.run_verdict(outcome)
    protocol = protocol_card(judged)
    with st.container(border=True):
        # Room for the whole link label at 1280 px beside a stage editor ("Open the analy").
        head = st.columns([2, 1], vertical_alignment="center")
        head[0].markdown("**Analysis** · facts, prompt cache, re-trigger, protocol")
        head[1].page_link(
            "compactlens_inspector/pages/analysis.py",
            label="Open the analysis",
            icon=":material/fact_check:",
        )
        cols = st.columns(4)
        cols[0].metric(
            "Fact recall",
            recall_text(report),
            help=f"{num(facts.survived)} of the conversation's {num(facts.extracted)} facts "
            f"survive verbatim; {num(len(facts.lost))} lost.",
        )
        cols[1].metric(
            "Cache kept",
            num(cache.prefix_tokens),
            delta=f"{share(cache.prefix_fraction)} of the request",
            delta_color="off",
            delta_arrow="off",
            help=f"Tokens of the prompt cache's prefix that survive; "
            f"{num(cache.rewrite_tokens)} tokens are written to the cache again.",
        )
        cols[2].metric(
            "New problems",
            num(protocol.count),
            delta=protocol.delta,
            delta_color="inverse" if protocol.cost else "off",
            delta_arrow="off",
            help="Provider protocol problems the compaction introduced, as the verdict "
            f"judges them: {' '.join(protocol.words) or 'not judged'} "
            f"({plural(len(report.problems), 'problem')} in the compacted request in all.)",
        )
        cols[3].metric(
            "Re-trigger in",
            turns_text(report),
            help="Turns until a configured trigger fires again on the compacted history; "
            "agent steps (model calls) for an agent log with too few user turns to measure a "
            "typical turn (a dash: too few steps as well).",
        )
        if report.warnings:
            st.caption(" · ".join(md_escape(group_digits(w)) for w in report.warnings))
