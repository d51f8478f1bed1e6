"""bench/runs_bench.py at a small size: the folder it writes lists with every call, an
idle look reads nothing, and the section it renders replaces itself in the doc."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench" / "runs_bench.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("runs_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["runs_bench"] = module
    spec.loader.exec_module(module)
    return module


def test_the_runs_bench_lists_what_it_wrote_and_renders_its_section(tmp_path: Path) -> None:
    bench = _bench()
    folder = tmp_path / "runs"
    folder.mkdir()
    assert bench.write_folder(folder, 6, 25) > 0
    numbers = bench.in_process(folder, 2)
    assert numbers["runs"] == 6 and numbers["calls"] == 150
    assert numbers["every_line"] > 0
    numbers.update(page=1.0, idle_cpu_pct=0.5, new_call=1.2, new_call_max=1.5)
    assert numbers["load"] >= 0
    args = argparse.Namespace(idle=5.0)
    section = bench.render(numbers, 1024, args)
    assert section.startswith(bench.START) and section.endswith(bench.END)
    assert "a folder of 6 runs and 150 model calls" in section
    doc = tmp_path / "doc.md"
    doc.write_text("# UI\n\ntext\n")
    bench.DOC = doc
    bench.write_doc(section)
    bench.write_doc(section.replace("0.5%", "0.7%"))
    text = doc.read_text()
    assert text.count(bench.START) == 1 and "0.7% of a core" in text and text.startswith("# UI")
