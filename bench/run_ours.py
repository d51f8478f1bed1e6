"""Time compactlens strategies on the synthetic transcripts and print JSON lines.

For each size it times, each as its own measurement (see ``bench_timing.py``):

- ``parse``: ``json.loads`` of the file (for reference, not part of any strategy);
- ``from_caller``: wire dicts to canonical messages;
- ``index_build``: ``MessageIndex.build`` with the estimator;
- per strategy, ``run_strategy`` over that prebuilt index (what the inspector pays on a
  parameter change) and ``apply_compaction`` (the whole call: wire dicts in, a
  :class:`CompactionResult` with wire dicts out), the headline number;
- per strategy, ``gc``: three more ``apply_compaction`` calls with ``gc.callbacks``
  recording how many collections of each generation ran and how long they took (wall
  ms); the fastest call is kept: its wall ms, in ``tokens_after`` the total collection
  ms, in ``note`` the detail;
- per strategy, ``memory``: the tracemalloc peak of one ``apply_compaction`` call
  (everything allocated during the call, the result included) next to the traced size
  of the parsed transcript (``json.loads`` result).

Usage: ``python bench/run_ours.py --turns 100 1000 [--max-reps N] [--no-memory]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from bench_timing import BUDGET_S, Record, emit, measure, record  # noqa: E402
from generate import DATA_DIR, DEFAULT_SEED, ensure_transcript  # noqa: E402

import compactlens  # noqa: E402
from compactlens import (  # noqa: E402
    CharEstimator,
    MessageIndex,
    PipelineStrategy,
    SlidingWindowStrategy,
    Strategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    run_strategy,
)
from compactlens.formats import from_caller  # noqa: E402

IMPL = "compactlens"

#: Parameters shared with the peers where they map (tokens with the estimator).
TRUNCATION_MAX_N = 32_000
TRUNCATION_COMPACT_TO = 16_000
KEEP_LAST_TURNS = 10
KEEP_LAST_TOOL_CALL_GROUPS = 1


def strategies() -> dict[str, Strategy]:
    """The strategies benchmarked, by the op name the report uses."""
    truncation = TruncationStrategy(max_n=TRUNCATION_MAX_N, compact_to=TRUNCATION_COMPACT_TO)
    sliding = SlidingWindowStrategy(keep_last_turns=KEEP_LAST_TURNS)
    tools = ToolResultCompactionStrategy(keep_last_tool_call_groups=KEEP_LAST_TOOL_CALL_GROUPS)
    return {
        "truncation": truncation,
        "sliding_window": sliding,
        "tool_result_collapse": tools,
        "pipeline": PipelineStrategy(tools, truncation, sliding),
    }


def describe_strategies() -> dict[str, str]:
    """A one-line description of each strategy's parameters, for the report."""
    return {
        "truncation": (
            f"TruncationStrategy(max_n={TRUNCATION_MAX_N}, compact_to={TRUNCATION_COMPACT_TO}) "
            "(tokens, since a tokenizer is passed; minimum_preserved=32 by default)"
        ),
        "sliding_window": f"SlidingWindowStrategy(keep_last_turns={KEEP_LAST_TURNS})",
        "tool_result_collapse": (
            f"ToolResultCompactionStrategy(keep_last_tool_call_groups={KEEP_LAST_TOOL_CALL_GROUPS})"
        ),
        "pipeline": "PipelineStrategy(tool_result_collapse, truncation, sliding_window)",
    }


def traced_peak(fn: Callable[[], Any]) -> tuple[int, Any]:
    """Peak bytes tracemalloc sees allocated during ``fn()`` (what stays alive included)."""
    if tracemalloc.is_tracing():
        raise RuntimeError("tracemalloc is already tracing")
    tracemalloc.start()
    try:
        value = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, value


def gc_breakdown(fn: Callable[[], Any]) -> tuple[dict[int, tuple[int, float]], float, Any]:
    """Collections per generation (count, ms) during one ``fn()`` call, and its wall ms."""
    spent: dict[int, list[float]] = {}
    started: list[float] = [0.0]

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            entry = spent.setdefault(int(info["generation"]), [0, 0.0])
            entry[0] += 1
            entry[1] += (time.perf_counter() - started[0]) * 1000.0

    gc.collect()
    gc.callbacks.append(callback)
    try:
        start = time.perf_counter()
        value = fn()
        total = (time.perf_counter() - start) * 1000.0
    finally:
        gc.callbacks.remove(callback)
    return {g: (int(c), t) for g, (c, t) in sorted(spent.items())}, total, value


def run_size(
    turns: int,
    *,
    seed: int = DEFAULT_SEED,
    data_dir: Path = DATA_DIR,
    max_reps: int = 25,
    budget_s: float = BUDGET_S,
    memory: bool = True,
    echo: bool = True,
) -> list[Record]:
    """All measurements for one transcript size, as records (printed as they come with ``echo``).

    ``apply_compaction`` is measured first, while the heap holds little more than the
    parsed transcript (as in a caller's process); the split into ``from_caller``,
    ``MessageIndex.build`` and ``run_strategy`` follows.
    """
    path = ensure_transcript(turns, seed, data_dir)
    raw = path.read_bytes()
    version = compactlens.__version__
    out: list[Record] = []

    def keep(rec: Record) -> None:
        out.append(rec)
        if echo:
            emit(rec)

    def load() -> list[dict[str, Any]]:
        messages = json.loads(raw)["messages"]
        assert isinstance(messages, list)
        return messages

    # Ours is cheap enough to repeat even when a noisy first run is slow.
    reps = {
        "budget_s": budget_s,
        "max_reps": max_reps,
        "min_reps": min(5, max_reps),
        "long_s": 60.0,
    }
    t_parse = measure(load, **reps)
    dicts: list[dict[str, Any]] = t_parse.value
    n = len(dicts)
    keep(record(IMPL, version, "-", "parse", turns, n, t_parse))
    tok = CharEstimator()
    chosen = strategies()

    parsed_bytes: int | None = None
    if memory:
        parsed_bytes, parsed = traced_peak(load)
        del parsed
    for op, strategy in chosen.items():
        t_apply = measure(lambda s=strategy: apply_compaction(dicts, s, tok), **reps)
        res = t_apply.value
        keep(
            record(
                IMPL,
                version,
                op,
                "apply_compaction",
                turns,
                n,
                t_apply,
                messages_after=res.messages_after,
                tokens_before=res.tokens_before,
                tokens_after=res.tokens_after,
                status=res.status,
            )
        )
        del res, t_apply
        # Three calls; the fastest is the one least disturbed by other work on the machine.
        calls = []
        for _ in range(3):
            spent, total, res = gc_breakdown(lambda s=strategy: apply_compaction(dicts, s, tok))
            del res
            calls.append((total, spent))
        total, spent = min(calls, key=lambda c: c[0])
        gc_ms = sum(t for _, t in spent.values())
        keep(
            Record(
                impl=IMPL,
                version=version,
                op=op,
                stage="gc",
                turns=turns,
                messages=n,
                median_ms=round(total, 3),
                reps=1,
                note=json.dumps({str(g): [c, round(t, 1)] for g, (c, t) in spent.items()}),
                tokens_after=round(gc_ms),
            )
        )
        if memory:
            peak, res = traced_peak(lambda s=strategy: apply_compaction(dicts, s, tok))
            keep(
                Record(
                    impl=IMPL,
                    version=version,
                    op=op,
                    stage="memory",
                    turns=turns,
                    messages=n,
                    median_ms=None,
                    messages_after=res.messages_after,
                    status=res.status,
                    peak_bytes=peak,
                    parsed_bytes=parsed_bytes,
                )
            )
            del res

    t_caller = measure(from_caller, lambda: (dicts,), **reps)
    caller = t_caller.value
    keep(record(IMPL, version, "-", "from_caller", turns, n, t_caller))
    t_index = measure(MessageIndex.build, lambda: (caller.messages, tok), **reps)
    index = t_index.value
    keep(
        record(
            IMPL,
            version,
            "-",
            "index_build",
            turns,
            n,
            t_index,
            tokens_before=index.total_tokens,
        )
    )
    for op, strategy in chosen.items():
        t_run = measure(
            lambda s=strategy: run_strategy(index, s, caller=caller, tokenizer_given=True), **reps
        )
        res = t_run.value
        keep(
            record(
                IMPL,
                version,
                op,
                "run_strategy",
                turns,
                n,
                t_run,
                messages_after=res.messages_after,
                tokens_before=res.tokens_before,
                tokens_after=res.tokens_after,
                status=res.status,
            )
        )
        del res, t_run
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time compactlens strategies (JSON lines).")
    parser.add_argument("--turns", type=int, nargs="+", required=True)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--max-reps", type=int, default=25)
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds per measurement")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    args = parser.parse_args(argv)
    for turns in args.turns:
        run_size(
            turns,
            seed=args.seed,
            data_dir=args.data_dir,
            max_reps=args.max_reps,
            budget_s=args.budget,
            memory=not args.no_memory,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
