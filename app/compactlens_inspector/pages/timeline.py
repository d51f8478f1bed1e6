"""Event timeline: the lifecycle (started, completed or failed) and every stage event of the
run, with tokens before and after, the trigger and its values, the replaced range and the
reason. Click an event to see the messages it affected. "Run as a session" replays the
transcript turn by turn to show when each trigger fires over the conversation."""

from __future__ import annotations

from typing import Any

import streamlit as st

import compactlens.viz as figures
from compactlens.viz import decisions_by_group, timeline_events
from compactlens_inspector import state
from compactlens_inspector.components import budget_bar
from compactlens_inspector.components.group_list import show_groups
from compactlens_inspector.components.sidebar import analysis_sidebar
from compactlens_inspector.components.tables import notes_under, table
from compactlens_inspector.components.verdict_bar import page_verdict, verdict_bar
from compactlens_inspector.lab.replay import ReplayStep, replay_timeline
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.safety import md_code, md_escape
from compactlens_inspector.style.wording import event_words, stage_words
from compactlens_inspector.views.recorded import RecordedEntry, recorded_entries
from compactlens_inspector.views.recorded import rows as recorded_rows
from compactlens_inspector.views.recorded import shared as recorded_shared

MAX_AFFECTED = 20
LAST_CLICK = "timeline_last_click"


def _clicked(selection: Any) -> int | None:
    try:
        points = selection["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for p in points or []:
        data = p.get("customdata")
        if isinstance(data, list):
            data = data[0] if data else None
        if isinstance(data, int | float):
            return int(data)
    return None


def _replay() -> None:
    ix = state.index()
    config = state.lab()
    settings = state.summarizer_settings()
    if ix is None:
        return
    how = (
        "through a compaction session, as an agent's integration runs it (restore the "
        "checkpoint, check the triggers, compact, save the checkpoint)"
    )
    st.caption(
        f"At the end of every turn, the history so far is prepared {how}, like an agent "
        "loop before each model request."
    )
    if settings.kind != "extractive":
        st.info(
            "The replay uses the extractive (offline) summarizer so that it never calls a "
            "model dozens of times.",
            icon=":material/info:",
        )
    state.widget("timeline_steps", 30)
    steps_max = st.number_input(
        "Evaluation points (turn ends, evenly spread)",
        min_value=2,
        max_value=200,
        key="timeline_steps",
    )
    with st.spinner("Replaying the conversation turn by turn…"):
        steps = state.replay(int(steps_max))
    fired = [s for s in steps if s.fired]
    cols = st.columns(3)
    cols[0].metric("Evaluations", num(len(steps)), border=True)
    cols[1].metric("Trigger fired", num(len(fired)), border=True)
    cols[2].metric(
        "Compactions", num(sum(1 for s in fired if s.status == "compacted")), border=True
    )
    st.plotly_chart(
        figures.replay_chart(
            steps, trigger_tokens=config.trigger_tokens, target_tokens=config.target_tokens
        ),
        key="timeline_replay_chart",
        config={"displaylogo": False},
    )
    lifecycle = replay_timeline(steps)
    if lifecycle:
        st.plotly_chart(
            figures.event_timeline(lifecycle, target_tokens=config.target_tokens),
            key="timeline_lifecycle_chart",
            config={"displaylogo": False},
        )
    elif steps and not any(s.lifecycle for s in steps):
        st.caption("No trigger fired at any evaluation: the session never compacted.")
    table(
        [
            {
                "evaluation": s.turn,
                "tokens in": s.tokens_in,
                "fired": s.fired,
                "status": s.status,
                "verdict": s.verdict_text,
                "tokens sent": s.tokens_out,
                # One column for both counts (and none for the trigger's index): with
                # ten columns the lifecycle was cut ("restored, started…").
                "messages": f"{num(s.messages_in)} → {num(s.messages_out)}",
                "lifecycle": ", ".join(str(e.get("type")) for e in s.lifecycle)
                or ", ".join(f"{stage_words(e.strategy)} {e.event}" for e in s.events),
            }
            for s in steps
        ],
        hide_index=True,
        width="stretch",
        key="timeline_replay_table",
    )
    notes_under([(f"Evaluation {s.turn}", s.detail) for s in steps])
    _step_verdict(steps)


def _step_verdict(steps: list[ReplayStep]) -> None:
    """The full verdict of one evaluation that compacted (or tried to), as the other
    pages show a run's."""
    judged = {s.turn: s for s in steps if s.verdict is not None}
    if not judged:
        return
    if st.session_state.get("timeline_step") not in judged:  # another configuration's
        st.session_state["timeline_step"] = next(iter(judged))
    turn = st.selectbox(
        "Verdict of evaluation",
        list(judged),
        format_func=lambda t: f"evaluation {t}: {judged[t].verdict_text}",
        key="timeline_step",
    )
    step = judged.get(int(turn or 0))
    if step is not None and step.verdict is not None:
        verdict_bar(step.verdict, key="timeline_step_verdict")


def _maybe(value: int | None) -> str:
    return "—" if value is None else num(value)


def _recorded(entries: list[RecordedEntry]) -> None:
    st.subheader(f"Recorded compactions ({num(len(entries))})", anchor=False)
    st.caption(
        "Compactions the agent already did, as its log or a compactlens recording says: "
        "one entry each, in order. History tokens and what the agent kept are counted "
        "(as the Post-mortem counts them); the recorded columns are what the agent logged. "
        "The run below is the lab configuration on the whole conversation."
    )
    same = recorded_shared(entries)
    if same:
        said = [f"**{name.capitalize()}:** {md_escape(value)}" for name, value in same.items()]
        st.markdown(" · ".join(said))
    table(recorded_rows(entries), key="timeline_recorded_table")
    labels = {e.seq: e.label for e in entries}
    state.widget("timeline_recorded", entries[0].seq)
    seq = st.selectbox(
        "Recorded compaction",
        list(labels),
        format_func=lambda k: labels[k],
        key="timeline_recorded",
    )
    entry = entries[seq]
    cols = st.columns(4)
    cols[0].metric("History tokens", _maybe(entry.history_tokens), border=True)
    cols[1].metric("Agent kept (tokens)", _maybe(entry.kept_tokens), border=True)
    cols[2].metric("Messages before", _maybe(entry.messages_before), border=True)
    cols[3].metric("Messages after", _maybe(entry.messages_after), border=True)
    facts = [f"**Source:** {md_escape(entry.source)}"]
    if entry.tokens_before is not None or entry.tokens_after is not None:
        facts.append(
            f"**Recorded by the agent:** {_maybe(entry.tokens_before)} → "
            f"{_maybe(entry.tokens_after)} tokens"
        )
    if entry.trigger:
        facts.append(f"**Trigger:** {md_code(entry.trigger)}")
    if entry.note:
        facts.append(f"**Note:** {md_escape(entry.note)}")
    st.markdown("  \n".join(facts))
    if entry.summary:
        # A real agent's summary runs to pages: it scrolls in its own box.
        st.caption("The agent's summary")
        with st.container(height=320, border=True, key="timeline_recorded_summary"):
            st.text(entry.summary)
    st.divider()


def render() -> None:
    header("Event timeline", "What each stage did, in order, and which messages it touched.")
    current, config = analysis_sidebar()
    if current is None:
        need_transcript()
        return
    ix = state.index()
    entries = recorded_entries(current.transcript, ix.tokenizer) if ix is not None else []
    if entries:
        _recorded(entries)
    state.widget("timeline_session", False)
    session = st.toggle(
        "Run as a session (replay the transcript turn by turn)", key="timeline_session"
    )
    if session:
        _replay()
        return
    outcome = state.run()
    ix = state.index()
    if outcome is None or ix is None:
        return
    if outcome.result is None:
        budget_bar.status_line(outcome)
        return
    r = outcome.result
    page_verdict(outcome, page="timeline")
    events = timeline_events(r)
    selection = st.plotly_chart(
        figures.event_timeline(events, target_tokens=config.target_tokens),
        key="timeline_chart",
        on_select="rerun",
        selection_mode="points",
        config={"displaylogo": False},
    )
    clicked = _clicked(selection)
    if clicked is not None and clicked != st.session_state.get(LAST_CLICK):
        st.session_state[LAST_CLICK] = clicked
        st.session_state["timeline_event"] = clicked
    labels = {e.seq: f"{e.seq}. {e.label}" for e in events}
    default = next((e.seq for e in events if e.group_ids), events[0].seq)
    state.widget("timeline_event", default)
    seq = st.selectbox(
        "Event (or click a bar above)",
        list(labels),
        format_func=lambda k: labels[k],
        key="timeline_event",
    )
    event = next(e for e in events if e.seq == seq)
    with st.container(border=True):
        cols = st.columns([1.5, 1, 1, 1])
        cols[0].metric("Event", md_escape(event_words(event.kind)), border=True)
        cols[1].metric("Tokens before", num(event.tokens_before), border=True)
        cols[2].metric("Tokens after", num(event.tokens_after), border=True)
        rng = event.message_range
        cols[3].metric("Replaced range", f"{rng[0]}–{rng[1]}" if rng else "—", border=True)
        lines = []
        if event.trigger:
            values = ", ".join(
                f"{num(v)} {k.replace('_', ' ')}" for k, v in event.trigger_values.items()
            )
            lines.append(
                f"**Trigger:** {md_escape(event.trigger)}"
                + (f" (seen: {values})" if values else "")
            )
        if event.target:
            lines.append(f"**Target:** {md_escape(event.target)}")
        if event.detail:
            lines.append(f"**Reason:** {md_escape(event.detail)}")
        if lines:
            st.markdown("  \n".join(lines))
    if event.group_ids or event.inserted:
        what = f"Affected groups ({num(len(event.group_ids))})"
        if event.inserted:
            what += f" · {num(event.inserted)} inserted"
        st.subheader(what, anchor=False)
        if event.inserted:
            many = event.inserted != 1
            st.caption(
                f"This stage inserted {num(event.inserted)} new group{'s' if many else ''} "
                f"(a summary); the Diff page shows {'them' if many else 'it'} in place."
            )
        if event.redecided:
            st.caption(
                f"{num(len(event.redecided))} of these groups were changed again by a later "
                "stage: the list shows each group's final decision."
            )
        shown = list(event.group_ids[:MAX_AFFECTED])
        if len(event.group_ids) > MAX_AFFECTED:
            st.caption(
                f"Showing the first {MAX_AFFECTED} of {num(len(event.group_ids))}, in the order "
                "the stage changed them."
            )
        show_groups(ix, shown, decisions=decisions_by_group(r), expanded=False)
    elif event.kind not in ("started", "completed", "failed", "skipped"):
        st.caption("This stage changed no group.")
    st.subheader("All events", anchor=False)
    table(
        [
            {
                "#": e.seq,
                "event": event_words(e.kind),
                "stage": "  " * e.depth + stage_words(e.strategy) + (" (total)" if e.total else ""),
                "tokens before": e.tokens_before,
                "tokens after": e.tokens_after,
                "range": f"{e.message_range[0]}–{e.message_range[1]}" if e.message_range else "",
                # The run's total on the "completed" row, as the verdict counts it.
                "groups changed": len(set(e.group_ids)) or e.groups_changed,
                "inserted": e.inserted,
            }
            for e in events
        ],
        hide_index=True,
        width="stretch",
        key="timeline_events_table",
    )
    # The details are sentences: listed under the table, where a column cut them.
    notes_under(
        [(f"#{e.seq} {event_words(e.kind)} · {stage_words(e.strategy)}", e.detail) for e in events]
    )


if __name__ == "__main__":
    page(render, "timeline")
