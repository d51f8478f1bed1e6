"""A recorded model call: its numbers, the verdict of its replay (the same verdict bar as
every page), whether the replay reproduced the recording, and the buttons that open it
in the Strategy lab or, for a cannot-fit call, in the debugger."""

from __future__ import annotations

import streamlit as st

from compactlens.integrations import RecordedCall, config_name, replay_call
from compactlens_inspector import state
from compactlens_inspector.components.verdict_bar import verdict_bar
from compactlens_inspector.state import runs as runs_state
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.views.runs import call_step, call_verdict, time_text

LAB_PAGE = "compactlens_inspector/pages/lab.py"
DEBUGGER_PAGE = "compactlens_inspector/pages/cannot_fit.py"


def recorded_call(call: RecordedCall) -> None:
    """The panel of one call (see the module)."""
    replay = replay_call(call)
    with st.container(border=True, key="runs_call"):
        st.markdown(
            f"**Call {call.seq}** of {md_escape(call.run)} · {md_escape(call.framework)} · "
            f"{md_escape(time_text(call.timestamp))}"
        )
        cols = st.columns(4)
        cols[0].metric("Tokens before", num(call.tokens_before or 0), border=True)
        cols[1].metric("Tokens sent", num(call.tokens_after or 0), border=True)
        cols[2].metric("Messages seen → sent", f"{len(call.history)} → {len(call.sent)}",
                       border=True)  # fmt: skip
        cols[3].metric("Status", call.status, border=True)
        st.caption(f"Configuration in force: {md_escape(config_name(call.configuration))}")
        judged = call_verdict(replay)
        if judged is not None:
            step = call_step(judged, cannot_fit=call.status == "cannot-fit")
            verdict_bar(step, key="runs_call_verdict")
        with st.container(key="runs_replay"):
            if replay.reproduced:
                st.success(f"Replay {md_escape(replay.detail)}.", icon=":material/replay:")
            else:
                st.warning(f"Replay: {md_escape(replay.detail)}.", icon=":material/replay:")
        buttons = st.columns(2)
        if buttons[0].button(
            "Open in the Strategy lab",
            key="runs_open_lab",
            icon=":material/tune:",
            type="primary",
            disabled=call.configuration is None,
            width="stretch",
        ):
            runs_state.open_call(call, LAB_PAGE)
        if call.status == "cannot-fit" and buttons[1].button(
            "Open in the Cannot-fit debugger",
            key="runs_open_debugger",
            icon=":material/troubleshoot:",
            width="stretch",
        ):
            runs_state.open_call(call, DEBUGGER_PAGE)


def replay_note() -> None:
    """On the lab: what the replay of a call opened from the Runs page said."""
    ref = state.active_ref()
    note = runs_state.replay_note(ref.digest if ref is not None else None)
    if note is None:
        return
    reproduced, detail = note
    text = f"Opened from the Runs page with the recorded configuration. Replay {detail}."
    if reproduced:
        st.caption(md_escape(text))
    else:
        st.warning(md_escape(text), icon=":material/replay:")


__all__ = ["recorded_call", "replay_note"]
