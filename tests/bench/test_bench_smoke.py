"""Keep the benchmark scripts from rotting: run them on a tiny transcript.

Not a timed test: nothing here asserts a duration, only the structure of what the
scripts produce (performance is measured by ``python bench/run_all.py``).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from compactlens import validate_pairing

BENCH = Path(__file__).resolve().parents[2] / "bench"
PEERS_PYTHON = BENCH / ".peers" / "venv" / "bin" / "python"
TURNS = 20


def _bench(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    return _bench("generate")


@pytest.fixture(scope="module")
def run_ours() -> ModuleType:
    return _bench("run_ours")


@pytest.fixture(scope="module")
def run_all() -> ModuleType:
    return _bench("run_all")


def test_generator_is_seeded_and_shaped_like_an_agent_transcript(generate: ModuleType) -> None:
    messages: list[dict[str, Any]] = generate.generate_messages(TURNS, seed=7)
    assert messages == generate.generate_messages(TURNS, seed=7)
    assert messages != generate.generate_messages(TURNS, seed=8)
    assert messages[0]["role"] == "system"
    i = 1
    for _ in range(TURNS):
        assert messages[i]["role"] == "user"
        call_msg = messages[i + 1]
        assert call_msg["role"] == "assistant"
        calls = call_msg["tool_calls"]
        assert 1 <= len(calls) <= 3
        for k, call in enumerate(calls):
            json.loads(call["function"]["arguments"])
            result = messages[i + 2 + k]
            assert result["role"] == "tool"
            assert result["tool_call_id"] == call["id"]
            assert len(result["content"]) >= generate.MIN_RESULT_CHARS
            assert len(result["content"]) <= generate.MAX_RESULT_CHARS
        answer = messages[i + 2 + len(calls)]
        assert answer["role"] == "assistant" and "tool_calls" not in answer
        i += 3 + len(calls)
    assert i == len(messages)
    assert validate_pairing(messages) == []


def test_transcripts_are_cached_by_size_and_seed(generate: ModuleType, tmp_path: Path) -> None:
    path = generate.ensure_transcript(TURNS, 7, tmp_path)
    stamp = path.stat().st_mtime_ns
    assert generate.ensure_transcript(TURNS, 7, tmp_path) == path
    assert path.stat().st_mtime_ns == stamp
    assert generate.load_messages(path) == generate.generate_messages(TURNS, 7)
    assert generate.ensure_transcript(TURNS, 8, tmp_path) != path


@pytest.mark.slow
def test_our_runner_reports_every_stage_and_strategy(run_ours: ModuleType, tmp_path: Path) -> None:
    records = run_ours.run_size(
        TURNS, seed=7, data_dir=tmp_path, max_reps=1, budget_s=0.01, echo=False
    )
    n = len(json.loads(run_ours.ensure_transcript(TURNS, 7, tmp_path).read_bytes())["messages"])
    stages = {(r.op, r.stage) for r in records}
    assert {("-", "parse"), ("-", "from_caller"), ("-", "index_build")} <= stages
    for op in run_ours.strategies():
        assert {(op, "run_strategy"), (op, "apply_compaction"), (op, "memory")} <= stages
    by_key = {(r.op, r.stage): r for r in records}
    for r in records:
        assert r.turns == TURNS and r.messages == n
        if r.stage == "memory":
            assert r.peak_bytes and r.parsed_bytes and r.median_ms is None
        else:
            assert r.reps == 1 and r.median_ms is not None and r.median_ms > 0
    for op in run_ours.strategies():
        applied, planned = by_key[(op, "apply_compaction")], by_key[(op, "run_strategy")]
        assert applied.status in ("unchanged", "compacted", "cannot-fit")
        # The prebuilt-index path and the one-call path must agree on the outcome.
        assert (applied.status, applied.messages_after, applied.tokens_after) == (
            planned.status,
            planned.messages_after,
            planned.tokens_after,
        )
        assert applied.messages_after is not None and applied.messages_after <= n
    # keep_last_turns=10 of 20 turns: the sliding window has to drop something.
    assert by_key[("sliding_window", "apply_compaction")].status == "compacted"
    # Every record is one JSON line the driver can read back.
    line = json.loads(records[-1].to_json())
    assert line["impl"] == "compactlens" and line["turns"] == TURNS


def test_peer_prediction_uses_the_measured_exponent(run_all: ModuleType) -> None:
    points = [(1000, 1000.0), (2000, 4000.0)]
    assert run_all.exponent(points) == pytest.approx(2.0)
    predicted, k = run_all.predict_ms(points, 4000)
    assert k == pytest.approx(2.0) and predicted == pytest.approx(16000.0)
    predicted, k = run_all.predict_ms([(100, 10.0)], 1000)
    assert k == 2.0 and predicted == pytest.approx(1000.0)
    assert run_all.predict_ms([], 1000) is None


@pytest.mark.slow
def test_driver_writes_a_report_without_peers(run_all: ModuleType, tmp_path: Path) -> None:
    out, raw = tmp_path / "benchmarks.md", tmp_path / "results.jsonl"
    args = ["--sizes", str(TURNS), "--seed", "7", "--no-peers", "--max-reps", "1"]
    args += ["--budget", "0.01", "--data-dir", str(tmp_path), "--out", str(out), "--raw", str(raw)]
    assert run_all.main(args) == 0
    text = out.read_text(encoding="utf-8")
    for heading in ("## Machine", "## Goals", "## Results per size", "## Scaling", "## Memory"):
        assert heading in text
    assert f"### {TURNS} turns" in text
    assert "Peers were not run (`--no-peers`)" in text
    # Without 1,000- and 10,000-turn runs the time goals are reported as not measured.
    assert "not measured" in text
    lines = [json.loads(x) for x in raw.read_text(encoding="utf-8").splitlines()]
    assert {x["impl"] for x in lines} == {"compactlens"}
    # The report can be rewritten from the raw records alone, to the same text.
    again = tmp_path / "again.md"
    args_again = ["--render-only", "--raw", str(raw), "--data-dir", str(tmp_path)]
    assert run_all.main([*args_again, "--out", str(again)]) == 0
    assert again.read_text(encoding="utf-8") == text


@pytest.mark.skipif(not PEERS_PYTHON.exists(), reason="bench/.peers/venv not set up")
def test_peer_scripts_report_json_lines(run_all: ModuleType, tmp_path: Path) -> None:
    path = _bench("generate").ensure_transcript(TURNS, 7, tmp_path)
    args = run_all.argparse.Namespace(max_reps=1, budget=0.01, peer_cap=60.0)
    for peer in run_all.PEERS:
        records = run_all.run_peer(peer, path, TURNS, peer.ops, args)
        assert {(r.op, r.stage) for r in records} >= {(op, peer.headline) for op in peer.ops}
        for r in records:
            assert r.impl == peer.impl and r.turns == TURNS and r.reps == 1
            assert r.median_ms is not None and r.median_ms > 0
            assert r.messages_after is not None and 0 < r.messages_after <= r.messages
