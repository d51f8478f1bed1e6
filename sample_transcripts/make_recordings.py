"""Write sample_transcripts/recordings/: a folder of recordings, as agents with the
compactlens integrations write them (``record_to=``), for the inspector's Runs page.

Four runs of made-up agents (our own text, no real user), each written by the real
:class:`compactlens.integrations.Recorder` through a :class:`Compactor`:

- a LangChain support agent whose tool results are collapsed, then truncated (compactions);
- an OpenAI Agents SDK research agent that summarizes its older history (extractive
  summarizer, offline);
- a pydantic-ai coding agent whose user pastes build logs larger than its budget (the
  latest request is kept, so those calls are ``cannot-fit``);
- a short Microsoft Agent Framework run that never needs compacting.

Deterministic: file names, run ids and times come from a fixed clock. Run:
python sample_transcripts/make_recordings.py
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _helpers import HERE, assistant, call, system, tool, user

from compactlens import ExtractiveSummarizer
from compactlens.integrations import Compactor
from compactlens.integrations import recording as recording_module

FOLDER = HERE / "recordings"
START = dt.datetime(2026, 11, 2, 9, 0, 0, tzinfo=dt.UTC)


def _clock(start: dt.datetime, step_s: float) -> Iterator[str]:
    t = start
    while True:
        yield t.isoformat(timespec="milliseconds")
        t += dt.timedelta(seconds=step_s)


def _turn(t: int, topic: str, size: int, paste: int) -> list[dict[str, Any]]:
    """A question (with ``paste`` lines of a pasted log), a tool call, its result (``size``
    facts) and the answer."""
    cid = f"call_{t:03d}"
    facts = " ".join(
        f"{topic} detail {t}.{i}: value {(t * 37 + i * 11) % 997}." for i in range(size)
    )
    log = "".join(f"\n[{i:04d}] step {i} of job {t}: exit {(i * t) % 3}" for i in range(paste))
    return [
        user(f"Turn {t}: what do we know about {topic} item {t}?{log}"),
        assistant(None, [call(cid, "lookup", {"q": f"{topic} {t}"})]),
        tool(cid, f"Records for {topic} {t}. {facts}"),
        assistant(f"Item {t} of {topic}: value {(t * 37) % 997}, see the records above."),
    ]


def _run(
    framework: str,
    run_id: str,
    compactor: Compactor,
    turns: int,
    topic: str,
    size: Callable[[int], int],
    start: dt.datetime,
    paste: Callable[[int], int] = lambda t: 0,
) -> Path:
    """An agent loop that sends what the compactor keeps, one model call per turn."""
    assert compactor.recorder is not None
    recorder = compactor.recorder
    recorder.path = FOLDER / f"{framework}-{start:%Y%m%dT%H%M%S}-{run_id}.jsonl"
    clock = _clock(start, 7.5)
    recording_module._now = lambda: next(clock)  # a fixed clock: the same bytes every time
    history: list[dict[str, Any]] = [system(f"You are a {topic} assistant. Use lookup.")]
    for t in range(turns):
        turn = _turn(t, topic, size(t), paste(t))
        history = [*history, turn[0]]
        result = compactor.run(history, "openai-chat")
        history = [*result.messages, *turn[1:]]
    return recorder.path


def main() -> None:
    shutil.rmtree(FOLDER, ignore_errors=True)
    FOLDER.mkdir()
    tokens = {"op": "exceed", "metric": "tokens"}
    collapse = {
        "type": "pipeline",
        "strategies": [
            {"type": "tool_result_collapse", "trigger": {**tokens, "n": 2500},
             "keep_last_tool_call_groups": 2},
            {"type": "truncation", "trigger": {**tokens, "n": 3000}, "minimum_preserved": 6},
        ],
    }  # fmt: skip
    _run(
        "langchain",
        "5b1c0e2a",
        Compactor.from_config(collapse, record_to=FOLDER, framework="langchain"),
        36,
        "billing",
        lambda t: 12,
        START,
    )
    summary = {"type": "summarization", "trigger": {**tokens, "n": 3500}, "minimum_preserved": 6}
    _run(
        "openai-agents",
        "a7d94f10",
        Compactor.from_config(
            summary,
            summarizer=ExtractiveSummarizer(),
            record_to=FOLDER,
            framework="openai-agents",
        ),
        28,
        "market research",
        lambda t: 14,
        START + dt.timedelta(hours=1),
    )
    budget = {"type": "truncation", "trigger": {**tokens, "n": 2000}, "minimum_preserved": 4}
    _run(
        "pydantic-ai",
        "c3e0b871",
        Compactor.from_config(budget, record_to=FOLDER, framework="pydantic-ai"),
        14,
        "build log",
        lambda t: 10,
        START + dt.timedelta(hours=2),
        paste=lambda t: 220 if t >= 10 else 0,
    )
    _run(
        "agent-framework",
        "e81f2d39",
        Compactor.from_config(collapse, record_to=FOLDER, framework="agent-framework"),
        6,
        "travel",
        lambda t: 6,
        START + dt.timedelta(hours=3),
    )
    for path in sorted(FOLDER.glob("*.jsonl")):
        print(path.relative_to(HERE.parent), path.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
