"""``compactlens compact``: guards from flags and config files, and ``--explain`` fixes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from compactlens.cli import main
from compactlens.engine.repair import OMITTED_NOTE

REPO = Path(__file__).resolve().parents[2]
CANNOT_FIT = REPO / "sample_transcripts" / "cannot_fit_16k.json"


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_explain_prints_ranked_fixes_with_their_costs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "compact", CANNOT_FIT, "--strategy", "sliding_window",
        "--param", "trigger=tokens_exceed:12000", "--explain",
    )  # fmt: skip
    assert code == 1  # the run itself is cannot-fit
    fixes = out.split("fixes (", 1)[1]
    assert re.search(r"1\. (\[COSTLY\] )?add a clamp stage first", fixes)
    # Each fix reads as the verdict of the run it gives (the run's own verdict's words).
    assert "gives: Fits" in fixes and "fact recall (" in fixes
    assert "suggestions:" not in out  # the verdict's one next step, no single-change hints


def test_a_fix_config_reproduces_what_it_promised(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run(
        capsys, "compact", CANNOT_FIT, "--strategy", "sliding_window",
        "--param", "trigger=tokens_exceed:12000", "--explain", "--json",
    )  # fmt: skip
    data = json.loads(out)
    best: dict[str, Any] = data["fixes"]["fixes"][0]
    config = tmp_path / "fix.json"
    config.write_text(json.dumps(best["config"]), encoding="utf-8")
    code, out, _ = run(capsys, "compact", CANNOT_FIT, "--config", config, "--json")
    again = json.loads(out)
    assert code == 0 and again["status"] == "compacted"
    assert again["tokens_after"] == best["tokens_after"]
    assert again["guards"] == best["config"]["guards"]


def test_guard_flags_reach_the_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    convo: list[dict[str, Any]] = []
    for t in range(6):
        call = {"id": f"c{t}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        if t % 3 == 0:
            convo.append({"role": "user", "content": f"request {t}"})
        convo += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{t}", "content": "x" * 800},
        ]
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(convo), encoding="utf-8")
    out_file = tmp_path / "out.json"
    code, _, _ = run(
        capsys, "compact", src, "--strategy", "truncation",
        "--param", "trigger=tokens_exceed:300", "--param", "minimum_preserved=0",
        "--provider", "anthropic", "--no-keep-latest-request", "-o", out_file,
    )  # fmt: skip
    written = json.loads(out_file.read_text(encoding="utf-8"))
    assert code == 0 and written[0] == {"role": "user", "content": OMITTED_NOTE}
    code, _, err = run(
        capsys,
        "compact",
        src,
        "--strategy",
        "truncation",
        "--param",
        "trigger=tokens_exceed:9",
        "--pin",
        99,
    )
    assert code == 2 and "pins: message 99 does not exist" in err
    bad = tmp_path / "bad.json"
    trig = {"op": "exceed", "metric": "tokens", "n": 9}
    bad.write_text(
        json.dumps({"strategy": {"type": "truncation", "trigger": trig}, "guards": {"pin": [1]}})
    )
    code, _, err = run(capsys, "compact", src, "--config", bad)
    assert code == 2 and "$.guards: guards: unknown key 'pin'" in err


def test_profile_maf_gives_the_maf_defaults(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    convo = []
    for t in range(3):
        convo += [
            {"role": "user", "content": f"question {t} " + "q" * 40},
            {"role": "assistant", "content": f"answer {t} " + "a" * 40},
        ]
    src = tmp_path / "chat.json"
    src.write_text(json.dumps(convo), encoding="utf-8")
    # The CLI counts tokens (the estimate): max_n and compact_to are token counts here.
    args = ["compact", src, "--strategy", "truncation", "--param", "max_n=40"]
    args += ["--param", "compact_to=20", "--json"]
    code, out, _ = run(capsys, *args)
    assert code == 1 and json.loads(out)["status"] == "cannot-fit"
    code, out, _ = run(capsys, *args, "--profile", "maf")
    data = json.loads(out)
    assert code == 0 and data["status"] == "compacted"
    assert data["guards"]["keep_latest_request"] is False
