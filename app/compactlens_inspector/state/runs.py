"""The Runs page's session state: the folder or uploads it reads, the runs listed, the
open run's calls (read incrementally), and opening a call in the lab or the debugger.

A folder is read by one :class:`~compactlens.integrations.RunsFolder` per session, which
remembers how far it read each file: each look reads only what agents appended. The open
run keeps a :class:`~compactlens.integrations.CallReader` and its points (one per call,
each with the verdict of its replay, computed once); nothing else of a run is held.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from compactlens.integrations import (
    CallReader,
    FileProblem,
    RecordedCall,
    RunsFolder,
    RunSummary,
    read_call,
    read_uploads,
    summarize_bytes,
)
from compactlens_inspector.exports.snippet import FRAMEWORKS
from compactlens_inspector.serving.runs_folders import FolderAccess, folder_access
from compactlens_inspector.state.inputs import add_source, set_lab, set_tokenizer
from compactlens_inspector.state.widgets import forget
from compactlens_inspector.views.runs import (
    VERDICT_CALLS,
    CallPoint,
    call_input,
    call_point,
    lab_config_for,
    replay_verdict,
)

FOLDER = "cl_runs_folder"
UPLOADS = "cl_runs_uploads"
UPLOAD_LISTING = "cl_runs_upload_listing"
READER = "cl_runs_reader"
OPEN_RUN = "cl_runs_open"
#: (transcript digest, what the replay of the opened call said), for the lab's note.
REPLAY_NOTE = "cl_runs_replay_note"
EXPORT_FRAMEWORK = "export_framework"


def access() -> FolderAccess:
    """Whether this server may open folders by path."""
    return folder_access(str(st.get_option("server.address") or ""))


def open_folder(path: Path) -> None:
    st.session_state[FOLDER] = str(path)
    st.session_state.pop(UPLOADS, None)
    st.session_state.pop(READER, None)
    st.session_state.pop(OPEN_RUN, None)


def open_uploads(files: list[tuple[str, bytes]]) -> None:
    """Read uploaded recordings (``.jsonl`` files, ``.zip`` archives). Raises
    TranscriptError for a file it cannot open."""
    recordings = read_uploads(files)
    runs, problems, _ = summarize_bytes(recordings)  # read once, not on every rerun
    st.session_state[UPLOADS] = recordings
    st.session_state[UPLOAD_LISTING] = (runs, problems)
    st.session_state.pop(FOLDER, None)
    st.session_state.pop(READER, None)
    st.session_state.pop(OPEN_RUN, None)


def source_label() -> str | None:
    folder = st.session_state.get(FOLDER)
    if isinstance(folder, str):
        return folder
    uploads = st.session_state.get(UPLOADS)
    if isinstance(uploads, dict):
        return f"{len(uploads)} uploaded recording(s)"
    return None


def following() -> bool:
    """Whether the runs come from a folder (which agents may still be writing)."""
    return isinstance(st.session_state.get(FOLDER), str)


def _folder() -> RunsFolder | None:
    path = st.session_state.get(FOLDER)
    if not isinstance(path, str):
        return None
    reader = st.session_state.get(READER)
    if not isinstance(reader, RunsFolder) or str(reader.folder) != path:
        reader = RunsFolder(path, skim=True)  # listed from each file's first and last lines
        st.session_state[READER] = reader
    return reader


def look() -> int:
    """Read what was appended to the folder since the last look; the new calls' count.
    Raises ConfigError when the folder is gone."""
    folder = _folder()
    return 0 if folder is None else len(folder.refresh().calls)


def listing() -> tuple[list[RunSummary], list[FileProblem]]:
    """The runs and the files not (wholly) listed, as of the last look."""
    folder = _folder()
    if folder is not None:
        return folder.runs, folder.problems
    uploads = st.session_state.get(UPLOADS)
    if isinstance(uploads, dict):
        listed = st.session_state.get(UPLOAD_LISTING)
        if not isinstance(listed, tuple):
            runs, problems, _ = summarize_bytes(uploads)
            listed = (runs, problems)
            st.session_state[UPLOAD_LISTING] = listed
        return list(listed[0]), list(listed[1])
    return [], []


@dataclass(slots=True)
class OpenRun:
    """The run on screen: its reader, how far it read, its points."""

    name: str
    reader: CallReader
    offset: int = 0
    points: list[CallPoint] = field(default_factory=list)
    error: str = ""


def _bytes_after(run: RunSummary, offset: int) -> bytes:
    uploads = st.session_state.get(UPLOADS)
    if isinstance(uploads, dict):
        data = uploads.get(run.name, b"")
        return bytes(data[offset:])
    with Path(run.path).open("rb") as f:
        f.seek(offset)
        return f.read()


def run_points(run: RunSummary) -> OpenRun:
    """The open run's points, after reading what was appended to its file."""
    opened = st.session_state.get(OPEN_RUN)
    if not isinstance(opened, OpenRun) or opened.name != run.name:
        opened = OpenRun(name=run.name, reader=CallReader(run.name))
        st.session_state[OPEN_RUN] = opened
    if opened.error:
        return opened
    data = _bytes_after(run, opened.offset)
    opened.offset += len(data)
    try:
        for call in opened.reader.feed(data):
            verdicts = len(opened.points) < VERDICT_CALLS
            opened.points.append(call_point(call, with_verdict=verdicts))
    except Exception as exc:  # a bad line: show what was read and why it stopped
        opened.error = str(exc)
    return opened


def recorded_call(run: RunSummary, seq: int) -> RecordedCall:
    """Call ``seq`` of ``run`` with the exact history it saw."""
    uploads = st.session_state.get(UPLOADS)
    if isinstance(uploads, dict):
        return read_call(bytes(uploads[run.name]), seq, run.name)
    return read_call(run.path, seq, run.name)


def open_call(call: RecordedCall, page: str) -> None:
    """Make the history ``call`` saw the active transcript, with the recorded
    configuration, tokenizer and framework (for Export), then go to ``page``."""
    from compactlens.integrations import replay_call

    config = lab_config_for(call.configuration, label=f"{call.run} call {call.seq}")
    name, data = call_input(call)
    loaded = add_source(name, data, "upload")
    set_lab(config)
    tokenizer = (call.configuration or {}).get("tokenizer")
    if isinstance(tokenizer, str):
        set_tokenizer(tokenizer)
    if call.framework in FRAMEWORKS:
        st.session_state[EXPORT_FRAMEWORK] = call.framework
    replay = replay_call(call)
    st.session_state[REPLAY_NOTE] = (loaded.content_hash, replay.reproduced, replay.detail)
    forget("sb_")
    st.switch_page(page)


def replay_note(digest: str | None) -> tuple[bool, str] | None:
    """What the replay of the call opened from the Runs page said, if ``digest`` is it."""
    note = st.session_state.get(REPLAY_NOTE)
    if isinstance(note, tuple) and len(note) == 3 and note[0] == digest:
        return bool(note[1]), str(note[2])
    return None


def upload_key(files: list[tuple[str, bytes]]) -> str:
    """A key for a set of uploaded files (so a rerun does not read them again)."""
    h = hashlib.sha256()
    for name, data in files:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


__all__ = [
    "OpenRun",
    "access",
    "following",
    "listing",
    "look",
    "open_call",
    "open_folder",
    "open_uploads",
    "recorded_call",
    "replay_note",
    "replay_verdict",
    "run_points",
    "source_label",
    "upload_key",
]
