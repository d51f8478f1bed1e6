"""The notebook's ``debug_compact()`` gives a ``compact()`` call the next step and the
fixes ``compactlens report`` gives the same settings (the library's
``advise_compact``), lists nothing for a call that fits and is safe, and Apply shows the
verdict the fix promised."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from compactlens import load_transcript
from compactlens.analysis import CorpusConfig, run_corpus_report
from compactlens.notebook import debug_compact

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_transcripts"
CORPUS = ROOT.parent / "shared" / "corpus"

pytestmark = pytest.mark.slow

CASES = [
    (SAMPLES / "coding_agent.json", 3000, 4),
    (SAMPLES / "cannot_fit_16k.json", 12000, 4),
    (SAMPLES / "support_long.json", 6000, 2),
]


def _report_step(tmp_path: Path, path: Path, settings: dict[str, Any]) -> str:
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(path, folder / path.name)
    config = CorpusConfig.from_dict({"compact": settings})
    (row,) = run_corpus_report(folder, config, jobs=1).rows
    assert row.next_step is not None
    return row.next_step


@pytest.mark.parametrize(("path", "target", "keep"), CASES, ids=lambda v: str(v)[-24:])
def test_the_next_step_is_the_reports(tmp_path: Path, path: Path, target: int, keep: int) -> None:
    d = debug_compact(load_transcript(path), target_tokens=target, keep_last_messages=keep)
    settings = {"target_tokens": target, "keep_last_messages": keep}
    assert d.verdict.next_step == _report_step(tmp_path, path, settings)
    # The card's next step is the first listed fix, in its words.
    if d.fixes:
        assert d.fixes[0].words in d.verdict.next_step
        assert d.apply_button.disabled is False


@pytest.mark.parametrize(("path", "target", "keep"), CASES[:2], ids=lambda v: str(v)[-24:])
def test_apply_gives_the_verdict_the_fix_promised(path: Path, target: int, keep: int) -> None:
    d = debug_compact(load_transcript(path), target_tokens=target, keep_last_messages=keep)
    assert d.verdict.level != "safe" and d.fixes
    for rank, fix in enumerate(d.fixes):
        applied = d.apply(rank)
        assert fix.verdict is not None
        got = applied.verdict
        assert (got.level, got.summary) == (fix.verdict.level, fix.verdict.summary)
        assert applied.settings.key == fix.key
        assert fix.words in d.after.value or json.dumps(fix.words)[1:-1] in d.after.value
    # Applying the first fix gives no new fix that reproduces the same result.
    after = d.apply(0)
    assert all(f.verdict is None or f.verdict.summary != after.verdict.summary for f in after.fixes)


def test_a_call_that_fits_and_is_safe_lists_nothing() -> None:
    path = CORPUS / "tau_bench_airline__task44_trial0.json"
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared corpus is not checked out)")
    d = debug_compact(load_transcript(path), target_tokens=2000)
    assert d.verdict.level == "safe"
    assert d.fixes == () and d.advice.tried == 0
    assert d.apply_button.disabled and d.choice.disabled
    assert "Nothing to fix" in d._note()


def test_a_context_window_caps_every_fix() -> None:
    t = load_transcript(SAMPLES / "cannot_fit_16k.json")
    free = debug_compact(t, target_tokens=12000)
    assert any(f.target_tokens > 16000 for f in free.fixes)  # the whole history, 23,571
    capped = debug_compact(t, target_tokens=12000, context_window=16000)
    assert all(max(f.target_tokens, f.trigger_tokens or 0) <= 16000 for f in capped.fixes)
    assert "16,000-token context window" in capped.verdict.next_step


def test_bad_settings_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="target_tokens"):
        debug_compact(load_transcript(SAMPLES / "coding_agent.json"), target_tokens=0)
