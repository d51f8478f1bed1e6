"""The Runs page (AppTest): the bundled sample runs listed, filtered, a run's calls with
their replay, a call opened in the lab with its recorded configuration; uploads; and the
policy on opening server folders."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from apptest_helpers import APP, REPO_ROOT, go, texts
from streamlit.testing.v1 import AppTest
from visitor_text import HOSTILE, leaks

from compactlens.integrations import RunsFolder, iter_calls
from compactlens_inspector.serving.runs_folders import (
    RUNS_FOLDERS_ENV,
    folder_access,
    is_loopback,
    resolve_folder,
)

SAMPLES = REPO_ROOT / "sample_transcripts" / "recordings"


def _sample_folder() -> RunsFolder:
    folder = RunsFolder(SAMPLES)
    folder.refresh()
    return folder


def _table(at: AppTest, column: str) -> Any:
    """The table (a DataFrame) that has ``column``."""
    found = [d.value for d in at.dataframe if column in d.value.columns]
    assert found, f"no table with a {column!r} column"
    return found[0]


def _runs_page() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    return go(at, "runs")


def test_folders_open_by_path_only_when_on_and_on_loopback() -> None:
    on = {RUNS_FOLDERS_ENV: "on"}
    assert folder_access("127.0.0.1", on).allowed
    assert folder_access("::1", on).allowed and folder_access("localhost", on).allowed
    assert not folder_access("0.0.0.0", on).allowed
    assert not folder_access("", on).allowed  # every interface
    assert not folder_access("10.1.2.3", on).allowed
    off = folder_access("127.0.0.1", {})
    assert not off.allowed and "upload" in off.reason
    assert is_loopback("127.0.0.5") and not is_loopback("example.org")


def test_resolve_folder_says_what_is_wrong(tmp_path: Path) -> None:
    assert resolve_folder(str(tmp_path)) == tmp_path.resolve()
    with pytest.raises(ValueError, match="no such folder"):
        resolve_folder(str(tmp_path / "missing"))
    (tmp_path / "one.jsonl").write_text("")
    with pytest.raises(ValueError, match="a file, not a folder"):
        resolve_folder(str(tmp_path / "one.jsonl"))


def test_the_sample_runs_list_filter_and_open_a_call_in_the_lab(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(RUNS_FOLDERS_ENV, raising=False)
    at = _runs_page()
    assert not at.exception
    assert "Opening a folder on the server is off" in texts(at)
    assert not [t for t in at.text_input if t.key == "runs_path"]
    at.button(key="runs_open_sample").click().run()
    folder = _sample_folder()
    table = _table(at, "run")
    # A recording named <framework>-<time>-<id> is listed by its id.
    assert sorted(table["run"]) == sorted(r.name.rsplit("-", 1)[1] for r in folder.runs)
    assert list(table["calls"]) == [
        next(r.calls for r in folder.runs if r.name.endswith(f"-{run}")) for run in table["run"]
    ]
    at.toggle(key="runs_only_cannot_fit").set_value(True).run()
    shown = _table(at, "run")
    assert set(shown["run"]) == {r.name.rsplit("-", 1)[1] for r in folder.runs if r.cannot_fits}
    run = next(r for r in folder.runs if r.framework == "pydantic-ai")
    at.selectbox(key="runs_pick").set_value(run.name).run()
    calls = list(iter_calls(Path(run.path).read_bytes(), run.name))
    assert at.selectbox(key="runs_call_pick").options == [
        f"call {c.seq} · {c.tokens_before:,} → {c.tokens_after:,} tokens · {c.status}"
        for c in calls
    ]
    last = calls[-1]
    assert at.selectbox(key="runs_call_pick").value == last.seq  # the last notable call
    assert "reproduced" in texts(at)
    assert at.button(key="runs_open_debugger")  # a cannot-fit call opens in the debugger
    # Its step points to the debugger and names no target of its own: the Runs page said
    # "Raise the target to at least 3,845" where the debugger said 5,821 (review 6, R10).
    bar = texts(at).replace("\\", "")  # Markdown-escaped
    assert "Open this call in the Cannot-fit debugger (below)" in bar
    assert "at least" not in bar
    at.button(key="runs_open_lab").click().run()
    assert not at.exception
    lab = texts(at).replace("\\", "")  # the note is Markdown-escaped
    assert "Opened from the Runs page with the recorded configuration" in lab
    assert "Replay reproduced: cannot-fit, the same" in lab  # the recorded run, again
    assert at.session_state["export_framework"] == "pydantic-ai"
    at = go(at, "export")  # Export writes the tuned configuration back for that framework
    assert not at.exception
    assert at.selectbox(key="export_framework").value == "pydantic-ai"


def test_an_uploaded_zip_lists_its_runs_and_names_a_foreign_file() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(SAMPLES.glob("*.jsonl"))[:2]:
            archive.write(path, f"runs/{path.name}")
        archive.writestr("runs/notes.jsonl", '{"hello": 1}\n')
    at = _runs_page()
    at.file_uploader(key="runs_upload").set_value(
        ("runs.zip", buffer.getvalue(), "application/zip")
    )
    at.run()
    assert not at.exception
    table = _table(at, "run")
    stems = sorted(p.stem for p in sorted(SAMPLES.glob("*.jsonl"))[:2])
    assert sorted(table["run"]) == sorted(stem.rsplit("-", 1)[1] for stem in stems)
    problems = _table(at, "file")
    assert list(problems["file"]) == ["notes"]
    assert "no compactlens.recording header" in problems.iloc[0, 1]


def test_hostile_names_in_a_recording_render_as_text() -> None:
    """A recording's run name, framework, strategy and configuration are untrusted text."""
    head = {"type": "compactlens.recording", "version": 2, "format": "openai-chat",
            "framework": HOSTILE, "started": "2026-11-02T09:00:00.000+00:00"}  # fmt: skip
    call = {
        "type": "compactlens.history", "status": "unchanged", "strategy": HOSTILE,
        "trigger": None, "tokens_before": 5, "tokens_after": 5, "seq": 0,
        "timestamp": HOSTILE, "config": {"strategy": {"type": HOSTILE}},
        "base": "before", "keep": 0, "messages_seen": 1,
        "appended": [{"role": "user", "content": HOSTILE}],
    }  # fmt: skip
    data = (json.dumps(head) + "\n" + json.dumps(call) + "\n").encode()
    at = _runs_page()
    name = "x](javascript:alert(1)) <img src=x onerror=alert(1)>.jsonl"
    at.file_uploader(key="runs_upload").set_value((name, data, "application/octet-stream"))
    at.run()
    assert not at.exception
    assert leaks(at) == []


def test_a_recorded_call_is_judged_with_its_configuration_s_triggers() -> None:
    # agent-framework call 5: 467 tokens, nothing to compact. Judged without the recorded
    # configuration's triggers it read "Fits, with costs ... Compact further below the trigger".
    from compactlens.integrations import read_call, replay_call
    from compactlens_inspector.views.runs import call_triggers, call_verdict

    path = REPO_ROOT / "sample_transcripts" / "recordings"
    recording = next(path.glob("agent-framework-*.jsonl"))
    call = read_call(recording, 5)
    assert call_triggers(call) is not None
    v = call_verdict(replay_call(call))
    assert v is not None and v.numbers.tokens_before == 467
    assert v.numbers.triggers  # the configuration in force has triggers
    # Safe, and its step is to keep it (it may say when the trigger first fires), never
    # to change a trigger.
    assert v.level == "safe" and v.next_step.startswith("Nothing to")
    assert "raise the trigger" not in v.next_step.lower()
