"""The refactor guard: every golden case gives byte-identical JSON (see golden_cases.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden_cases import GOLDEN_FILE, REPO, all_cases, corpus_path, digest, stable_json

ARTIFACTS = REPO / "test-artifacts" / "golden"


def _safe(case: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.=" else "_" for c in case)


@pytest.mark.slow
def test_every_golden_case_is_byte_identical() -> None:
    expected: dict[str, str] = json.loads(GOLDEN_FILE.read_text())
    seen: set[str] = set()
    changed: list[str] = []
    for case, make in all_cases():
        seen.add(case)
        text = stable_json(make())
        if expected.get(case) != digest(text):
            changed.append(case)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / f"{_safe(case)}.json").write_text(text, encoding="utf-8")
    missing = sorted(set(expected) - seen)
    if not corpus_path().is_dir():
        missing = [c for c in missing if not c.startswith("corpus/")]
    assert not missing, f"golden cases no longer produced: {missing[:10]}"
    assert not changed, (
        f"{len(changed)} golden cases changed (actual JSON in {ARTIFACTS}): {changed[:10]}"
    )
    if not corpus_path().is_dir():
        pytest.skip(f"corpus absent at {corpus_path()}: only the bundled samples were checked")


def test_golden_file_covers_samples_and_presets() -> None:
    expected = json.loads(GOLDEN_FILE.read_text())
    samples = sorted(p.name for p in (REPO / "sample_transcripts").glob("*.json"))
    for name in samples:
        for tok in ("estimate", "o200k_base"):
            assert f"samples/{name}|{tok}|half|reference" in expected
            assert f"samples/{name}|{tok}|tenth|compact" in expected
    assert Path(GOLDEN_FILE).stat().st_size > 0
