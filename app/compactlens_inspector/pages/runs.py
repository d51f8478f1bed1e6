"""Runs: a folder of recordings (``record_to=``) as a run history, followed live; a run's
calls on a timeline; any call one click from the Strategy lab or the debugger."""

from __future__ import annotations

from compactlens_inspector.components import runs_panel
from compactlens_inspector.components.recorded_call import recorded_call
from compactlens_inspector.pages._common import header, page
from compactlens_inspector.state import runs as runs_state


def render() -> None:
    header(
        "Runs",
        "Your agent's runs, from the recordings its compactlens integration writes "
        "when given a folder to record to: every model call, what compaction did to it, and "
        "a replay.",
    )
    runs_panel.choose_source()
    if runs_state.source_label() is None:
        return
    runs_panel.follow()
    run = runs_panel.runs_table()
    if run is None:
        return
    call = runs_panel.run_timeline(run)
    if call is not None:
        recorded_call(call)


if __name__ == "__main__":
    page(render, "runs")
