"""Fixtures for the inspector's AppTest and unit tests.

Every test sees the same folder of small synthetic sample transcripts (written once per
session, never the corpus) through ``COMPACTLENS_SAMPLES``, no API key in the
environment, and an AppTest factory for the real entry script.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from apptest_helpers import APP, build_samples
from streamlit.testing.v1 import AppTest

from compactlens_inspector.serving.hosting import SETTINGS


@pytest.fixture(scope="session")
def samples_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("samples")
    build_samples(folder)
    return folder


@pytest.fixture(autouse=True)
def _isolated_env(samples_folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(samples_folder))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("COMPACTLENS_MAX_UPLOAD_MB", raising=False)
    for name in SETTINGS:  # the hosting policy: its defaults unless a test sets one
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture
def sample_doc(samples_folder: Path) -> Callable[[str], dict[str, Any]]:
    def read(name: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((samples_folder / f"{name}.json").read_text())
        return data

    return read


@pytest.fixture
def app() -> Callable[..., AppTest]:
    """A fresh AppTest of ``app/streamlit_app.py``; query parameters may be given."""

    def make(**query: str) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=60)
        for key, value in query.items():
            at.query_params[key] = value
        return at

    return make


@pytest.fixture(autouse=True)
def _fresh_server_budget() -> Iterator[None]:
    """The server's budget for paid calls lives as long as the process (here: the whole
    test run); each test starts with an unused one."""
    from compactlens_inspector.state.endpoints import _server_budget

    _server_budget.clear()
    yield
    _server_budget.clear()
