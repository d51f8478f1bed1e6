"""Shared fixtures for the whole test suite.

``repo_root`` is the checkout's root. ``corpus_dir`` is the shared corpus of real agent
transcripts, read-only, at ``<repo root>/../shared/corpus`` (override with the
``COMPACTLENS_CORPUS`` environment variable); tests that use it are skipped with a
clear reason when it is absent. ``corpus_files`` lists its canonical ``*.json``
transcripts. Never copy corpus files into the repository.

Hypothesis runs with the ``ci`` profile when ``CI`` is set (``.ci/run`` runs with
``CI=true``) or ``HYPOTHESIS_PROFILE=ci``: derandomized (each property test tries the
same examples on every run, so a red CI is the code's doing and reproduces), no example
database, and no deadline or too-slow health check, which a busy 2-core machine trips
without any fault in the code; the example counts are the tests' own. Elsewhere the
``dev`` profile keeps Hypothesis's random search (new examples on every run) and only
drops the deadline.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS_ENV = "COMPACTLENS_CORPUS"

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def corpus_path() -> Path:
    """Where the shared corpus should be (it may not exist)."""
    override = os.environ.get(CORPUS_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return (REPO_ROOT / ".." / "shared" / "corpus").resolve()


def corpus_transcripts() -> list[Path]:
    """The canonical transcripts of the corpus, sorted (empty when it is absent)."""
    root = corpus_path()
    if not root.is_dir():
        return []
    return sorted(root.glob("*.json"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    root = corpus_path()
    if not root.is_dir():
        pytest.skip(
            f"shared transcript corpus not found at {root} "
            f"(expected <repo root>/../shared/corpus, or set {CORPUS_ENV})"
        )
    return root


@pytest.fixture(scope="session")
def corpus_files(corpus_dir: Path) -> list[Path]:
    files = sorted(corpus_dir.glob("*.json"))
    if not files:
        pytest.skip(f"the transcript corpus at {corpus_dir} holds no *.json transcripts")
    return files


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the browser and AppTest tests, and run the browser tests last.

    Every test under ``tests/e2e`` is ``e2e``; every other test that asks for the
    ``app`` fixture of ``tests/app/conftest.py`` (an AppTest of the real entry script) is
    ``apptest``. Playwright's sync API keeps an event loop running in the main thread for
    as long as the session-scoped browser lives; a later test calling ``asyncio.run``
    would fail with "cannot be called from a running event loop".
    """
    for item in items:  # a browser test without the marker would still start the loop
        if "e2e" in item.path.parts and item.get_closest_marker("e2e") is None:
            item.add_marker(pytest.mark.e2e)
        elif _uses_apptest_fixture(item) and item.get_closest_marker("apptest") is None:
            item.add_marker(pytest.mark.apptest)
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)


def _uses_apptest_fixture(item: pytest.Item) -> bool:
    names: list[str] = getattr(item, "fixturenames", [])
    return "app" in names and item.get_closest_marker("e2e") is None
