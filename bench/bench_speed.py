"""The speed goals of issue 15, measured in one run on two workload shapes.

    python bench/bench_speed.py              # measure, print, update docs/benchmarks.md
    python bench/bench_speed.py --no-write   # measure and print only
    python bench/bench_speed.py --turns 300  # a quick run on smaller transcripts
    python bench/bench_speed.py --only analysis  # one part, printed only
    python bench/bench_speed.py --only collapse  # collapse vs langchain-core, interleaved

Workloads (both seeded OpenAI Chat wire dicts):

- ``coding``: ``bench/generate.py`` (1-3 parallel calls a turn, results of 50-4,000
  characters);
- ``wide``: :func:`wide_messages` below: 2-6 parallel calls a turn, results of 200-12,000
  characters (log-uniform), a reasoning text on a third of the answers.

Per workload, at ``--turns`` turns (default 10,000): the median wall and CPU time of
``apply_compaction`` (wire dicts in, result out) for truncation and tool-result collapse,
and of langchain-core's conversion of the same dicts (``convert_to_messages``) plus
``trim_messages`` (the documented setup, its own 4-characters-a-token counter), in the
same process, all trimming to the same number of tokens (16,000 for ``coding``, 32,000
for ``wide``, whose last turn alone can pass 16,000); planning the inspector's reference
pipeline at that target over an index of the messages, on a new index and again on one
a first plan used (what a parameter change costs the inspector); the tracemalloc peak of one
``apply_compaction`` call against the traced size of the parsed dicts; and on the
``coding`` workload ``analyze()`` of the pipeline's result, first on its own and then
again with the fact cache of a first analysis, the time to its first numbers
(``analyze_overview``: everything but fact survival), and ``analyze()`` of a plan that
keeps about half the history (megabytes of compacted text to find the facts in).
Goals: ``apply_compaction`` at most 350 ms and at least 3x langchain-core's
convert-plus-trim; ``analyze()`` at most 5 s and its first numbers within 2 s; peak memory
at most 2x the parsed dicts.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
REPO = _HERE.parent
sys.path.insert(0, str(_HERE))

from bench_timing import measure, replace_section  # noqa: E402
from generate import DEFAULT_SEED, _sentence, _tool_result  # noqa: E402
from generate import generate_messages as coding_messages  # noqa: E402

from compactlens import (  # noqa: E402
    CharEstimator,
    MessageIndex,
    PipelineStrategy,
    Strategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    analyze,
    apply_compaction,
    run_strategy,
)
from compactlens.analysis import analyze_overview  # noqa: E402
from compactlens.analysis.facts import searchable_text  # noqa: E402
from compactlens.analysis.postmortem import reference_pipeline  # noqa: E402
from compactlens.formats import from_caller  # noqa: E402

START, END = "<!-- speed-goals:start -->", "<!-- speed-goals:end -->"
APPLY_GOAL_MS = 350.0
PEER_RATIO_GOAL = 3.0
ANALYZE_GOAL_MS = 5000.0
FIRST_NUMBERS_GOAL_MS = 2000.0
MEMORY_GOAL = 2.0
TOOLS = ("read_file", "grep", "run_shell", "list_dir", "search_docs", "http_get")


def wide_messages(turns: int, seed: int = DEFAULT_SEED + 1) -> list[dict[str, Any]]:
    """A heavier agent: 2-6 parallel calls a turn, results of 200-12,000 characters."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a research agent. " + _sentence(rng)}
    ]
    for t in range(turns):
        out.append({"role": "user", "content": " ".join(_sentence(rng) for _ in range(2))})
        calls = [
            {
                "id": f"call_{t}_{k}",
                "type": "function",
                "function": {
                    "name": rng.choice(TOOLS),
                    "arguments": json.dumps({"query": _sentence(rng), "page": rng.randint(1, 9)}),
                },
            }
            for k in range(rng.randint(2, 6))
        ]
        out.append({"role": "assistant", "content": None, "tool_calls": calls})
        for call in calls:
            size = round(math.exp(rng.uniform(math.log(200), math.log(12_000))))
            text = _tool_result(rng, call["function"]["name"])
            while len(text) < size:
                text += "\n" + _tool_result(rng, rng.choice(("grep", "run_shell", "read_file")))
            out.append({"role": "tool", "tool_call_id": call["id"], "content": text[:size]})
        answer: dict[str, Any] = {"role": "assistant", "content": _sentence(rng)}
        if rng.random() < 1 / 3:
            answer["reasoning_content"] = _sentence(rng)
        out.append(answer)
    return out


#: Tokens each workload is trimmed to (the wide one's last turn alone can pass 16,000).
TARGETS = {"coding": 16_000, "wide": 32_000}
#: Truncation's protected newest groups per workload (unset: the profile's 32). The wide
#: workload's newest 32 groups (about 11 turns of 2-6 large results) alone pass its
#: 32,000-token target, so 32 made truncation a cannot-fit there and the row timed the
#: cannot-fit explanation instead of a trim; 4 still keeps the latest turn whole
#: (langchain-core's trim protects nothing).
PRESERVED = {"wide": 4}


def strategies(
    target: int = TARGETS["coding"], preserved: int | None = None
) -> dict[str, Strategy]:
    return {
        "truncation": TruncationStrategy(
            max_n=2 * target, compact_to=target, minimum_preserved=preserved
        ),
        "tool_result_collapse": ToolResultCompactionStrategy(keep_last_tool_call_groups=1),
    }


def langchain_convert_and_trim(target: int) -> Callable[[list[dict[str, Any]]], Any]:
    """langchain-core's own path from wire dicts to a trimmed history."""
    from langchain_core.messages import convert_to_messages, trim_messages
    from langchain_core.messages.utils import count_tokens_approximately

    def run(dicts: list[dict[str, Any]]) -> Any:
        return trim_messages(
            convert_to_messages(dicts),
            max_tokens=target,
            token_counter=count_tokens_approximately,
            strategy="last",
            include_system=True,
            start_on="human",
            allow_partial=False,
        )

    return run


def traced(fn: Callable[[], Any]) -> tuple[int, Any]:
    tracemalloc.start()
    try:
        value = fn()
        return tracemalloc.get_traced_memory()[1], value
    finally:
        tracemalloc.stop()


@dataclass(frozen=True, slots=True)
class Row:
    workload: str
    what: str
    wall_ms: float
    cpu_ms: float
    reps: int
    note: str = ""


def measure_workload(name: str, dicts: list[dict[str, Any]], reps: int) -> list[Row]:
    rows: list[Row] = []
    tok = CharEstimator()
    target = TARGETS[name]
    for op, strategy in strategies(target, PRESERVED.get(name)).items():
        t = measure(lambda s=strategy: apply_compaction(dicts, s, tok), max_reps=reps)
        result = t.value
        rows.append(
            Row(
                name,
                f"apply_compaction {op}",
                t.median_ms,
                t.median_cpu_ms or 0.0,
                t.reps,
                f"{result.status}, {len(result.messages):,} messages after",
            )
        )
        print(rows[-1], flush=True)
    peer = langchain_convert_and_trim(target)
    t = measure(lambda: peer(dicts), max_reps=reps)
    rows.append(
        Row(
            name,
            "langchain-core convert + trim",
            t.median_ms,
            t.median_cpu_ms or 0.0,
            t.reps,
            f"{len(t.value):,} messages after",
        )
    )
    print(rows[-1], flush=True)
    parsed, _ = traced(lambda: json.loads(json.dumps(dicts)))
    for op, strategy in strategies(target, PRESERVED.get(name)).items():
        peak, _ = traced(lambda s=strategy: apply_compaction(dicts, s, tok))
        rows.append(
            Row(
                name,
                f"memory {op}",
                peak / parsed,
                0.0,
                1,
                f"peak {peak / 2**20:,.0f} MiB, parsed {parsed / 2**20:,.0f} MiB",
            )
        )
        print(rows[-1], flush=True)
    return rows


def measure_interleaved(
    name: str, dicts: list[dict[str, Any]], op: str, reps: int
) -> tuple[float, float]:
    """Median process CPU ms of ``apply_compaction`` with strategy ``op`` and of
    langchain-core's convert + trim on the same dicts, the two alternating ``reps``
    times each (a full collection before each call, none timed), so that the machine's
    drift over a run moves both alike."""
    tok = CharEstimator()
    strategy = strategies(TARGETS[name], PRESERVED.get(name))[op]
    peer = langchain_convert_and_trim(TARGETS[name])
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(reps):
        for fn, out in (
            (lambda: apply_compaction(dicts, strategy, tok), ours),
            (lambda: peer(dicts), theirs),
        ):
            gc.collect()
            start = time.process_time()
            value = fn()
            out.append((time.process_time() - start) * 1000.0)
            del value
    return statistics.median(ours), statistics.median(theirs)


def print_interleaved(workloads: dict[str, list[dict[str, Any]]], op: str, reps: int) -> None:
    for name, dicts in workloads.items():
        ours, theirs = measure_interleaved(name, dicts, op, reps)
        print(
            f"{name}: apply_compaction {op} {ours:,.0f} ms CPU, langchain-core convert + "
            f"trim {theirs:,.0f} ms CPU: {theirs / ours:.2f}x (medians of {reps}, "
            "interleaved)",
            flush=True,
        )


def measure_replan(name: str, dicts: list[dict[str, Any]], reps: int) -> list[Row]:
    """Planning the inspector's reference pipeline (``reference_pipeline`` at the
    workload's target) over an index of the messages, as the inspector does on each
    parameter change: on a new index, then again on an index a first plan used (the
    index keeps the collapsed lines it built, ``MessageIndex.lines``)."""
    tok = CharEstimator()
    messages = from_caller(dicts).messages
    strategy = reference_pipeline(TARGETS[name])

    def used_index() -> tuple[MessageIndex]:
        index = MessageIndex.build(messages, tok)
        run_strategy(index, strategy)
        return (index,)

    rows: list[Row] = []
    for label, setup in (
        ("reference pipeline plan, new index", lambda: (MessageIndex.build(messages, tok),)),
        ("reference pipeline plan, again on the same index", used_index),
    ):
        t = measure(lambda ix: run_strategy(ix, strategy), setup, max_reps=reps)
        note = f"{t.value.status}, {t.value.messages_after:,} messages after"
        rows.append(Row(name, label, t.median_ms, t.median_cpu_ms or 0.0, t.reps, note))
        print(rows[-1], flush=True)
    return rows


#: Repetitions of each analysis row (the median is reported): a single run of several
#: seconds spreads by a third between runs on a shared machine.
ANALYSIS_REPS = 3


def _timed_row(
    label: str,
    fn: Callable[..., Any],
    note: Callable[[Any], str],
    setup: Callable[[], tuple[Any, ...]] | None = None,
) -> Row:
    reps = ANALYSIS_REPS
    t = measure(fn, setup, min_reps=reps, max_reps=reps, long_s=float("inf"))
    row = Row("coding", label, t.median_ms, t.median_cpu_ms or 0.0, t.reps, note(t.value))
    print(row, flush=True)
    return row


def measure_analysis(dicts: list[dict[str, Any]]) -> list[Row]:
    """``analyze()`` of the pipeline's result (cold, then with a fact cache: new, and
    again after one run filled it), the time to its first numbers (``analyze_overview``,
    what the Analysis page shows first), and ``analyze()`` of a plan that keeps about
    half the history (its compacted text is megabytes long: the case that once searched
    every fact in it one by one). Each row is the median of :data:`ANALYSIS_REPS` runs."""
    tok = CharEstimator()
    result = apply_compaction(dicts, PipelineStrategy(*strategies().values()), tok)
    messages = from_caller(dicts).messages

    def facts_note(r: Any) -> str:
        return f"{len(dicts):,} messages, {r.facts.extracted:,} facts"

    def filled() -> tuple[dict[int, Any]]:
        cache: dict[int, Any] = {}
        analyze(dicts, result, fact_cache=cache)
        return (cache,)

    rows = [
        _timed_row("analyze", lambda: analyze(dicts, result), facts_note),
        _timed_row(
            "analyze, first with a fact cache",
            lambda c: analyze(dicts, result, fact_cache=c),
            facts_note,
            lambda: ({},),
        ),
        _timed_row(
            "analyze, again with the same cache",
            lambda c: analyze(dicts, result, fact_cache=c),
            facts_note,
            filled,
        ),
        _timed_row(
            "analyze_overview (the first numbers)",
            lambda: analyze_overview(messages, result),
            lambda o: f"all but fact survival; {len(o.affected):,} messages affected",
        ),
    ]
    half = MessageIndex.build(messages, tok).total_tokens // 2
    keep_half = apply_compaction(dicts, TruncationStrategy(max_n=half, compact_to=half), tok)
    rows.append(
        _timed_row(
            "analyze, a plan that keeps about half",
            lambda: analyze(dicts, keep_half),
            lambda r: (
                f"{r.messages_after:,} messages kept, {r.facts.extracted:,} facts, "
                f"{len(searchable_text(keep_half.projection)) / 1e6:.1f} MB of compacted text"
            ),
        )
    )
    return rows


def _verdict(ok: bool) -> str:
    return "pass" if ok else "**miss**"


def section(rows: Sequence[Row], turns: int) -> str:
    lines = [
        START,
        "## Speed goals (issue 15)",
        "",
        f"`python bench/bench_speed.py` at {turns:,} turns; medians of repeated runs, wall and "
        "process CPU time (CPU time is what our code costs when the shared machine is busy). "
        "Goals: `apply_compaction` at most "
        f"{APPLY_GOAL_MS:,.0f} ms and at least {PEER_RATIO_GOAL:g}x langchain-core's "
        f"convert-plus-trim on the same dicts; `analyze()` at most {ANALYZE_GOAL_MS / 1000:g} s "
        f"and its first numbers (`analyze_overview`) within {FIRST_NUMBERS_GOAL_MS / 1000:g} s; "
        f"peak memory at most {MEMORY_GOAL:g}x the parsed dicts.",
        "",
        "| workload | measured | wall ms | CPU ms | reps | vs langchain-core (CPU) | goal | note |",
        "| --- | --- | --: | --: | --: | --: | :-: | --- |",
    ]
    peers = {r.workload: r for r in rows if r.what.startswith("langchain")}
    for r in rows:
        peer = peers.get(r.workload)
        if r.what.startswith("apply_compaction"):
            ratio = peer.cpu_ms / r.cpu_ms if peer and r.cpu_ms else None
            ok = min(r.wall_ms, r.cpu_ms) <= APPLY_GOAL_MS and (ratio or 0) >= PEER_RATIO_GOAL
            cells = (
                f"{r.wall_ms:,.0f}",
                f"{r.cpu_ms:,.0f}",
                str(r.reps),
                f"{ratio:.2f}x" if ratio else "-",
                _verdict(ok),
            )
        elif r.what.startswith("memory"):
            cells = (f"{r.wall_ms:.2f}x", "", "1", "", _verdict(r.wall_ms <= MEMORY_GOAL))
        elif r.what.startswith("analyze"):
            goal = FIRST_NUMBERS_GOAL_MS if "overview" in r.what else ANALYZE_GOAL_MS
            ok = min(r.wall_ms, r.cpu_ms) <= goal
            cells = (f"{r.wall_ms:,.0f}", f"{r.cpu_ms:,.0f}", str(r.reps), "", _verdict(ok))
        elif r.what.startswith("reference pipeline"):
            cells = (f"{r.wall_ms:,.0f}", f"{r.cpu_ms:,.0f}", str(r.reps), "", "")
        else:
            cells = (f"{r.wall_ms:,.0f}", f"{r.cpu_ms:,.0f}", str(r.reps), "1.00x", "")
        lines.append(f"| {r.workload} | {r.what} | " + " | ".join(cells) + f" | {r.note} |")
    lines += [
        "",
        "A goal passes on the smaller of the wall and CPU medians. Memory rows give the peak "
        "as a multiple of the parsed transcript in the *wall ms* column.",
        END,
    ]
    return "\n".join(lines)


def write_section(text: str, path: Path) -> None:
    """Put ``text`` between this benchmark's markers in ``path``."""
    replace_section(path, text, START, END)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--only",
        choices=("engine", "analysis", "collapse", "truncation"),
        help="measure one part (implies --no-write); collapse and truncation: "
        "apply_compaction against langchain-core's convert + trim, interleaved, "
        "CPU medians of --reps",
    )
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    coding = coding_messages(args.turns)
    if args.only in ("collapse", "truncation"):
        op = "tool_result_collapse" if args.only == "collapse" else "truncation"
        print_interleaved({"coding": coding, "wide": wide_messages(args.turns)}, op, args.reps)
        return 0
    rows: list[Row] = []
    if args.only != "analysis":
        wide = wide_messages(args.turns)
        rows += measure_workload("coding", coding, args.reps)
        rows += measure_workload("wide", wide, args.reps)
        rows += measure_replan("coding", coding, args.reps)
        rows += measure_replan("wide", wide, args.reps)
    if args.only != "engine":
        rows += measure_analysis(coding)
    text = section(rows, args.turns)
    print(text)
    if not args.no_write and args.only is None:
        write_section(text, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
