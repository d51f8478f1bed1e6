"""Run the whole benchmark and write docs/benchmarks.md.

Usage: ``python bench/run_all.py [--full] [--sizes 100 1000 3000 10000] [--no-peers]``

1. Generates (or reuses) the seeded synthetic transcripts (``generate.py``).
2. Times our strategies in this process (``run_ours.py``).
3. Times the peers in their own virtualenv, ``bench/.peers/venv`` (made by
   ``bench/setup_peers.sh``), one subprocess per peer and size, reading JSON lines.
   Before each peer run the driver predicts its time from the sizes already measured
   (exponent of the last two points; 2 when only one is known). A run predicted to take
   longer than ``--peer-cap`` seconds (default 120; 1500 with ``--full``) is not made:
   its time is extrapolated by that exponent and labelled as such.
4. Writes the report (``--out``, default docs/benchmarks.md) and the raw records
   (``--raw``, default bench/.data/results.jsonl).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from bench_timing import BUDGET_S, Record  # noqa: E402
from generate import DATA_DIR, DEFAULT_SEED, ensure_transcript, transcript_path  # noqa: E402
from run_ours import describe_strategies, run_size, strategies  # noqa: E402

REPO = _HERE.parent
PEERS_VENV = _HERE / ".peers" / "venv"
DEFAULT_SIZES = (100, 1000, 3000, 10000)
DEFAULT_PROBES = (2000,)
OURS = "compactlens"

#: Goals (issue 2).
GOAL_MAX_MS = 1000.0
GOAL_TURNS = 10_000
GOAL_SCALING = 12.0
GOAL_MEMORY = 3.0


@dataclass(frozen=True, slots=True)
class Peer:
    impl: str
    script: str
    ops: tuple[str, ...]
    headline: str
    timed: str


PEERS = (
    Peer(
        "agent-framework-core",
        "peers/maf.py",
        ("truncation", "tool_result_collapse"),
        "apply_compaction",
        "`await apply_compaction(messages, strategy=..., tokenizer=CharacterEstimatorTokenizer())`"
        " on fresh, unannotated messages",
    ),
    Peer(
        "langchain-core",
        "peers/langchain_trim.py",
        ("truncation",),
        "trim_messages",
        '`trim_messages(max_tokens=16000, token_counter=count_tokens_approximately, strategy="last"'
        ', include_system=True, start_on="human")`',
    ),
)


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


# -- peers ------------------------------------------------------------------------------


def exponent(points: Sequence[tuple[int, float]]) -> float | None:
    """Growth exponent from the two largest measured sizes (None with fewer than two)."""
    pts = sorted(points)
    if len(pts) < 2:
        return None
    (n1, t1), (n2, t2) = pts[-2], pts[-1]
    if n1 == n2 or t1 <= 0 or t2 <= 0:
        return None
    return math.log(t2 / t1) / math.log(n2 / n1)


def predict_ms(points: Sequence[tuple[int, float]], turns: int) -> tuple[float, float] | None:
    """Predicted median at ``turns`` and the exponent used (2 when only one point is known)."""
    if not points:
        return None
    k = exponent(points)
    k = 2.0 if k is None else k
    n0, t0 = max(points)
    return t0 * (turns / n0) ** k, k


def run_peer(
    peer: Peer, path: Path, turns: int, ops: Sequence[str], args: argparse.Namespace
) -> list[Record]:
    python = PEERS_VENV / "bin" / "python"
    cmd = [
        str(python),
        str(_HERE / peer.script),
        "--file",
        str(path),
        "--turns",
        str(turns),
        "--ops",
        *ops,
        "--max-reps",
        str(args.max_reps),
        "--budget",
        str(args.budget),
    ]
    timeout = args.peer_cap * 3 + 300
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        log(f"{peer.impl} at {turns} turns timed out after {timeout:.0f} s")
        return []
    if proc.returncode != 0:
        log(f"{peer.impl} at {turns} turns failed:\n{proc.stderr[-2000:]}")
        return []
    out: list[Record] = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(load_record(line))
    return out


def load_record(line: str) -> Record:
    data = json.loads(line)
    data["times_ms"] = tuple(data.get("times_ms") or ())
    return Record(**data)


def run_peers(
    paths: dict[int, Path],
    messages: dict[int, int],
    args: argparse.Namespace,
    probes: frozenset[int] = frozenset(),
) -> tuple[list[Record], list[str]]:
    """Run each peer at each size, smallest first; ``probes`` are extra sizes (in ``paths``)
    measured only when they fit the cap, to give the extrapolation a point nearer the top."""
    records: list[Record] = []
    notes: list[str] = []
    if args.no_peers:
        notes.append("Peers were not run (`--no-peers`).")
        return records, notes
    if not (PEERS_VENV / "bin" / "python").exists():
        notes.append(
            "Peers were not run: bench/.peers/venv is missing (create it with "
            "`bash bench/setup_peers.sh`)."
        )
        return records, notes
    for peer in PEERS:
        points: dict[str, list[tuple[int, float]]] = {op: [] for op in peer.ops}
        for turns in sorted(paths):
            to_run: list[str] = []
            for op in peer.ops:
                guess = predict_ms(points[op], turns)
                cap = args.op_caps.get(op, args.peer_cap)
                if guess is not None and guess[0] / 1000.0 > cap:
                    if turns in probes:
                        log(f"{peer.impl} {op}: no probe at {turns} (~{guess[0] / 1000:.0f} s)")
                        continue
                    t_ms, k = guess
                    measured = sorted(points[op])[-2:]
                    basis = " and ".join(f"{n:,}" for n, _ in measured)
                    records.append(
                        Record(
                            impl=peer.impl,
                            version=next((r.version for r in records if r.impl == peer.impl), "?"),
                            op=op,
                            stage=peer.headline,
                            turns=turns,
                            messages=messages[turns],
                            median_ms=round(t_ms, 1),
                            extrapolated=True,
                            note=f"extrapolated from {basis} turns, exponent {k:.2f}",
                        )
                    )
                    log(f"{peer.impl} {op} at {turns}: extrapolated {t_ms / 1000:.0f} s")
                else:
                    to_run.append(op)
            if not to_run:
                continue
            log(f"{peer.impl} at {turns} turns: {' '.join(to_run)}")
            got = run_peer(peer, paths[turns], turns, to_run, args)
            records.extend(got)
            for rec in got:
                if rec.stage == peer.headline and rec.median_ms is not None:
                    points[rec.op].append((turns, rec.median_ms))
    return records, notes


# -- report -----------------------------------------------------------------------------


def fmt_ms(rec: Record | None) -> str:
    if rec is None or rec.median_ms is None:
        return "-"
    ms = rec.median_ms
    text = f"{ms:,.0f}" if ms >= 100 else f"{ms:,.1f}" if ms >= 10 else f"{ms:,.2f}"
    return f"~{text} (extrapolated)" if rec.extrapolated else text


def fmt_cpu(rec: Record | None) -> str:
    if rec is None or rec.cpu_ms is None:
        return "-"
    ms = rec.cpu_ms
    return f"{ms:,.0f}" if ms >= 100 else f"{ms:,.1f}" if ms >= 10 else f"{ms:,.2f}"


def fmt_without_gc(rec: Record | None) -> str:
    """Wall ms of the ``gc`` record's call minus the time its collections took."""
    if rec is None or not rec.note or rec.median_ms is None:
        return "-"
    total = sum(float(t) for _, t in json.loads(rec.note).values())
    return fmt_ms(replace(rec, median_ms=rec.median_ms - total))


def fmt_gc(rec: Record | None) -> str:
    """Collection time and full (generation 2) collections of one call, from a ``gc`` record."""
    if rec is None or not rec.note:
        return "-"
    detail = json.loads(rec.note)
    total = sum(float(t) for _, t in detail.values())
    full = int(detail.get("2", [0, 0.0])[0])
    share = f", {total / rec.median_ms:.0%}" if rec.median_ms else ""
    shown = f"{total:,.0f}" if total >= 10 else f"{total:.1f}"
    return f"{shown} ms ({full} full{share})"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b <= 0:
        return "-"
    r = a / b
    return f"{r:,.0f}x" if r >= 100 else f"{r:,.1f}x" if r >= 10 else f"{r:.2f}x"


def find(records: Iterable[Record], impl: str, op: str, stage: str, turns: int) -> Record | None:
    for r in records:
        if r.impl == impl and r.op == op and r.stage == stage and r.turns == turns:
            return r
    return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_head() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def peer_python() -> str:
    python = PEERS_VENV / "bin" / "python"
    if not python.exists():
        return "-"
    out = subprocess.run(
        [str(python), "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() or "-"


def report(
    records: list[Record],
    sizes: Sequence[int],
    meta: dict[str, str],
    files: dict[int, Path],
    notes: Sequence[str],
) -> str:
    ops = list(strategies())
    descr = describe_strategies()
    versions: dict[str, str] = {}
    for r in records:
        versions.setdefault(r.impl, r.version)
    msgs = {n: next((r.messages for r in records if r.turns == n), 0) for n in sizes}
    lines: list[str] = []
    add = lines.append
    add("# Benchmarks")
    add("")
    add(
        f"Generated by `{meta['command']}` on {meta['date']} "
        f"({meta['elapsed']} for the whole run). Do not edit by hand: re-run the command "
        "(the hand-written *Reading these numbers* section comes from bench/NOTES.md)."
    )
    add("")
    add("## Machine")
    add("")
    add(
        f"- CPU: {meta['cpu']}, {os.cpu_count()} logical cores; "
        f"load average at start {meta['load']}"
    )
    add(
        f"- Python {platform.python_version()} (compactlens), {meta['peer_python']} (peers' venv),"
        f" {platform.system()} {platform.release()}"
    )
    add(
        "- Versions: "
        + ", ".join(f"{impl} {v}" for impl, v in versions.items())
        + f"; compactlens at git {meta['git']} (plus the uncommitted tree at run time, if any)"
    )
    add(
        "- The machine is shared with other engineers' test runs: medians and ratios below "
        "come from this one run and carry that noise."
    )
    add("")
    add("## Transcripts")
    add("")
    add(
        f"Seeded synthetic OpenAI Chat transcripts (`bench/generate.py`, seed {meta['seed']}): a "
        "system prompt, then per turn a user message, an assistant message with 1-3 parallel "
        "tool calls, one tool result per call (50-4,000 characters, log-uniform) and an "
        "assistant answer."
    )
    add("")
    add("| turns | messages | file size |")
    add("| ---: | ---: | ---: |")
    for n in sizes:
        size_mb = files[n].stat().st_size / 1e6
        add(f"| {n:,} | {msgs[n]:,} | {size_mb:.1f} MB |")
    add("")

    # Goals.
    add("## Goals")
    add("")
    add(
        "Time goals are judged twice: on the wall-clock median, as stated, and on the median "
        "process CPU time of the same runs, which is what our code costs when the shared "
        "machine is busy (see *Machine*)."
    )
    add("")
    add("| goal | strategy | measured | result | CPU time | result (CPU) |")
    add("| --- | --- | ---: | :---: | ---: | :---: |")
    have_goal = GOAL_TURNS in sizes
    have_scale = 1000 in sizes and GOAL_TURNS in sizes
    for op in ops:
        rec = find(records, OURS, op, "apply_compaction", GOAL_TURNS)
        if have_goal and rec is not None and rec.median_ms is not None:
            ok = rec.median_ms < GOAL_MAX_MS
            cpu_ok = rec.cpu_ms is not None and rec.cpu_ms < GOAL_MAX_MS
            add(
                f"| under 1 s at 10,000 turns (`apply_compaction`, median) | {op} | "
                f"{fmt_ms(rec)} ms | {'pass' if ok else 'FAIL'} | {fmt_cpu(rec)} ms | "
                f"{'pass' if cpu_ok else 'FAIL'} |"
            )
        else:
            add(f"| under 1 s at 10,000 turns | {op} | not measured | - | - | - |")
    for op in ops:
        a = find(records, OURS, op, "apply_compaction", 1000)
        b = find(records, OURS, op, "apply_compaction", GOAL_TURNS)
        if have_scale and a and b and a.median_ms and b.median_ms:
            r = b.median_ms / a.median_ms
            cpu = "-"
            cpu_verdict = "-"
            if a.cpu_ms and b.cpu_ms:
                rc = b.cpu_ms / a.cpu_ms
                cpu, cpu_verdict = f"{rc:.1f}x", "pass" if rc <= GOAL_SCALING else "FAIL"
            add(
                f"| linear: 1k to 10k turns within 12x | {op} | {r:.1f}x | "
                f"{'pass' if r <= GOAL_SCALING else 'FAIL'} | {cpu} | {cpu_verdict} |"
            )
        else:
            add(f"| linear: 1k to 10k turns within 12x | {op} | not measured | - | - | - |")
    for op in ops:
        mem = [r for r in records if r.impl == OURS and r.op == op and r.stage == "memory"]
        worst = max(
            (r for r in mem if r.peak_bytes and r.parsed_bytes),
            key=lambda r: (r.peak_bytes or 0) / (r.parsed_bytes or 1),
            default=None,
        )
        if worst is not None and worst.peak_bytes and worst.parsed_bytes:
            r = worst.peak_bytes / worst.parsed_bytes
            add(
                f"| peak memory within 3x the parsed transcript (worst size: {worst.turns:,}) | "
                f"{op} | {r:.2f}x | {'pass' if r <= GOAL_MEMORY else 'FAIL'} | | |"
            )
        else:
            add(f"| peak memory within 3x the parsed transcript | {op} | not measured | - | | |")
    add("")

    # Per size.
    add("## Results per size")
    add("")
    add(
        "Median wall-clock milliseconds. The two ratio columns divide each row's median by "
        "ours for the same kind of strategy: *vs apply* by our whole `apply_compaction` call "
        "(wire dicts in, result out), *vs run* by our `run_strategy` over a prebuilt index "
        "(input already in our types). Peers are timed from their own message types (the "
        "conversion is not timed), so *vs run* is the closer comparison for `trim_messages` "
        "and agent-framework-core's `strategy_call`. Above 1x the row is slower than ours."
    )
    add("")
    for n in sizes:
        add(f"### {n:,} turns ({msgs[n]:,} messages)")
        add("")
        add(
            "| implementation | strategy | timed | median ms | CPU ms | reps | vs apply | vs run | "
            "messages after | result |"
        )
        add("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for op in ops:
            ours = find(records, OURS, op, "apply_compaction", n)
            run = find(records, OURS, op, "run_strategy", n)
            for label, rec in (("apply_compaction", ours), ("run_strategy", run)):
                add(
                    f"| compactlens | {op} | {label} | {fmt_ms(rec)} | {fmt_cpu(rec)} | "
                    f"{rec.reps if rec else '-'} | "
                    f"{ratio(rec.median_ms if rec else None, ours.median_ms if ours else None)} | "
                    f"{ratio(rec.median_ms if rec else None, run.median_ms if run else None)} | "
                    f"{rec.messages_after if rec and rec.messages_after is not None else '-'} | "
                    f"{rec.status if rec else '-'} |"
                )
            for peer in PEERS:
                if op not in peer.ops:
                    continue
                for stage in (peer.headline, "strategy_call"):
                    rec = find(records, peer.impl, op, stage, n)
                    if rec is None:
                        continue
                    vs_apply = ratio(rec.median_ms, ours.median_ms if ours else None)
                    vs_run = ratio(rec.median_ms, run.median_ms if run else None)
                    if rec.extrapolated:
                        vs_apply, vs_run = f"~{vs_apply}", f"~{vs_run}"
                    after = rec.messages_after if rec.messages_after is not None else "-"
                    add(
                        f"| {peer.impl} | {op} | {stage} | {fmt_ms(rec)} | {fmt_cpu(rec)} | "
                        f"{rec.reps or '-'} | {vs_apply} | {vs_run} | {after} | "
                        f"{rec.note or rec.status or '-'} |"
                    )
        add("")

    # Where our time goes.
    add("## Where our time goes")
    add("")
    add(
        "`apply_compaction` = `from_caller` (wire dicts to messages) + `MessageIndex.build` "
        "(groups, links, token counts) + `run_strategy` (plan, projection, wire output, "
        "decisions, explanation). Each is timed on its own; medians in ms. The garbage "
        "collection rows come from three extra `apply_compaction` calls with `gc.callbacks`, "
        "keeping the fastest: time spent in collections, how many were full (generation 2) "
        "collections, their share of that call, and the call's time without them."
    )
    add("")
    header = "| step | " + " | ".join(f"{n:,} turns" for n in sizes) + " |"
    add(header)
    add("| --- |" + " ---: |" * len(sizes))
    for label, op, stage in (
        ("json.loads (reference)", "-", "parse"),
        ("from_caller", "-", "from_caller"),
        ("MessageIndex.build", "-", "index_build"),
    ):
        add(
            f"| {label} | "
            + " | ".join(fmt_ms(find(records, OURS, op, stage, n)) for n in sizes)
            + " |"
        )
    for op in ops:
        add(
            f"| {op}: garbage collection in one apply_compaction call | "
            + " | ".join(fmt_gc(find(records, OURS, op, "gc", n)) for n in sizes)
            + " |"
        )
        add(
            f"| {op}: that call without its collections | "
            + " | ".join(fmt_without_gc(find(records, OURS, op, "gc", n)) for n in sizes)
            + " |"
        )
    for op in ops:
        for stage in ("run_strategy", "apply_compaction"):
            add(
                f"| {op}: {stage} | "
                + " | ".join(fmt_ms(find(records, OURS, op, stage, n)) for n in sizes)
                + " |"
            )
    add("")

    # Scaling.
    add("## Scaling")
    add("")
    add(
        "Median ms per size (columns that are not a size of the tables above are probe sizes, "
        "measured for the peers only); the last column is the 10,000-turn median over the "
        "1,000-turn one (10x the turns: linear is about 10x)."
    )
    add("")
    columns = sorted(set(sizes) | {r.turns for r in records})
    add(
        "| implementation | strategy | timed | "
        + " | ".join(f"{n:,}" for n in columns)
        + " | 10k / 1k |"
    )
    add("| --- | --- | --- |" + " ---: |" * len(columns) + " ---: |")
    rows: list[tuple[str, str, str]] = [(OURS, op, "apply_compaction") for op in ops]
    for peer in PEERS:
        rows.extend((peer.impl, op, peer.headline) for op in peer.ops)
    for impl, op, stage in rows:
        cells = [fmt_ms(find(records, impl, op, stage, n)) for n in columns]
        a = find(records, impl, op, stage, 1000)
        b = find(records, impl, op, stage, GOAL_TURNS)
        scale = ratio(b.median_ms if b else None, a.median_ms if a else None)
        if b is not None and b.extrapolated:
            scale = f"~{scale}"
        add(f"| {impl} | {op} | {stage} | " + " | ".join(cells) + f" | {scale} |")
    add("")

    # Memory.
    add("## Memory")
    add("")
    add(
        "Peak bytes tracemalloc sees allocated during one `apply_compaction` call (the result "
        "included), over the traced size of the parsed transcript (`json.loads` result)."
    )
    add("")
    add("| strategy | " + " | ".join(f"{n:,} turns" for n in sizes) + " |")
    add("| --- |" + " ---: |" * len(sizes))
    for op in ops:
        cells = []
        for n in sizes:
            rec = find(records, OURS, op, "memory", n)
            if rec is None or not rec.peak_bytes or not rec.parsed_bytes:
                cells.append("-")
            else:
                cells.append(
                    f"{rec.peak_bytes / 1e6:,.1f} MB / {rec.parsed_bytes / 1e6:,.1f} MB = "
                    f"{rec.peak_bytes / rec.parsed_bytes:.2f}x"
                )
        add(f"| {op} | " + " | ".join(cells) + " |")
    add("")

    # Hand-written reading of the numbers, kept beside the scripts.
    notes_file = _HERE / "NOTES.md"
    if notes_file.is_file():
        lines.extend(notes_file.read_text(encoding="utf-8").rstrip("\n").splitlines())
        add("")

    # Methods.
    add("## Methods")
    add("")
    add(
        "- Strategies (ours): " + "; ".join(f"`{op}` = {d}" for op, d in descr.items()) + ". "
        "All use `CharEstimator()` (ceil(characters / 4)), passed explicitly so that "
        "`max_n`/`compact_to` count tokens, as the peers' token-based settings do."
    )
    add(
        "- Ours, `apply_compaction`: `apply_compaction(wire_dicts, strategy, CharEstimator())`, "
        "the whole call from OpenAI Chat dicts to a `CompactionResult` whose `messages` are "
        "wire dicts again. `run_strategy`: over an index built once, with the caller's "
        "`CallerMessages` so the output is wire dicts too."
    )
    for peer in PEERS:
        add(
            f"- {peer.impl} {versions.get(peer.impl, '')}: {peer.timed}. See "
            f"`bench/{peer.script}` for the conversion (done outside the timed region) and the "
            "exact call."
        )
    add(
        "- agent-framework-core `strategy_call`: the `await strategy(messages)` inside that same "
        "call, measured by a thin wrapper (the list is already annotated at that point)."
    )
    add(
        "- agent-framework-core estimates tokens on a JSON serialization of each message "
        "(`max(1, len // 4)`) and langchain-core adds 3 tokens per message, so each stops at "
        "a somewhat different point for the same 16,000-token target; *messages after* shows it."
    )
    add(
        f"- Repetitions: a full `gc.collect()` before each (not timed), the collector enabled "
        f"during the call. The first run decides the count: as many as fit {meta['budget']} s, "
        f"at most {meta['max_reps']}; at least 5 for ours (repeated even when a noisy first "
        "run is slow), at least 3 for the peers, whose first run is not repeated when it "
        "takes over 10 s. Medians are reported; *CPU ms* is the median process CPU time of "
        "the same runs, which other work on the machine stretches much less than wall time."
    )
    add(
        f"- Peers: a run predicted (from the exponent of the two largest measured sizes) to "
        f"take longer than {meta['peer_cap']} s is not made; its time is extrapolated by that "
        "exponent and marked *extrapolated*. Run with `--full` to raise the cap to 1,500 s."
        + (f" Per-strategy caps in this run: {meta['op_caps']}." if meta.get("op_caps") else "")
    )
    add("- Memory: `tracemalloc` peak during one extra call, separate from the timed runs.")
    for note in notes:
        add(f"- {note}")
    add("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the benchmark, write docs/benchmarks.md.")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--full", action="store_true", help="raise the peer time cap to 1500 s")
    parser.add_argument("--peer-cap", type=float, default=None, help="seconds per peer run")
    parser.add_argument(
        "--peer-cap-for",
        nargs="*",
        default=[],
        metavar="OP=SECONDS",
        help="a different cap for one strategy, e.g. tool_result_collapse=600",
    )
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument(
        "--probe-sizes",
        type=int,
        nargs="*",
        default=list(DEFAULT_PROBES),
        help="extra sizes the peers are measured at (when they fit the cap) for extrapolation",
    )
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--max-reps", type=int, default=25)
    parser.add_argument("--budget", type=float, default=BUDGET_S)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    parser.add_argument("--raw", type=Path, default=DATA_DIR / "results.jsonl")
    parser.add_argument(
        "--render-only",
        action="store_true",
        help="measure nothing: rewrite --out from --raw and its .meta.json of an earlier run",
    )
    args = parser.parse_args(argv)
    meta_path = args.raw.with_suffix(".meta.json")
    if args.render_only:
        saved = json.loads(meta_path.read_text(encoding="utf-8"))
        records = [load_record(line) for line in args.raw.read_text(encoding="utf-8").splitlines()]
        sizes = [int(n) for n in saved["sizes"]]
        paths = {n: transcript_path(n, int(saved["meta"]["seed"]), args.data_dir) for n in sizes}
        text = report(records, sizes, saved["meta"], paths, saved["notes"])
        args.out.write_text(text, encoding="utf-8")
        log(f"rewrote {args.out} from {args.raw}")
        return 0
    if args.peer_cap is None:
        args.peer_cap = 1500.0 if args.full else 120.0
    args.op_caps = {}
    for item in args.peer_cap_for:
        op, _, seconds = item.partition("=")
        args.op_caps[op] = float(seconds)
    started = time.perf_counter()
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    sizes = sorted(set(args.sizes))

    log(f"generating {sizes}")
    paths = {n: ensure_transcript(n, args.seed, args.data_dir) for n in sizes}
    records: list[Record] = []
    for n in sizes:
        log(f"compactlens at {n} turns")
        records.extend(
            run_size(
                n,
                seed=args.seed,
                data_dir=args.data_dir,
                max_reps=args.max_reps,
                budget_s=args.budget,
                memory=not args.no_memory,
                echo=False,
            )
        )
    messages = {n: next(r.messages for r in records if r.turns == n) for n in sizes}
    probes = frozenset(args.probe_sizes) - set(sizes)
    peer_paths = dict(paths)
    if not args.no_peers:
        peer_paths.update({n: ensure_transcript(n, args.seed, args.data_dir) for n in probes})
    peer_records, notes = run_peers(peer_paths, messages, args, probes)
    # Extrapolated records were made before the peer's version was known.
    versions = {r.impl: r.version for r in peer_records if r.version != "?"}
    records.extend(replace(r, version=versions.get(r.impl, r.version)) for r in peer_records)

    args.raw.parent.mkdir(parents=True, exist_ok=True)
    args.raw.write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")
    elapsed = time.perf_counter() - started
    argv_text = " ".join(sys.argv[1:]) if argv is None else " ".join(argv)
    meta = {
        "command": f"python bench/run_all.py {argv_text}".strip(),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed": f"{elapsed / 60:.1f} min",
        "cpu": cpu_model(),
        "load": load,
        "git": git_head(),
        "peer_python": peer_python(),
        "seed": str(args.seed),
        "budget": f"{args.budget:g}",
        "max_reps": str(args.max_reps),
        "peer_cap": f"{args.peer_cap:,.0f}",
        "op_caps": ", ".join(f"{op} {cap:,.0f} s" for op, cap in args.op_caps.items()),
    }
    meta_path.write_text(
        json.dumps({"meta": meta, "notes": notes, "sizes": sizes}, indent=1), encoding="utf-8"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report(records, sizes, meta, paths, notes), encoding="utf-8")
    log(f"wrote {args.out} and {args.raw} in {elapsed / 60:.1f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
