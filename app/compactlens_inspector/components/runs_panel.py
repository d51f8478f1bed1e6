"""The Runs page's parts: where the recordings come from, the live follower, the run
table with its filters, and a run's timeline of calls."""

from __future__ import annotations

from typing import Any

import streamlit as st

from compactlens import CompactlensError, TranscriptError
from compactlens.integrations import RecordedCall, RunSummary
from compactlens_inspector.components.tables import table
from compactlens_inspector.serving.loader import upload_limits, upload_size_mb
from compactlens_inspector.serving.runs_folders import resolve_folder, sample_runs_dir
from compactlens_inspector.state import runs as runs_state
from compactlens_inspector.style.numbers import INT_FORMAT, num
from compactlens_inspector.style.safety import md_code, md_escape
from compactlens_inspector.style.wording import plural
from compactlens_inspector.views.runs import (
    SORTS,
    filter_runs,
    problem_rows,
    run_rows,
    target_line,
    timeline_figure,
)

#: Seconds between two looks at a followed folder.
FOLLOW_EVERY = 1.0


def choose_source() -> None:
    """A folder by path (when this server allows it), the bundled sample folder, or an
    upload of several recordings or a zip."""
    access = runs_state.access()
    with st.container(border=True, key="runs_source"):
        cols = st.columns([3, 1])
        if access.allowed:
            path = cols[0].text_input(
                "Folder of recordings (on this machine)",
                key="runs_path",
                placeholder="/path/to/the/folder/your/agent/records/to",
            )
            if cols[1].button("Open folder", key="runs_open_path", width="stretch"):
                try:
                    runs_state.open_folder(resolve_folder(path or ""))
                except ValueError as exc:
                    st.error(md_escape(str(exc)), icon=":material/folder_off:")
        else:
            cols[0].caption(md_escape(access.reason))
        if cols[1].button("Bundled sample runs", key="runs_open_sample", width="stretch"):
            runs_state.open_folder(sample_runs_dir())
        files = st.file_uploader(
            "Or upload recordings (several .jsonl files, or a .zip of them)",
            type=["jsonl", "zip"],
            accept_multiple_files=True,
            key="runs_upload",
            max_upload_size=upload_size_mb(),
            help=f"Up to {upload_size_mb()} MB per file (COMPACTLENS_MAX_UPLOAD_MB).",
        )
        if files:
            _read_uploads([(f.name, f.getvalue()) for f in files])
        label = runs_state.source_label()
        if label is not None:
            st.caption(f"Reading {md_code(label)}")


def _read_uploads(files: list[tuple[str, bytes]]) -> None:
    limit = upload_limits().max_upload_bytes
    too_big = [name for name, data in files if len(data) > limit]
    if too_big:
        st.error(f"Too large to upload here: {md_escape(', '.join(too_big))}")
        return
    key = runs_state.upload_key(files)
    if st.session_state.get("cl_runs_upload_key") == key:
        return
    try:
        runs_state.open_uploads(files)
    except TranscriptError as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")
        return
    st.session_state["cl_runs_upload_key"] = key


def follow() -> None:
    """Look at the folder for new calls about every second (only what was appended is
    read); when some arrived, the page redraws. Idle, only this line is redrawn."""
    if not runs_state.following():
        return

    @st.fragment(run_every=FOLLOW_EVERY)
    def _look() -> None:
        try:
            new = runs_state.look()
        except CompactlensError as exc:  # the folder was removed or renamed
            st.error(md_escape(str(exc)), icon=":material/folder_off:")
            return
        if new and st.session_state.get("cl_runs_drawn"):
            st.session_state["cl_runs_drawn"] = False
            st.rerun(scope="app")
        with st.container(key="runs_following"):
            st.caption(":material/sync: Following the folder: new calls appear within a second.")

    _look()
    st.session_state["cl_runs_drawn"] = True


def runs_table() -> RunSummary | None:
    """The run table with its filters; the run picked to open."""
    runs, problems = runs_state.listing()
    if problems:
        with st.expander(f"{plural(len(problems), 'file')} not (wholly) listed", expanded=True):
            table(problem_rows(problems), hide_index=True, width="stretch", key="runs_problems")
    if not runs:
        st.info(
            "No runs here yet: a run appears at its first model call.",
            icon=":material/hourglass_empty:",
        )
        return None
    frameworks = sorted({r.framework for r in runs})
    cols = st.columns([1.2, 1.2, 1])
    only = cols[0].toggle("Only runs with a cannot-fit", key="runs_only_cannot_fit")
    chosen = cols[1].selectbox("Framework", ["all", *frameworks], key="runs_framework")
    sort = cols[2].selectbox("Sort", list(SORTS), key="runs_sort")
    shown = filter_runs(
        runs, only_cannot_fit=bool(only), framework=None if chosen == "all" else chosen,
        sort=str(sort),
    )  # fmt: skip
    calls = sum(r.calls for r in runs)
    with st.container(key="runs_count"):
        st.caption(
            f"{num(len(shown))} of {plural(len(runs), 'run')} shown · "
            f"{plural(calls, 'model call')} in all"
        )
    table(
        run_rows(shown),
        hide_index=True,
        width="stretch",
        key="runs_table",
        height=min(38 + 35 * len(shown), 420),
        column_config={
            "run": st.column_config.TextColumn(help="The recording's name"),
            "calls": st.column_config.NumberColumn(help="Model calls", format=INT_FORMAT),
            "largest history": st.column_config.NumberColumn(
                help="The most tokens one call's history held", format=INT_FORMAT
            ),
            "saved": st.column_config.NumberColumn(
                help="Tokens compaction saved over the run's calls", format=INT_FORMAT
            ),
        },
    )
    if not shown:
        return None
    names = [r.name for r in shown]
    pick = st.selectbox("Open run", names, key="runs_pick")
    return next(r for r in shown if r.name == pick)


def _clicked(selection: Any) -> int | None:
    try:
        points = selection["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points or []:
        x = point.get("x")
        if isinstance(x, int | float):
            return int(x)
    return None


def run_timeline(run: RunSummary) -> RecordedCall | None:
    """The open run: one point per call (hover: its verdict); the call picked."""
    opened = runs_state.run_points(run)
    points = opened.points
    st.subheader(f"{md_escape(run.name)}", anchor=False)
    if opened.error:
        st.warning(f"Reading stopped: {md_escape(opened.error)}", icon=":material/warning:")
    if not points:
        st.info("This run has no model call yet.")
        return None
    selection = st.plotly_chart(
        timeline_figure(points, target_line(opened.reader.config)),
        key="runs_timeline",
        on_select="rerun",
        selection_mode="points",
        config={"displaylogo": False},
    )
    clicked = _clicked(selection)
    seqs = [p.seq for p in points]
    labels = {p.seq: p.label for p in points}
    if (
        clicked is not None
        and clicked in labels
        and clicked != st.session_state.get("cl_runs_clicked")
    ):
        st.session_state["cl_runs_clicked"] = clicked
        st.session_state["runs_call_pick"] = clicked
    if st.session_state.get("cl_runs_pick_of") != run.name:  # another run: its own default
        st.session_state["cl_runs_pick_of"] = run.name
        st.session_state.pop("runs_call_pick", None)
    if st.session_state.get("runs_call_pick") not in labels:
        notable = [p.seq for p in points if p.status != "unchanged"]
        st.session_state["runs_call_pick"] = notable[-1] if notable else seqs[-1]
    seq = st.selectbox(
        "Call (or click a point above)", seqs, format_func=lambda k: labels[k],
        key="runs_call_pick",
    )  # fmt: skip
    return runs_state.recorded_call(run, int(seq))


__all__ = ["choose_source", "follow", "run_timeline", "runs_table"]
