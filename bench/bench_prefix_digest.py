"""CPU cost per model call of the session's prefix digest in a growing agent loop.

    .venv/bin/python bench/bench_prefix_digest.py [--turns 1000 10000] [--calls 5]

A history of ``turns`` turns (user, assistant tool call, tool result, answer: four
openai-chat messages each) is built, then ``calls`` times a turn is appended and the
session is called, as an agent loop does; the median CPU milliseconds
(``time.process_time``) of those calls is printed:

* ``prepare``: one whole ``CompactionSession.prepare`` (idle: the trigger never fires),
  with a usage baseline recorded after each call and a checkpoint covering the first
  turns restored on each call, so every digest of the session runs;
* ``digests``: only the digests such a call computes (the baseline's prefix, what is
  sent, the checkpoint's prefix) over the messages read afresh, as the session reads
  them: ``prefix_digest`` each time (the full computation) and, when this tree has it,
  the session's incremental ``PrefixDigest``; and ``PrefixDigest, same objects`` when the
  reader hands back the message objects it read before (identity, no equality checks).

Run it on an older tree with ``PYTHONPATH=<tree>/core`` to compare.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from compactlens import messages_exceed
from compactlens.formats import from_caller
from compactlens.session import Checkpoint, CompactionSession, InMemoryCheckpointStore
from compactlens.session.checkpoints import prefix_digest
from compactlens.summarizers import FakeSummarizer

KEY = "bench"


def turn(i: int) -> list[dict[str, Any]]:
    call = {"id": f"call_{i}", "type": "function"}
    call["function"] = {"name": "read_file", "arguments": f'{{"path": "src/m{i}.py"}}'}
    return [
        {"role": "user", "content": f"Question {i}: what does module {i} do?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{i}", "content": f"def f{i}():\n" + "x" * 200},
        {"role": "assistant", "content": f"Module {i} defines f{i}, which returns x."},
    ]


def history_of(turns: int) -> list[dict[str, Any]]:
    return [m for i in range(turns) for m in turn(i)]


def cpu_ms(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return (time.process_time() - start) * 1000


def bench_prepare(turns: int, calls: int) -> float:
    history = history_of(turns)
    store = InMemoryCheckpointStore()
    covered = from_caller(history[:40]).messages
    store.save(
        KEY,
        Checkpoint(
            prefix_length=40,
            prefix_sha256=prefix_digest(covered),
            replacement=({"role": "user", "content": "summary of the first ten turns"},),
        ),
    )
    session = CompactionSession(
        triggers=[messages_exceed(10**9)],
        target_tokens=10**9,
        summarizer=FakeSummarizer(text="s"),
        store=store,
        key=KEY,
    )
    session.prepare(history)
    session.record_usage(1000)
    times = []
    for i in range(calls):
        history = [*history, *turn(turns + i)]
        times.append(cpu_ms(lambda h=history: session.prepare(h)))  # type: ignore[misc]
        session.record_usage(1000)
    return statistics.median(times)


def bench_digests(turns: int, calls: int) -> dict[str, float]:
    """The three digests of one call, over messages read afresh each call."""
    history = history_of(turns)
    runs: dict[str, Callable[[tuple[Any, ...], int], Any]] = {}
    runs["prefix_digest"] = lambda msgs, prev: (
        prefix_digest(msgs[:40]),
        prefix_digest(msgs[:prev]),
        prefix_digest(msgs),
    )
    try:
        from compactlens.session.digest import PrefixDigest
    except ImportError:
        pass
    else:
        kept, sent = PrefixDigest(), PrefixDigest()
        runs["PrefixDigest"] = lambda msgs, prev: (
            kept.digest(msgs, 40),
            sent.digest(msgs, prev),
            sent.digest(msgs),
        )
        kept2, sent2 = PrefixDigest(), PrefixDigest()
        runs["PrefixDigest, same objects"] = lambda msgs, prev: (
            kept2.digest(msgs, 40),
            sent2.digest(msgs, prev),
            sent2.digest(msgs),
        )
    out = {}
    for name, run in runs.items():
        grown = history
        msgs = from_caller(grown).messages
        prev = len(msgs)
        run(msgs, prev)
        times = []
        for i in range(calls):
            grown = [*grown, *turn(turns + i)]
            if name.endswith("same objects"):  # a reader that keeps the messages it read
                msgs = (*msgs, *from_caller(turn(turns + i)).messages)
            else:
                msgs = from_caller(grown).messages
            times.append(cpu_ms(lambda r=run, m=msgs, p=prev: r(m, p)))  # type: ignore[misc]
            prev = len(msgs)
        out[name] = statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args()
    print("median CPU ms per call")
    for turns in args.turns:
        digests = bench_digests(turns, args.calls)
        for name, ms in digests.items():
            print(f"{turns:>6} turns  digests, {name:<27} {ms:8.1f}")
        print(f"{turns:>6} turns  prepare{'':<29} {bench_prepare(turns, args.calls):8.1f}")


if __name__ == "__main__":
    main()
