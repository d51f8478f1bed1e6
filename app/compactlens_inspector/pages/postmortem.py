"""Post-mortem: the compactions the agent itself did, each with the recall of the agent and
of compactlens at their sizes; for each, the history it replaced, the agent's summary and
its fact recall, and side by side what compactlens would have kept from the same history
(lab configuration and reference pipeline)."""

from __future__ import annotations

import streamlit as st

from compactlens.analysis import Postmortem
from compactlens_inspector import state
from compactlens_inspector.components.messages import show_text
from compactlens_inspector.components.sidebar import source_and_tokenizer
from compactlens_inspector.components.tables import column_room, table
from compactlens_inspector.components.verdict_bar import verdict_bar
from compactlens_inspector.lab.config import LabConfig
from compactlens_inspector.lab.config_url import encode_config
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.serving.loader import LoadedTranscript
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.safety import md_code, md_escape
from compactlens_inspector.style.widths import by_column
from compactlens_inspector.views.postmortem import (
    choice_label,
    message_rows,
    recall_share,
    recall_text,
    run_postmortem,
    side_views,
    timeline_figure,
    timeline_rows,
)


@st.cache_resource(max_entries=8, show_spinner=False)
def _measured(
    digest: str,
    tokenizer: str,
    config_key: str,
    window: int | None,
    _loaded: LoadedTranscript,
    _lab: LabConfig,
) -> Postmortem:
    return run_postmortem(_loaded.transcript, _lab, tokenizer, window)


def _none_recorded(current: LoadedTranscript) -> None:
    st.info(
        f"{md_code(current.name)} ({md_escape(current.format)}) records no compaction. "
        "Claude Code, Codex and Inspect AI logs (and Anthropic / OpenAI compaction items) "
        "do: load one, or the bundled sample **claude_code_compacted**.",
        icon=":material/history_toggle_off:",
    )


def _details(pm: Postmortem) -> None:
    labels = [choice_label(c) for c in pm.compactions]
    pick = st.selectbox(
        "Compaction", range(len(labels)), format_func=lambda i: labels[i], key="pm_pick"
    )
    c = pm.compactions[int(pick or 0)]
    r = c.recorded
    if r.note:
        st.caption(md_escape(f"Note: {r.note}"))
    cols = st.columns(4)
    cols[0].metric("History replaced", f"{num(len(c.history))} msgs", border=True)
    cols[1].metric("History tokens", num(c.history_tokens), border=True)
    cols[2].metric("Agent kept (tokens)", num(c.budget), border=True)
    cols[3].metric("Agent recall", recall_share(c.agent), border=True)
    # The count behind the share (a metric's value has room for the share only).
    st.caption(
        md_escape(
            f"Agent recall {recall_text(c.agent)}: the replaced history's facts found word for "
            "word in what the agent continued with."
        )
    )
    with st.expander(f"History before the compaction ({num(len(c.history))} messages)"):
        table(message_rows(c.history), key="pm_history")
    st.markdown("##### The agent's summary")
    if r.summary:
        # A real agent's summary runs to pages: it scrolls in its own box.
        with st.container(border=True, height=420):
            show_text(r.summary)
    else:
        st.caption("No readable summary: encrypted or not recorded.")
    sides = side_views(c)
    if not sides:
        return
    st.markdown("##### What each side kept at the agent's size, its verdict and the facts it lost")
    for n, (col, side) in enumerate(zip(st.columns(len(sides)), sides, strict=True)):
        with col:
            st.markdown(f"**{md_escape(side.title)}**")
            if side.verdict is not None:
                # The same verdict every other page shows, judged at the agent's size.
                verdict_bar(side.verdict, key=f"pm_verdict_{n}")
            st.metric(f"Recall · {md_escape(side.title)}", side.share or side.recall, border=True)
            # The verdict bar names the run's status; without one, the caption does.
            status = "" if side.verdict is not None else f" · {side.status}"
            st.caption(md_escape(f"Recall {side.recall} · {side.size}{status}"))
            if side.unequal:
                st.warning(md_escape(side.unequal), icon=":material/straighten:")
            room = column_room(len(sides))
            table(side.kept, key=f"pm_kept_{side.title}", room=room)
            if side.lost:
                lost = [{"lost fact": v} for v in side.lost]
                table(lost, key=f"pm_lost_{side.title}", room=room)


def render() -> None:
    header(
        "Post-mortem",
        "The compactions the agent recorded: what each one lost, and what compactlens "
        "would have kept.",
    )
    current = source_and_tokenizer()
    if current is None:
        need_transcript()
        return
    if not current.transcript.compactions:
        _none_recorded(current)
        return
    tok = state.tokenizer()
    lab = state.lab()
    with st.spinner("Measuring each recorded compaction…"):
        pm = _measured(
            current.content_hash,
            tok,
            encode_config(lab),
            state.analysis_settings().context_window,
            current,
            lab,
        )
    st.plotly_chart(timeline_figure(pm), key="pm_timeline", config={"displaylogo": False})
    # One column per compaction: its many measures, side by side, never fit a page.
    rows = [{k: v for k, v in row.items() if k != "#"} for row in timeline_rows(pm)]
    table(by_column(rows, first="measure", name="#"), key="pm_table")
    st.caption(
        "Recall: the facts of the replaced history (paths, ids, numbers, names, the latest "
        "request) found verbatim in what the model saw afterwards; timestamps and hashes "
        "are not counted. Tokens before (recorded) is the agent's own count of its whole "
        "context when it compacted (system prompt, tool definitions and all); history tokens "
        "is our count of the messages of this file it replaced. "
        "Strategies are sized to the tokens the agent kept (equal size); "
        "the lab configuration is scaled to that budget, and a strategy that cannot get "
        "that small is marked as not at equal size."
        + (
            " The lab is in compact() mode (a one-shot, not a strategy): only the reference "
            "pipeline is compared."
            if lab.mode == "compact"
            else ""
        )
    )
    _details(pm)


if __name__ == "__main__":
    page(render, "postmortem")
