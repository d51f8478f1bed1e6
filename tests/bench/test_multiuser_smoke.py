"""Keep the multi-user benchmark from rotting: its quick mode (one server, two Chromium
sessions, one short wave). Not timed: it asserts what the run produced, never how fast."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
E2E = Path(__file__).resolve().parents[1] / "e2e"

pytestmark = pytest.mark.e2e


def test_quick_run_measures_changes_and_memory(tmp_path: Path) -> None:
    for folder in (BENCH, E2E):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    support = importlib.import_module("e2e_support")
    if support.e2e_skipped() or support.find_chromium() is None:
        pytest.skip("no Chromium (or COMPACTLENS_SKIP_E2E=1): the benchmark drives browsers")
    bench = importlib.import_module("multiuser_bench")
    out = tmp_path / "results.json"
    assert bench.main(["--quick", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["errors"] == []
    assert results["changes"] >= 2 and results["p95_s"] >= results["p50_s"] > 0
    (wave,) = results["waves_detail"]
    assert all(n >= 1 for n in wave["per_session_changes"])
    assert wave["rss_peak_mb"] >= wave["rss_before_mb"] > 0
    # The server-side hook logged a script run for every change, with its own timings.
    assert results["server_runs"] >= results["changes"]
    timings = zip(wave["server_run_cpu_s"], wave["server_latency_s"], strict=True)
    assert all(0 < cpu <= wall for cpu, wall in timings)
    assert wave["gc_frozen"] > 0  # the real server froze what it had loaded (AppTest does not)
    assert "Many users at once" in bench.render(results)
