"""A folder of recordings as a run history: incremental reading, rebuilt histories, replay."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from integration_support import RECORDED_CONFIG, _turn

from compactlens.integrations import Compactor, Recorder, RunsFolder, read_call, replay_call
from compactlens.integrations.outcome import CompactorRun
from compactlens.integrations.runs import iter_calls, read_uploads, summarize_bytes


def _loop(folder: Path, turns: int, config: dict[str, Any] | None = None) -> tuple[Compactor, list]:
    """An agent loop (send what the compactor keeps); the histories each call saw."""
    compactor = Compactor.from_config(config or RECORDED_CONFIG, record_to=folder)
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    seen = []
    for t in range(turns):
        history = [*history, *_turn(t)[:1]]
        seen.append(list(history))
        result = compactor.run(history, "openai-chat")
        history = [*result.messages, *_turn(t)[1:]]
    return compactor, seen


def test_the_folder_lists_a_run_and_reads_only_what_was_appended(tmp_path: Path) -> None:
    compactor = Compactor.from_config(RECORDED_CONFIG, record_to=tmp_path)
    folder = RunsFolder(tmp_path)
    assert folder.refresh().calls == [] and folder.runs == []
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    compactions = read = 0
    for t in range(6):
        history = [*history, *_turn(t)[:1]]
        result = compactor.run(history, "openai-chat")
        compactions += result.changed
        history = [*result.messages, *_turn(t)[1:]]
        assert compactor.recorder is not None
        size = compactor.recorder.path.stat().st_size
        before = sum(r.calls for r in folder.runs)
        update = folder.refresh()
        # Only the new line was read (the first refresh also read the header).
        assert [c.seq for c in update.calls] == [t]
        assert update.bytes_read == size - read
        read = size
        assert sum(r.calls for r in folder.runs) == before + 1
    assert folder.refresh().bytes_read == 0
    (run,) = folder.runs
    assert run.calls == 6 and run.compactions == compactions >= 1
    assert run.framework == "python" and run.format == "openai-chat" and run.version == 2
    assert run.config_name == "Truncation"  # the vocabulary's words
    assert folder.problems == []


def test_partial_and_foreign_files_are_listed_with_their_reason(tmp_path: Path) -> None:
    _loop(tmp_path, 4)
    (path,) = tmp_path.glob("*.jsonl")
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"".join(lines[:3]) + lines[3][:20])
    (tmp_path / "notes.jsonl").write_text('{"hello": 1}\n')
    (tmp_path / "broken.jsonl").write_bytes(lines[0] + b"{not json\n" + lines[1])
    folder = RunsFolder(tmp_path)
    folder.refresh()
    reasons = {p.name: p.reason for p in folder.problems}
    assert reasons["growing.jsonl"].startswith("partial: line 4 is cut off mid-line (20 bytes")
    assert "no compactlens.recording header" in reasons["notes.jsonl"]
    assert reasons["broken.jsonl"].startswith("line 2: not JSON")
    by_name = {r.name: r for r in folder.runs}
    assert by_name["growing"].calls == 2 and by_name["growing"].partial
    with growing.open("ab") as f:  # the rest of the line arrives
        f.write(lines[3][20:])
    update = folder.refresh()
    assert [c.seq for c in update.calls] == [2]
    assert "growing.jsonl" not in {p.name for p in folder.problems}


def test_read_call_rebuilds_the_exact_history_and_replay_reproduces_it(tmp_path: Path) -> None:
    compactor, seen = _loop(tmp_path, 9)
    assert compactor.recorder is not None
    path = compactor.recorder.path
    calls = list(iter_calls(path.read_bytes(), path.stem))
    assert [c.history for c in calls] == seen
    assert any(c.compacted for c in calls)
    for call in calls:
        assert read_call(path, call.seq).history == call.history
        replay = replay_call(call)
        assert replay.reproduced, replay.detail
        assert replay.detail.startswith(f"reproduced: {call.status}")


def test_a_replay_under_another_configuration_says_it_does_not_reproduce(tmp_path: Path) -> None:
    compactor, _ = _loop(tmp_path, 9)
    assert compactor.recorder is not None
    call = next(c for c in iter_calls(compactor.recorder.path.read_bytes()) if c.compacted)
    assert call.configuration is not None
    other = dict(call.configuration)
    other["strategy"] = {
        **other["strategy"],
        "trigger": {"op": "exceed", "metric": "messages", "n": 6},
    }
    replay = replay_call(type(call)(**{**_fields(call), "configuration": other}))
    assert not replay.reproduced
    assert "differ from message" in replay.detail or "ended" in replay.detail


def _fields(call: Any) -> dict[str, Any]:
    return {name: getattr(call, name) for name in call.__dataclass_fields__}


def test_a_version_1_recording_still_reads(tmp_path: Path) -> None:
    head = {"type": "compactlens.recording", "version": 1, "format": "openai-chat"}
    first = [{"role": "user", "content": "hi"}]
    second = [*first, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "?"}]
    lines = [head, {"type": "compactlens.history", "seq": 0, "messages": first}]
    lines.append({"type": "compactlens.history", "seq": 1, "messages": second})
    data = "".join(json.dumps(x) + "\n" for x in lines).encode()
    assert [c.history for c in iter_calls(data)] == [first, second]
    runs, problems, _ = summarize_bytes({"old": data})
    assert problems == [] and runs[0].calls == 2 and runs[0].version == 1
    replay = replay_call(read_call(data, 1))
    assert not replay.reproduced and "no configuration" in replay.detail


def test_uploads_read_jsonl_files_and_zip_members(tmp_path: Path) -> None:
    _loop(tmp_path / "a", 3)
    _loop(tmp_path / "b", 5)
    (one,) = (tmp_path / "a").glob("*.jsonl")
    (two,) = (tmp_path / "b").glob("*.jsonl")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"runs/{two.name}", two.read_bytes())
        archive.writestr("runs/readme.txt", "not a recording")
    found = read_uploads([(one.name, one.read_bytes()), ("runs.zip", buffer.getvalue())])
    assert set(found) == {one.stem, two.stem}
    runs, problems, calls = summarize_bytes(found)
    assert sorted(r.calls for r in runs) == [3, 5] and problems == []
    assert len(calls[two.stem]) == 5


def test_a_long_run_stores_each_message_about_once(tmp_path: Path) -> None:
    compactor, seen = _loop(
        tmp_path,
        120,
        {**RECORDED_CONFIG, "trigger": {"op": "exceed", "metric": "messages", "n": 60}},
    )
    assert compactor.recorder is not None
    records = [json.loads(x) for x in compactor.recorder.path.read_text().splitlines()[1:]]
    stored = sum(len(r["appended"]) + len(r.get("after_parts", [])) for r in records)
    whole = sum(len(h) for h in seen)  # what storing every call's history would hold
    assert stored * 5 < whole


_ITEMS = st.builds(
    lambda role, text: {"role": role, "content": text},
    st.sampled_from(["user", "assistant"]),
    st.text(max_size=8),
)


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 6), st.lists(_ITEMS, max_size=4), st.booleans()), max_size=12
    )
)
def test_any_sequence_of_histories_rebuilds_exactly(
    tmp_path_factory: Any, steps: list[tuple[int, list[dict[str, Any]], bool]]
) -> None:
    """Whatever each call keeps of the previous history (or of what was sent) and adds,
    the rebuilt histories are exactly what the recorder was given."""
    folder = tmp_path_factory.mktemp("prop")
    recorder = Recorder(folder, framework="prop", format="openai-chat")
    previous: list[dict[str, Any]] = []
    given_histories = []
    for keep, new, compact in steps:
        history = [*previous[:keep], *new]
        sent = history[len(history) // 2 :] if compact else history
        recorder.record(
            history,
            CompactorRun(
                messages=sent,
                changed=compact,
                status="compacted" if compact else "unchanged",
                strategy="test",
                tokens_before=len(history),
                tokens_after=len(sent),
            ),
        )
        given_histories.append(history)
        previous = sent if keep % 2 else history
    if not steps:
        return
    rebuilt = [c.history for c in iter_calls(recorder.path.read_bytes())]
    assert rebuilt == given_histories


def test_the_bundled_sample_recordings_list_and_every_call_reproduces() -> None:
    samples = Path(__file__).resolve().parents[2] / "sample_transcripts" / "recordings"
    folder = RunsFolder(samples)
    folder.refresh()
    runs = {r.framework: r for r in folder.runs}
    assert set(runs) == {"langchain", "openai-agents", "pydantic-ai", "agent-framework"}
    assert folder.problems == []
    assert runs["pydantic-ai"].cannot_fits > 0 and runs["langchain"].compactions > 0
    assert runs["agent-framework"].compactions == 0
    for run in runs.values():
        for call in iter_calls(Path(run.path).read_bytes(), run.name):
            replay = replay_call(call)  # summaries answer from the recording: no model
            assert replay.reproduced, (run.name, call.seq, replay.detail)


def test_a_skimmed_folder_lists_the_same_runs_as_a_full_read(tmp_path: Path) -> None:
    """Skimming (first lines and the last line's running totals) lists what reading every
    line lists, and goes on with the calls appended afterwards."""
    from compactlens.integrations import runs as runs_module

    compactor, _ = _loop(tmp_path, 60)
    _loop(tmp_path, 3)
    assert compactor.recorder is not None
    saved = runs_module.SKIM_BYTES
    runs_module.SKIM_BYTES = 8192  # so a small recording is skimmed
    try:
        skimmed = RunsFolder(tmp_path, skim=True)
        update = skimmed.refresh()
    finally:
        runs_module.SKIM_BYTES = saved
    full = RunsFolder(tmp_path)
    full.refresh()
    assert skimmed.runs == full.runs
    big = compactor.recorder.path.stem
    assert big not in {c.run for c in update.calls}  # skimmed: its calls were not read
    assert update.bytes_read < compactor.recorder.path.stat().st_size
    history = [{"role": "user", "content": "one more"}]
    compactor.run(history, "openai-chat")
    assert [c.seq for c in skimmed.refresh().calls] == [60]
    full.refresh()
    assert skimmed.runs == full.runs
