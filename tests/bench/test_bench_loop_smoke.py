"""Keep the agent-loop benchmark from rotting: tiny loops, structure only (no timing asserted)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from compactlens import validate_pairing

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("bench_loop")


@pytest.mark.parametrize("shape", ["tool rounds", "long outputs", "parallel", "reasoning"])
def test_each_shape_is_seeded_paired_and_stops_at_model_calls(
    bench: ModuleType, shape: str
) -> None:
    loop = bench.make_loop(shape, 5, 4)
    assert loop == bench.make_loop(shape, 5, 4)
    history = loop.prefix + [m for step in loop.steps for m in step]
    assert not validate_pairing(history)
    assert sum(m["role"] == "user" for m in loop.prefix) == 6
    assert len(loop.steps) == 4
    # Each step ends where the agent calls its model: after results, or after a request.
    assert [step[-1]["role"] for step in loop.steps] == ["tool", "user", "tool", "user"]
    calls = [len(m["tool_calls"]) for m in history if m.get("tool_calls")]
    if shape == "parallel":
        assert all(3 <= n <= 5 for n in calls)
    if shape == "reasoning":
        assert all(m.get("reasoning_content") for m in history if m["role"] == "assistant")
    if shape == "long outputs":
        assert all(len(m["content"]) >= 2_000 for m in history if m["role"] == "tool")


@pytest.mark.slow
def test_over_budget_the_hooks_shorten_what_the_model_gets(bench: ModuleType) -> None:
    loop = bench.make_loop("long outputs", 30, 2)
    langchain = bench.driver(bench.LC_OURS, "over budget", loop.prefix)
    stored = len(langchain.messages)
    assert langchain.call() is not None and len(langchain.messages) < stored
    pydantic = bench.driver(bench.PAI, "over budget", loop.prefix)
    assert len(pydantic.call()) < len(pydantic.messages)
    idle = bench.driver(bench.PAI, "idle", loop.prefix)
    assert idle.call() is idle.messages
    sdk = bench.driver(bench.SDK_OURS, "over budget", loop.prefix)
    plain = bench.driver(bench.SDK_OWN, "over budget", loop.prefix)
    try:
        assert len(sdk.call()) < len(plain.call())
    finally:
        sdk.close()
        plain.close()


@pytest.mark.slow
def test_a_tiny_run_fills_every_row_and_replaces_only_its_block(
    bench: ModuleType, tmp_path: Path
) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nkept text\n", encoding="utf-8")
    args = ["--sizes", "3", "6", "--calls", "2", "--out", str(doc)]
    assert bench.main(args) == 0
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nkept text\n")
    block = text[text.index(bench.START) : text.index(bench.END)]
    for shape in bench.SHAPES:
        for impl, _, _ in bench.IMPLS:
            for mode in bench.MODES:
                assert f"| {shape} | {impl} | {mode} |" in block
    assert bench.main(args) == 0
    assert doc.read_text(encoding="utf-8").count(bench.START) == 1
