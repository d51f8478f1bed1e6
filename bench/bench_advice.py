"""Time the run's one next step (``advised()``: the fix search, each fix judged, the
one-click larger target) on long agent logs, in the library and in the inspector's Lab.

    python bench/bench_advice.py                 # library and Lab, the default logs
    python bench/bench_advice.py --no-app        # library only
    python bench/bench_advice.py --answers F.json  # also write each answer (to compare
                                                   # two versions: same next step and fixes)

Every Lab run of a configuration that is not safe draws a verdict bar whose next step
comes from the fix search (``state.advised_verdict``); the goal is about 1 s per new run.
The library is timed as ``compactlens compact`` and ``debug()`` call it (search, judge,
advise); the Lab as an AppTest of the Lab page with the log as its sample (first run of
the configuration: the run, its analysis, the search, each fix's run and analysis), with
the part spent in the app's judged fix search timed apart. Medians of ``--reps``.
Logs from the shared corpus (``../shared/corpus``), skipped when absent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
CASES = (
    ("claude_code__ae4a77f8-aedd-4bc1-888f-c94edc91af04.json", 3_000),
    ("claude_code__ae4a77f8-aedd-4bc1-888f-c94edc91af04.json", 20_000),
    ("tau_bench_airline__task30_trial2.json", 2_000),
    ("openhands_llmc__django__django-11299.json", 4_000),
    ("openhands_events__ponylang__ponyc-4593.json", 6_200),
    ("swe_agent__pwn__warmup.json", 2_100),
)


def library(path: Path, budget: int) -> tuple[dict[str, float], dict[str, Any]]:
    """One advised() as the command line computes it, by phase (seconds), and its answer."""
    from compactlens import CharEstimator, MessageIndex, load_transcript, run_strategy
    from compactlens.analysis import advised, judge_fixes, judge_run, search_fixes
    from compactlens.analysis.postmortem import reference_pipeline

    index = MessageIndex.build(load_transcript(path).messages, CharEstimator())
    strategy = reference_pipeline(budget)
    t0 = time.perf_counter()
    result = run_strategy(index, strategy)
    current = judge_run(index, result, strategy)
    t1 = time.perf_counter()
    found = search_fixes(index, strategy, summaries=result.summaries)
    t2 = time.perf_counter()
    judged = judge_fixes(index, found)
    t3 = time.perf_counter()
    final, search = advised(index, strategy, current, judged, summaries=result.summaries)
    t4 = time.perf_counter()
    phases = {
        "run+verdict": t1 - t0,
        "search": t2 - t1,
        "judge": t3 - t2,
        "advise": t4 - t3,
        "total": t4 - t0,
    }
    answer = {
        "level": final.level,
        "next_step": final.next_step,
        "fixes": [
            [f.plain_summary, f.tokens_after, f.verdict.summary if f.verdict else None]
            for f in (search.fixes if search is not None else ())
        ],
    }
    return phases, answer


def lab(path: Path, budget: int) -> tuple[float, float, str]:
    """The Lab page's first run of the reference preset at ``budget`` over the log (an
    AppTest; seconds), the part spent in the judged fix search, and the bar's text."""
    sys.path.insert(0, str(REPO / "app"))
    from streamlit.testing.v1 import AppTest

    import compactlens_inspector.state.results as results
    from compactlens_inspector.lab.config_url import encode_config
    from compactlens_inspector.lab.presets import preset

    spent: list[float] = []
    original = results._judged_fixes

    def timed(**kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(**kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    results._judged_fixes = timed  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / path.name).symlink_to(path)
            os.environ["COMPACTLENS_SAMPLES"] = folder
            at = AppTest.from_file(str(REPO / "app" / "streamlit_app.py"), default_timeout=600)
            at.query_params["sample"] = path.stem
            at.query_params["cfg"] = encode_config(preset("reference", budget))
            at.run()
            at.switch_page("compactlens_inspector/pages/lab.py")
            start = time.perf_counter()
            at.run()
            wall = time.perf_counter() - start
            bars = [a.value for a in [*at.error, *at.warning, *at.success]]
    finally:
        results._judged_fixes = original  # type: ignore[assignment]
    return wall, sum(spent), (bars[0] if bars else "")[:160]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--no-app", action="store_true")
    parser.add_argument("--answers", type=Path, default=None)
    args = parser.parse_args()
    answers: dict[str, Any] = {}
    for name, budget in CASES:
        path = CORPUS / name
        if not path.exists():
            print(f"skip {name}: not in {CORPUS}")
            continue
        runs = [library(path, budget) for _ in range(args.reps)]
        med = {k: statistics.median(r[0][k] for r in runs) for k in runs[0][0]}
        answers[f"{name}@{budget}"] = runs[0][1]
        parts = "  ".join(f"{k} {v * 1000:,.0f} ms" for k, v in med.items())
        print(f"library  {name[:40]:40} @{budget:>6,}: {parts}")
        if not args.no_app:
            wall, search, bar = lab(path, budget)
            print(
                f"lab      {name[:40]:40} @{budget:>6,}: page {wall * 1000:,.0f} ms, "
                f"fix search {search * 1000:,.0f} ms | {bar}"
            )
    if args.answers is not None:
        args.answers.write_text(json.dumps(answers, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
