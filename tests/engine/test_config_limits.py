"""A configuration read from outside is bounded before anything is built (issue 27,
finding 6): a short shared link once unpacked to 14,225 stages and more than 300 s of CPU."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import CompactlensError, ConfigError, strategy_from_config
from compactlens.engine import DEFAULT_LIMITS, check_config_size

STAGE = {"type": "truncation", "max_n": 8000, "compact_to": 4000}


def _pipeline(stages: int) -> dict[str, Any]:
    return {"type": "pipeline", "strategies": [dict(STAGE) for _ in range(stages)]}


def _nested(depth: int) -> dict[str, Any]:
    config: dict[str, Any] = dict(STAGE)
    for _ in range(depth):
        config = {"type": "pipeline", "strategies": [config]}
    return config


def test_many_stages_are_refused_at_once_with_the_place() -> None:
    started = time.process_time()
    with pytest.raises(ConfigError) as info:
        strategy_from_config(_pipeline(14_225))
    assert time.process_time() - started < 1.0
    assert str(info.value) == (
        "strategy.strategies: 14,225 strategies (at most 64 in one configuration)"
    )
    assert isinstance(info.value, CompactlensError) and isinstance(info.value, ValueError)


def test_strategies_are_counted_across_nested_pipelines() -> None:
    config = {"type": "pipeline", "strategies": [_pipeline(10) for _ in range(7)]}
    with pytest.raises(ConfigError, match="more than 64 strategies in one configuration"):
        strategy_from_config(config)


def test_the_bounds_themselves_are_accepted() -> None:
    strategy_from_config(_pipeline(DEFAULT_LIMITS.max_strategies - 1))
    strategy_from_config(_nested(DEFAULT_LIMITS.max_pipeline_depth))


def test_deep_nesting_is_refused_before_recursion() -> None:
    with pytest.raises(ConfigError, match="nested more than 8 deep"):
        strategy_from_config(_nested(DEFAULT_LIMITS.max_pipeline_depth + 1))
    with pytest.raises(ConfigError, match="nested more than"):
        strategy_from_config(_nested(5_000))


def test_a_huge_text_and_a_huge_list_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"strategy\.label: a text of 200,000 characters"):
        strategy_from_config({**_pipeline(1), "label": "x" * 200_000})
    guards_like = {"type": "truncation", "max_n": 8000, "pins": list(range(5_000))}
    with pytest.raises(ConfigError, match=r"strategy\.pins: 5,000 items"):
        strategy_from_config(guards_like)


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.integers() | st.text(max_size=5), lambda c: st.lists(c, max_size=4)))
def test_any_small_json_value_passes_the_size_check(value: Any) -> None:
    check_config_size({"type": "truncation", "extra": value}, "strategy")


@pytest.mark.slow
def test_the_cli_refuses_a_config_file_over_the_bounds(tmp_path: Path, repo_root: Path) -> None:
    config = tmp_path / "huge.json"
    config.write_text(json.dumps(_pipeline(1_000)))
    sample = repo_root / "sample_transcripts" / "coding_agent.json"
    done = subprocess.run(
        [sys.executable, "-m", "compactlens.cli", "compact", str(sample), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "1,000 strategies (at most 64" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
