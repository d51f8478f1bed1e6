"""Export: the compacted transcript in its original format, the events as JSONL, the
configuration as JSON and as a Python snippet that reproduces it, the analysis as JSON,
and a self-contained HTML report (charts, diff, events, analysis) for people without the
app."""

from __future__ import annotations

import streamlit as st

from compactlens_inspector import state
from compactlens_inspector.components import budget_bar
from compactlens_inspector.components.sidebar import analysis_sidebar
from compactlens_inspector.components.verdict_bar import page_verdict
from compactlens_inspector.exports import files
from compactlens_inspector.exports.snippet import FRAMEWORKS, framework_snippet
from compactlens_inspector.lab.config import config_title
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.style.numbers import file_size, num
from compactlens_inspector.style.safety import md_escape

PREVIEW_LINES = 40


def _framework() -> str:
    """The "Use in your agent" choice."""
    state.widget("export_framework", "plain")
    choice = st.selectbox(
        "Use in your agent",
        list(FRAMEWORKS),
        format_func=lambda k: FRAMEWORKS[k],
        key="export_framework",
        help="The Python snippet runs this configuration in front of the framework's model "
        "calls; see docs/integrations.md.",
    )
    return str(choice)


def render() -> None:
    header("Export", "Take the result with you: files for people and for code.")
    current, config = analysis_sidebar()
    if current is None:
        need_transcript()
        return
    outcome = state.run(explain=state.summarizer_settings().kind == "extractive")
    ix = state.index()
    if outcome is None or ix is None:
        return
    if outcome.result is None:
        budget_bar.status_line(outcome)  # the configuration error
        return
    # The verdict every page shows (not a status of its own), first in the report too.
    judged = page_verdict(outcome, page="export")
    r = outcome.result
    settings = state.summarizer_settings()
    tok = state.tokenizer()
    stem = files.stem(current.name)
    st.markdown(
        f"**{md_escape(current.name)}** · {md_escape(config_title(config))} · "
        f"{num(r.tokens_before)} → {num(r.tokens_after)} tokens"
    )
    transcript = files.compacted_transcript(current, outcome)
    events = files.events_jsonl(outcome)
    config_json = files.config_json(config, tokenizer=tok, summarizer=settings)
    framework = _framework()
    if framework == "plain":
        snippet = files.snippet(
            config, tokenizer=tok, summarizer=settings, transcript_name=current.name
        )
    else:
        snippet = framework_snippet(config, framework, tokenizer=tok, summarizer=settings)
    analysis_settings = state.analysis_settings()
    analysis = state.analysis(outcome, analysis_settings)
    analysis_doc = (
        files.analysis_json(analysis, analysis_settings) if analysis is not None else None
    )
    ext = ".jsonl" if current.jsonl else ".json"
    cols = [*st.columns(3), *st.columns(3)]  # two rows: files for code, then for people
    cols[0].download_button(
        "Compacted transcript",
        transcript,
        file_name=f"{stem}.compacted{ext}",
        mime="application/json",
        key="export_transcript",
        icon=":material/description:",
        width="stretch",
    )
    cols[1].download_button(
        "Events (JSONL)",
        events,
        file_name=f"{stem}.events.jsonl",
        mime="application/x-ndjson",
        key="export_events",
        icon=":material/timeline:",
        width="stretch",
    )
    cols[2].download_button(
        "Configuration (JSON)",
        config_json,
        file_name=f"{stem}.config.json",
        mime="application/json",
        key="export_config",
        icon=":material/settings:",
        width="stretch",
    )
    cols[3].download_button(
        "Python snippet",
        snippet,
        file_name=f"{stem}_compact.py"
        if framework == "plain"
        else f"{stem}_{framework.replace('-', '_')}.py",
        mime="text/x-python",
        key="export_snippet",
        icon=":material/code:",
        width="stretch",
    )
    cols[4].download_button(
        "Analysis (JSON)",
        analysis_doc or "",
        file_name=f"{stem}.analysis.json",
        mime="application/json",
        key="export_analysis",
        icon=":material/fact_check:",
        disabled=analysis_doc is None,
        width="stretch",
    )
    cols[5].download_button(
        "HTML report",
        lambda: files.report_html(
            current,
            ix,
            outcome,
            summarizer=settings,
            analysis=analysis,
            analysis_settings=analysis_settings,
            verdict=judged,
        ),
        file_name=f"{stem}.report.html",
        mime="text/html",
        key="export_report",
        icon=":material/article:",
        type="primary",
        width="stretch",
    )
    st.caption(
        f"Compacted transcript: {file_size(len(transcript))}, {num(r.messages_after)} "
        f"messages in `{current.format}` · events: {events.count(chr(10))} lines · the report "
        "embeds plotly.js, so it works offline"
    )
    # The previews are folded: open, the events' and the transcript's long lines wrapped
    # into a page 55,000 px tall on a Codex log. Each heading stays in view.
    left, right = st.columns(2)
    with left:
        st.markdown("##### Configuration (JSON)")
        with st.expander("Show the configuration"):
            st.code(config_json, language="json", height=420)
        st.markdown("##### Events (JSONL)")
        lines = events.splitlines()
        with st.expander(f"Show the first {num(min(len(lines), PREVIEW_LINES))} events"):
            st.code("\n".join(lines[:PREVIEW_LINES]), language="json", height=420)
    with right:
        st.markdown(f"##### Python snippet · {FRAMEWORKS[framework]}")
        with st.expander("Show the snippet"):
            st.code(snippet, language="python", wrap_lines=True)
        st.markdown("##### Compacted transcript (start)")
        text = transcript.decode("utf-8", errors="replace")
        with st.expander("Show the start of the compacted transcript"):
            st.code("\n".join(text.splitlines()[:PREVIEW_LINES]), language="json", height=420)
    if analysis_doc is not None:
        with st.expander("Analysis (JSON)"):
            st.code(analysis_doc, language="json", height=420)


if __name__ == "__main__":
    page(render, "export")
