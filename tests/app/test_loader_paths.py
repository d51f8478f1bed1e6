"""The bundled samples are found from the loader's own place in the package, without
``COMPACTLENS_SAMPLES`` (the folder a fresh checkout and ``make demo`` open on)."""

from __future__ import annotations

import pytest
from apptest_helpers import REPO_ROOT

from compactlens_inspector.serving.loader import SAMPLES_ENV, samples_dir


def test_the_default_samples_are_the_repository_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SAMPLES_ENV, raising=False)
    folder = samples_dir()
    assert folder == REPO_ROOT / "sample_transcripts"
    assert (folder / "coding_agent.json").is_file()
