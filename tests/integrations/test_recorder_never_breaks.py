"""Recording never breaks the agent and never writes outside its folder (issue 27, finding
15): a value JSON cannot hold, a write that fails, a framework name with a path in it."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import pytest

from compactlens import CompactlensError, ConfigError, load_transcript
from compactlens.integrations import Compactor

CONFIG = {"type": "truncation", "max_n": 10_000, "compact_to": 5_000}


def _history(extra: Any = None) -> list[dict[str, Any]]:
    user: dict[str, Any] = {"role": "user", "content": "what is the status?"}
    if extra is not None:
        user["metadata"] = extra
    return [{"role": "system", "content": "Be brief."}, user]


@pytest.mark.parametrize("framework", ["../../x", "a/b", "..", "", "x\\y", "/abs", "a" * 65])
def test_a_framework_name_with_a_path_is_refused(tmp_path: Path, framework: str) -> None:
    with pytest.raises(ConfigError) as info:
        Compactor.from_config(CONFIG, record_to=tmp_path / "runs", framework=framework)
    assert "framework" in str(info.value)
    assert isinstance(info.value, CompactlensError)
    assert not (tmp_path / "runs").exists()
    assert not any(p.suffix == ".jsonl" for p in tmp_path.rglob("*"))


def test_a_nan_in_the_history_is_recorded_as_null(tmp_path: Path) -> None:
    compactor = Compactor.from_config(CONFIG, record_to=tmp_path)
    history = _history({"score": math.nan, "ok": 1.5})
    run = compactor.run(history, "openai-chat")
    assert run.messages == history
    assert compactor.recorder is not None and compactor.recorder.failures == 0
    transcript = load_transcript(compactor.recorder.path)
    assert [m.text for m in transcript.messages if m.role == "user"] == ["what is the status?"]
    assert '"score": null' in compactor.recorder.path.read_text()


def test_a_failing_write_is_logged_and_the_call_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the recording folder should be")
    compactor = Compactor.from_config(CONFIG, record_to=blocker)
    history = _history()
    with caplog.at_level(logging.WARNING, logger="compactlens.integrations"):
        first = compactor.run(history, "openai-chat")
        second = compactor.run([*history, {"role": "assistant", "content": "ok"}], "openai-chat")
    assert first.messages == history and len(second.messages) == 3
    assert compactor.recorder is not None and compactor.recorder.failures == 2
    warnings = [r for r in caplog.records if r.name == "compactlens.integrations"]
    assert len(warnings) == 2
    assert "could not record a model call" in warnings[0].getMessage()
    assert blocker.read_text() == "a file where the recording folder should be"
