"""Keep the issue-15 speed benchmark from rotting (structure only, no timing asserted)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from compactlens import validate_pairing

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _module() -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("bench_speed")


def test_the_wide_workload_is_seeded_heavier_and_well_paired() -> None:
    bench = _module()
    wide = bench.wide_messages(8)
    assert wide == bench.wide_messages(8)
    assert not validate_pairing(wide)
    calls = [len(m["tool_calls"]) for m in wide if m.get("tool_calls")]
    assert len(calls) == 8 and all(2 <= n <= 6 for n in calls)
    outputs = [len(m["content"]) for m in wide if m["role"] == "tool"]
    assert all(200 <= n <= 12_000 for n in outputs)


@pytest.mark.slow
def test_a_tiny_run_fills_every_row_and_replaces_only_its_block(tmp_path: Path) -> None:
    bench = _module()
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nkept text\n", encoding="utf-8")
    assert bench.main(["--turns", "6", "--reps", "1", "--out", str(doc)]) == 0
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nkept text\n")
    block = text[text.index(bench.START) : text.index(bench.END)]
    for workload in ("coding", "wide"):
        for what in (
            "apply_compaction truncation",
            "langchain-core convert + trim",
            "memory",
            "reference pipeline plan, again on the same index",
        ):
            assert f"| {workload} | {what}" in block
    assert "| coding | analyze, again with the same cache |" in block
    assert bench.main(["--turns", "6", "--reps", "1", "--out", str(doc)]) == 0
    assert doc.read_text(encoding="utf-8").count(bench.START) == 1
