"""Golden cases: what compactlens produces for every known transcript, as stable JSON.

Every transcript in ``sample_transcripts/`` and in the shared corpus (canonical files and
``original_format/``) is run through each inspector preset with both the estimate and
``o200k_base``, at two budgets (the inspector's default, half the transcript, and a tight
one, a tenth), plus the boundary analysis, pairing validation, one-shot ``compact()`` and
its cannot-fit explanation, and a session replay on the bundled samples. The JSON of each
result, without timings, is hashed; ``golden.json`` holds the hashes.

This file is the only place that names the APIs it drives, so a refactor that moves them
changes the imports here and nothing else: the hashes must stay byte-identical.

Regenerate (only when a behaviour change is intended, and say so in the commit)::

    .venv/bin/python tests/golden/golden_cases.py --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
GOLDEN_FILE = HERE / "golden.json"
PRESET_NAMES = (
    "reference",
    "compact",
    "context_window",
    "truncation",
    "sliding_window",
    "tool_collapse",
)
TOKENIZER_NAMES = ("estimate", "o200k_base")
BUDGET_FRACTIONS = (("half", 0.5), ("tenth", 0.1))


def _tests_conftest() -> Any:
    """The suite's root conftest (where the corpus is), loaded by path under its own name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_compactlens_tests_root", HERE.parent / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus_path = _tests_conftest().corpus_path


def transcript_files() -> list[tuple[str, Path]]:
    """(case prefix, path) of every transcript the golden cases cover."""
    out = [(f"samples/{p.name}", p) for p in sorted((REPO / "sample_transcripts").glob("*.json"))]
    root = corpus_path()
    if root.is_dir():
        out += [(f"corpus/{p.name}", p) for p in sorted(root.glob("*.json"))]
        out += [
            (f"corpus/original_format/{p.name}", p)
            for p in sorted((root / "original_format").glob("*"))
            if p.is_file()
        ]
    return out


def _strip_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_timings(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list):
        return [_strip_timings(v) for v in value]
    return value


def stable_json(value: Any) -> str:
    """The JSON text that is hashed: timings removed, key order as produced."""
    return json.dumps(_strip_timings(value), ensure_ascii=False, indent=1)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _cases_for(prefix: str, path: Path) -> Iterator[tuple[str, Callable[[], Any]]]:
    """(case id, a function that returns the JSON-able value) for one transcript."""
    from compactlens import validate_pairing
    from compactlens.compact import analyze_boundary
    from compactlens_inspector.lab.config import SummarizerSettings, nice_budget, preset
    from compactlens_inspector.lab.runs import build_index, make_summarizer, run_config
    from compactlens_inspector.serving.loader import parse_transcript

    loaded = parse_transcript(path.read_bytes(), path.name)
    messages = loaded.messages
    yield f"{prefix}|pairing", lambda: [p.to_dict() for p in validate_pairing(list(messages))]
    for keep in (1, 4):
        yield (
            f"{prefix}|boundary|keep={keep}",
            lambda keep=keep: analyze_boundary(list(messages), keep).to_dict(),
        )
    for tok in TOKENIZER_NAMES:
        index = build_index(messages, tok)
        for label, fraction in BUDGET_FRACTIONS:
            budget = nice_budget(index.total_tokens, fraction)
            for name in PRESET_NAMES:

                def run(name: str = name, budget: int = budget, index: Any = index) -> Any:
                    summarizer = make_summarizer(SummarizerSettings())
                    outcome = run_config(index, preset(name, budget), summarizer)
                    assert outcome.result is not None, outcome.error
                    return outcome.result.to_dict()

                yield f"{prefix}|{tok}|{label}|{name}", run
    yield from _one_shot_cases(prefix, messages)


def _one_shot_cases(prefix: str, messages: Any) -> Iterator[tuple[str, Callable[[], Any]]]:
    from compactlens import ExtractiveSummarizer, compact, estimate_tokens, explain_cannot_fit

    try:
        total = estimate_tokens(list(messages))
    except TypeError:  # media or opaque content: the default estimate refuses it
        return
    for label, fraction in BUDGET_FRACTIONS:
        target = max(1, int(total * fraction))

        def one_shot(target: int = target) -> Any:
            res = compact(list(messages), summarizer=ExtractiveSummarizer(), target_tokens=target)
            return res.to_dict()

        def explained(target: int = target) -> Any:
            return explain_cannot_fit(list(messages), target_tokens=target).to_dict()

        yield f"{prefix}|compact()|{label}", one_shot
        yield f"{prefix}|explain_cannot_fit|{label}", explained


def _replay_cases(prefix: str, path: Path) -> Iterator[tuple[str, Callable[[], Any]]]:
    from compactlens_inspector.lab.config import SummarizerSettings, nice_budget, preset
    from compactlens_inspector.lab.replay import replay_session
    from compactlens_inspector.lab.runs import build_index, make_summarizer
    from compactlens_inspector.serving.loader import parse_transcript

    index = build_index(parse_transcript(path.read_bytes(), path.name).messages, "estimate")
    budget = nice_budget(index.total_tokens, 0.3)
    for name in ("compact", "reference"):

        def replay(name: str = name) -> Any:
            steps = replay_session(
                index, preset(name, budget), make_summarizer(SummarizerSettings()), max_steps=12
            )
            return [
                {
                    "turn": s.turn,
                    "messages_in": s.messages_in,
                    "tokens_in": s.tokens_in,
                    "fired": s.fired,
                    "status": s.status,
                    "tokens_out": s.tokens_out,
                    "messages_out": s.messages_out,
                    "detail": s.detail,
                    "lifecycle": [
                        {k: v for k, v in e.items() if k != "evaluation_id"} for e in s.lifecycle
                    ],
                    "trigger_index": s.trigger_index,
                }
                for s in steps
            ]

        yield f"{prefix}|replay|{name}", replay


def all_cases() -> Iterator[tuple[str, Callable[[], Any]]]:
    for prefix, path in transcript_files():
        yield from _cases_for(prefix, path)
        if prefix.startswith("samples/"):
            yield from _replay_cases(prefix, path)


def compute() -> dict[str, str]:
    return {case: digest(stable_json(make())) for case, make in all_cases()}


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: golden_cases.py --write")
    hashes = compute()
    GOLDEN_FILE.write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(hashes)} golden hashes to {GOLDEN_FILE}")
