"""compact() against the real @deepagents/compaction on seeded scenarios.

The npm package is not published, so this runs the upstream TypeScript source: set
``DEEPAGENTS_COMPACTION_SRC`` to a checkout of JanuaryLabs/deepagents (or to its
``packages/compaction`` folder) and have ``tsx`` on PATH (or ``DEEPAGENTS_TSX`` naming it).
Each run copies ``src/compact.ts`` and ``src/messages.ts`` into a temporary folder beside
``deepagents_harness/driver.mts`` and a stub of the ``ai`` package (no model, no network:
``generateText`` records its arguments and answers with the scenario's summary), runs
the scenarios there, and compares with ``compact(..., format="ai-sdk")``: the estimate,
the status and reason, the replaced range, the token counts, the resulting messages and
what was asked of the model (the allowance, and the instructions after the prompt, whose
wording is ours: see docs/compat.md). Skipped, saying why, when either is missing.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from compactlens import compact, estimate_tokens
from compactlens.model.jsjson import js_number
from compactlens.summarizers import SUMMARY_PROMPT, FakeSummarizer

HARNESS = Path(__file__).resolve().parent / "deepagents_harness"
ENV_SRC = "DEEPAGENTS_COMPACTION_SRC"
ENV_TSX = "DEEPAGENTS_TSX"
UPSTREAM_FILES = ("compact.ts", "messages.ts")
#: What the upstream prompt ends with before the caller's instructions.
HEADER = "\n\nAdditional preservation requirements:\n"
SEEDS = 60


def _upstream_src() -> Path:
    root = os.environ.get(ENV_SRC)
    if not root:
        pytest.skip(
            f"{ENV_SRC} is not set: point it at a checkout of JanuaryLabs/deepagents "
            "(@deepagents/compaction is not on npm) to run the differential test"
        )
    for src in (Path(root) / "src", Path(root) / "packages" / "compaction" / "src"):
        if all((src / name).is_file() for name in UPSTREAM_FILES):
            return src
    pytest.skip(f"{ENV_SRC}={root} holds no packages/compaction/src/{{compact,messages}}.ts")


def _tsx() -> str:
    found = os.environ.get(ENV_TSX) or shutil.which("tsx")
    if not found:
        pytest.skip(f"no tsx to run the TypeScript source (put it on PATH or set {ENV_TSX})")
    return found


def run_upstream(scenarios: list[dict[str, Any]], tmp: Path) -> list[dict[str, Any]]:
    src, tsx = _upstream_src(), _tsx()
    for name in UPSTREAM_FILES:
        shutil.copy(src / name, tmp / name)
    shutil.copy(HARNESS / "driver.mts", tmp / "driver.mts")
    stub = tmp / "node_modules" / "ai"
    stub.mkdir(parents=True)
    shutil.copy(HARNESS / "ai_stub.mjs", stub / "index.mjs")
    (stub / "package.json").write_text(
        json.dumps({"name": "ai", "type": "module", "exports": "./index.mjs"})
    )
    done = subprocess.run(
        [tsx, "driver.mts"],
        cwd=tmp,
        input=json.dumps(scenarios),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out: list[dict[str, Any]] = json.loads(done.stdout)
    return out


# ------------------------------------------------------------------ scenarios


def _number(rng: random.Random) -> float | int:
    return rng.choice(
        [
            1.0,
            0.5,
            2.5e-7,
            1e16,
            -0.0,
            123.456,
            1e21,
            2**60,
            rng.randrange(1000),
            rng.uniform(-1e6, 1e6),
        ]
    )


def _scenario(seed: int) -> dict[str, Any]:
    """An AI SDK conversation: turns of user text, assistant calls (ids from a small pool,
    so some are used again) with numbers in their inputs, tool results as JSON values."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You keep the books."}]
    for turn in range(rng.randint(2, 6)):
        messages.append({"role": "user", "content": f"turn {turn}: " + "x" * rng.randint(1, 40)})
        for _ in range(rng.randint(0, 2)):
            ids = [f"call_{rng.randrange(3)}" for _ in range(rng.randint(1, 2))]
            calls = [
                {
                    "type": "tool-call",
                    "toolCallId": i,
                    "toolName": "ledger",
                    "input": {"amount": _number(rng), "rate": _number(rng)},
                }
                for i in dict.fromkeys(ids)
            ]
            messages.append({"role": "assistant", "content": calls})
            results = [
                {
                    "type": "tool-result",
                    "toolCallId": c["toolCallId"],
                    "toolName": "ledger",
                    "output": {"type": "json", "value": {"total": _number(rng)}},
                }
                for c in calls
                if rng.random() < 0.9
            ]
            if results:
                messages.append({"role": "tool", "content": results})
        messages.append({"role": "assistant", "content": "done " + "y" * rng.randint(0, 30)})
    estimate = estimate_tokens(messages, format="ai-sdk")
    return {
        "messages": messages,
        "targetTokens": rng.choice([estimate * 3, estimate * 2, estimate, estimate // 2 + 40, 60]),
        "keepLastMessages": rng.randint(1, 5),
        "instructions": rng.choice([None, "", "Keep ids.", "  keep ABC-1 \n", " \n\t "]),
        "summaryText": rng.choice(["S: books balanced", "  S: padded  ", "w" * 300, " \n "]),
    }


def _js_view(value: Any) -> Any:
    """``value`` with every number as the text JavaScript writes for it (JSON read back in
    Python keeps 2**60 exact and -0.0 negative; JavaScript holds the nearest double)."""
    if isinstance(value, dict):
        return {k: _js_view(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_view(v) for v in value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return js_number(float(value))


def _ours(s: dict[str, Any]) -> dict[str, Any]:
    fake = FakeSummarizer(text=s["summaryText"])
    r = compact(
        s["messages"],
        summarizer=fake,
        target_tokens=s["targetTokens"],
        keep_last_messages=s["keepLastMessages"],
        instructions=s["instructions"],
        format="ai-sdk",
    )
    return {
        "estimate": estimate_tokens(s["messages"], format="ai-sdk"),
        "status": r.status,
        "reason": r.reason,
        "replacedRange": list(r.replaced_range) if r.replaced_range else None,
        "tokens": {"before": r.tokens.before, "after": r.tokens.after},
        "messages": _js_view(json.loads(json.dumps(r.messages))),
        "calls": [
            {"instructions": c.prompt.removeprefix(SUMMARY_PROMPT), "max": c.max_output_tokens}
            for c in fake.calls
        ],
    }


def _theirs(r: dict[str, Any], upstream_prompt: str) -> dict[str, Any]:
    calls = [
        {
            "instructions": c["instructions"].removeprefix(upstream_prompt),
            "max": c["maxOutputTokens"],
        }
        for c in r["calls"]
    ]
    rest = {k: v for k, v in r.items() if k not in ("calls", "messages")}
    return {**rest, "messages": _js_view(r["messages"]), "calls": calls}


def _upstream_prompt(results: list[dict[str, Any]], scenarios: list[dict[str, Any]]) -> str:
    """The upstream prompt: what a call without instructions was given."""
    for r, s in zip(results, scenarios, strict=True):
        if r["calls"] and not s["instructions"]:
            return str(r["calls"][0]["instructions"])
    raise AssertionError("no scenario called the model without instructions")


def test_compact_agrees_with_deepagents_on_seeded_scenarios(tmp_path: Path) -> None:
    scenarios = [_scenario(seed) for seed in range(SEEDS)]
    # JSON text carries the numbers the way both sides read them (1.0 stays a float here).
    theirs_raw = run_upstream(json.loads(json.dumps(scenarios)), tmp_path)
    prompt = _upstream_prompt(theirs_raw, scenarios)
    differ = []
    for seed, (s, raw) in enumerate(zip(scenarios, theirs_raw, strict=True)):
        ours, theirs = _ours(s), _theirs(raw, prompt)
        if ours != theirs:
            keys = [k for k in ours if ours[k] != theirs.get(k)]
            differ.append((seed, keys))
    outcomes = {r["reason"] or r["status"] for r in theirs_raw}
    assert {"compacted", "protected-history", "summary-too-large"} <= outcomes
    assert differ == [], f"seeds that differ (and in what): {differ}"
    assert all(s.startswith(HEADER) or not s for r in theirs_raw for s in
               (c["instructions"].removeprefix(prompt) for c in r["calls"]))  # fmt: skip
