"""Keep the fix-search benchmark from rotting (structure only, no timing asserted)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

from compactlens import validate_pairing

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _module() -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("bench_fixes")


def test_sub_agent_shape_is_seeded_and_well_paired() -> None:
    bench = _module()
    convo = bench.sub_agent(messages=60, seed=3)
    assert convo == bench.sub_agent(messages=60, seed=3)
    assert 59 <= len(convo) <= 60
    assert [m["role"] for m in convo[:2]] == ["system", "user"]
    assert not validate_pairing(convo)


def test_the_section_replaces_its_own_block_only(tmp_path: Path) -> None:
    bench = _module()
    rows = [
        {
            "shape": "s",
            "messages": 1000,
            "tokens": 5000,
            "config": "truncation",
            "status": "cannot-fit",
            "tried": 12,
            "wall_ms": 120.0,
            "cpu_ms": 100.0,
            "best": "a | b",
        }
    ]
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nintro\n", encoding="utf-8")
    bench.write_section(bench.section(rows, 3), doc)
    first = doc.read_text(encoding="utf-8")
    assert first.startswith("# Benchmarks\n\nintro\n") and "a / b" in first
    rows[0]["wall_ms"] = 2500.0
    bench.write_section(bench.section(rows, 3), doc)
    second = doc.read_text(encoding="utf-8")
    assert second.count(bench.START) == 1 and "2,500" in second and "intro" in second
