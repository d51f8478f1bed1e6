"""Strategy lab: build a strategy or a pipeline and see the result live: the run's verdict
on top, tokens before and after, the budget bar, every group coloured by its decision.

The builder and its preview are one fragment in the page body (builder on the left,
preview on the right): a parameter change re-runs only them, not the whole app. The
sidebar keeps the transcript picker and the counter, which depend on no configuration."""

from __future__ import annotations

import streamlit as st

import compactlens.viz as figures
from compactlens.analysis import Verdict, group_counts
from compactlens_inspector import state
from compactlens_inspector.components import budget_bar
from compactlens_inspector.components.analysis_summary import analysis_summary
from compactlens_inspector.components.context_gauge import show_gauge
from compactlens_inspector.components.recorded_call import replay_note
from compactlens_inspector.components.sidebar import source_and_tokenizer
from compactlens_inspector.components.strategy_builder import strategy_builder
from compactlens_inspector.components.tables import notes_under, table
from compactlens_inspector.components.verdict_bar import page_verdict
from compactlens_inspector.lab.config import ACTIONS, LabConfig, config_title
from compactlens_inspector.lab.runs import RunOutcome
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.style.numbers import INT_FORMAT, group_digits, num
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.style.wording import (
    decision_words,
    stage_words,
    start_words,
    stop_words,
)
from compactlens_inspector.views import compact_words
from compactlens_inspector.views.run import DECISION_MAP_BARS


def _usage(outcome: RunOutcome) -> None:
    notice = state.summary_notice()  # a refused endpoint or the session's limit
    if notice:
        st.warning(md_escape(notice))
    settings = state.summarizer_settings()
    calls = outcome.summaries
    if not calls and not outcome.config.uses_summarizer:
        return
    usage = outcome.usage
    parts = [f"**Summarizer:** {md_escape(settings.label)}"]
    if calls:
        cached = sum(1 for c in calls if c.cached)
        parts.append(f"{num(len(calls))} summary call{'s' if len(calls) != 1 else ''}")
        if cached:
            parts.append(f"{cached} answered from the cache")
    else:
        parts.append("not called")
    if usage is not None:
        parts.append(
            f"usage: {num(usage.input_tokens)} in + {num(usage.output_tokens)} out = "
            f"{num(usage.total_tokens)} tokens"
        )
    elif calls:
        parts.append("no model usage (offline)")
    st.caption(" · ".join(parts))


def _events_table(outcome: RunOutcome) -> None:
    """One row per stage event; the events' details are listed under the table (as a
    column they were cut at 1440 px, beside the conditions that need the room)."""
    r = outcome.result
    if r is None:
        return
    table(
        [
            {
                "stage": "  " * e.depth + stage_words(e.strategy),
                "event": e.event,
                "starts when": start_words(e.trigger, e.strategy),
                "stops at": stop_words(e.target),
                "tokens": f"{num(e.tokens_before)} → {num(e.tokens_after)}",
                # As the Timeline counts them, inserted summaries apart, so a compact()
                # run reads 220 and 1 beside the caption's "220 summarized · 1 inserted".
                "groups changed": len(set(e.group_ids)),
                "inserted": e.inserted,
            }
            for e in r.events
        ],
        hide_index=True,
        width="stretch",
        key="lab_events",
        # A short header, so "starts when" and "stops at" keep their whole conditions
        # at 1280 px (they were cut: "a stage's trigger…", "more than 40,000…").
        column_config={
            "groups changed": st.column_config.NumberColumn(
                "groups", format=INT_FORMAT, help="Groups the stage changed"
            )
        },
    )
    notes_under(
        [(f"{stage_words(e.strategy)} ({e.event})", group_digits(e.detail)) for e in r.events]
    )


def _verdict(outcome: RunOutcome | None) -> Verdict | None:
    """The page's one verdict, on top, from the same analysis as the analysis card below
    (with the way to the fix search its next step names when the run does not fit)."""
    if outcome is None or outcome.result is None:
        return None
    r = outcome.result
    # A failed stage (a summarizer error, say) is news the verdict's reasons do not hold;
    # a missed target is already its first reason.
    failed = [e for e in r.events if e.event == "failed"]
    why = group_digits(failed[-1].detail or "a stage failed") if failed else ""
    judged = page_verdict(outcome, page="lab", why=why)
    if r.status == "cannot-fit":
        st.page_link(
            "compactlens_inspector/pages/cannot_fit.py",
            label="Why does it not fit? Open the cannot-fit debugger",
            icon=":material/troubleshoot:",
        )
    return judged


def _preview(config: LabConfig) -> RunOutcome | None:
    """The live preview of ``config``'s run; returns that run (one run per rerun: a second
    call would ask the limits again and leave a stale notice for the next rerun)."""
    outcome = state.run()
    judged = _verdict(outcome)
    st.markdown(f"**Configuration:** {md_escape(config_title(config))}")
    if outcome is None:
        return None
    if outcome.result is None:
        budget_bar.status_line(outcome)  # the configuration error
        return outcome
    r = outcome.result
    # One definition of the groups by decision (a compact() run's verdict counts none:
    # then those of its plan).
    groups = (judged.numbers.groups if judged is not None else None) or group_counts(r)
    budget_bar.metric_cards(r, config, key="lab_metrics", groups=groups)
    _usage(outcome)
    # The gauge is the budget picture (before and after against trigger and target):
    # HTML, so a change does not redraw a second plotly chart for the same numbers.
    ix = state.index()
    if ix is not None:
        show_gauge(ix, r, config, key="lab_context")
    st.plotly_chart(
        figures.decision_map(r, max_bars=DECISION_MAP_BARS),
        key="lab_decision_map",
        config={"displaylogo": False},
    )
    st.caption(
        "Each bar is a group (height: its tokens before), coloured by its decision: "
        + ", ".join(f"**{decision_words(a)}**" for a in ACTIONS)
        + ". Hover for the "
        f"reason. Above {num(DECISION_MAP_BARS)} groups, each bar stacks a run of neighbouring "
        "groups by decision."
    )
    analysis_summary(outcome)
    ix = state.index()
    if outcome.boundary is not None and ix is not None:
        # The same sentences as the Cannot-fit page's (positions and tool names, no code).
        with st.expander("One-shot compact: what stays and why", expanded=r.status == "cannot-fit"):
            compacted = r.status == "compacted"
            for line in compact_words.boundary_lines(
                outcome.boundary, ix.messages, compacted=compacted
            ):
                st.markdown(f"- {md_escape(line)}")
    return outcome


def _stages(outcome: RunOutcome | None) -> None:
    """What each stage did, full width under the workbench (a table this wide would be
    cut in the preview column)."""
    if outcome is None or outcome.result is None:
        return
    st.subheader("Stages", anchor=False)
    _events_table(outcome)
    judged = state.run_verdict(outcome)  # the verdict's counts, as the cards and the bar
    groups = (judged.numbers.groups if judged is not None else None) or group_counts(outcome.result)
    if groups:
        st.caption(
            " · ".join(
                f"{num(n)} group{'s' if n != 1 else ''} {label}" for label, n in groups.items() if n
            )
        )


def _workbench() -> None:
    builder, preview = st.columns([1, 2], gap="medium")
    with builder, st.container(key="lab_builder"):
        config = strategy_builder()
    with preview:
        outcome = _preview(config)
    _stages(outcome)


@st.fragment
def _workbench_fragment() -> None:
    """A parameter change re-runs only this; the page's error boundary and URL sync too."""
    page(_workbench, "lab")


def render() -> None:
    header("Strategy lab", "Tune a strategy or a pipeline; the preview updates live.")
    if source_and_tokenizer() is None:
        need_transcript()
        return
    replay_note()  # a call opened from the Runs page: did the replay reproduce it?
    _workbench_fragment()


if __name__ == "__main__":
    page(render, "lab")
