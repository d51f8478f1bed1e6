"""`compactlens postmortem FILE`: table or JSON, located errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compactlens import load_transcript, sized_config
from compactlens.analysis import DEFAULT_CONTEXT_WINDOW, percent, postmortem, sized_factory
from compactlens.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def test_table_lists_every_compaction_with_recall(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "claude_code_compacted.jsonl"
    assert main(["postmortem", str(path)]) == 0
    out = capsys.readouterr().out
    expected = postmortem(load_transcript(path))
    n = len(expected.compactions)
    assert f"{n} recorded compaction{'' if n == 1 else 's'};" in out  # never "(s)"
    for c in expected.compactions:
        assert c.agent is not None and c.agent.recall is not None
        assert f"{percent(c.agent.survived, c.agent.extracted)} ({c.agent.survived}/" in out
        assert c.agent.verdict is not None
        assert f"verdict, agent: {c.agent.verdict.headline} ({c.agent.verdict.summary})" in out
        assert f"compaction {c.number} at message {c.recorded.index}" in out
    assert "reference pipeline" in out


def test_json_matches_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "inspect_log.json"
    assert main(["postmortem", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["file"] == str(path)
    # Judged against the window every surface uses when none is given.
    expected = postmortem(load_transcript(path), context_window=DEFAULT_CONTEXT_WINDOW).to_dict()
    assert data["compactions"] == expected["compactions"]


def test_a_context_window_goes_to_every_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "claude_code_compacted.jsonl"
    assert main(["postmortem", str(path), "--context-window", "40", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = postmortem(load_transcript(path), context_window=40).to_dict()
    assert data["compactions"] == expected["compactions"]
    assert "context window" in json.dumps(data["compactions"])
    assert main(["postmortem", str(path), "--context-window", "-1"]) == 2
    assert "--context-window must be a number of tokens (0: none)" in capsys.readouterr().err
    assert main(["postmortem", str(path), "--context-window", "0", "--json"]) == 0
    unchecked = json.loads(capsys.readouterr().out)
    assert unchecked["compactions"] == postmortem(load_transcript(path)).to_dict()["compactions"]


def test_config_adds_a_strategy_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "keep.json"
    config.write_text(json.dumps({"type": "truncation", "max_n": 10**9, "compact_to": 10**9}))
    assert (
        main(
            ["postmortem", str(FIXTURES / "codex_rollout.jsonl"), "--config", str(config), "--json"]
        )
        == 0
    )
    (c,) = json.loads(capsys.readouterr().out)["compactions"]
    assert [s["label"] for s in c["strategies"]] == ["keep.json", "reference pipeline"]
    assert c["strategies"][0]["recall"] == 1.0


def test_a_file_without_compactions_says_so(
    capsys: pytest.CaptureFixture[str], repo_root: Path
) -> None:
    assert main(["postmortem", str(repo_root / "sample_transcripts" / "coding_agent.json")]) == 0
    assert "no recorded compactions" in capsys.readouterr().out


def test_bad_input_is_one_located_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "rollout.jsonl"
    bad.write_text(
        json.dumps({"type": "session_meta", "payload": {}})
        + "\n"
        + json.dumps({"type": "response_item", "payload": {"type": "message", "role": 5}})
        + "\n"
    )
    assert main(["postmortem", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 2: payload.role" in err and str(bad) in err


def test_bad_config_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.json"
    config.write_text('{"type": "warp"}')
    path = str(FIXTURES / "codex_rollout.jsonl")
    assert main(["postmortem", path, "--config", str(config)]) == 2
    assert "c.json" in capsys.readouterr().err


def test_a_subagent_log_given_by_path_recovers_its_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = tmp_path / "7c1e.jsonl"
    parent.write_text((FIXTURES / "claude_code_compacted.jsonl").read_text())
    first = load_transcript(parent).compactions[0]
    assert first.summary is not None and first.replaced
    summary = first.summary.split("Summary:", 1)[1].strip()
    sub = tmp_path / "7c1e" / "subagents" / "agent-acompact-01.jsonl"
    sub.parent.mkdir(parents=True)
    events = [
        {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "Summarize."}},
        {
            "type": "assistant",
            "sessionId": "s",
            "message": {"role": "assistant", "content": [{"type": "text", "text": summary}]},
        },
    ]
    sub.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert main(["postmortem", str(sub), "--json"]) == 0
    (c,) = json.loads(capsys.readouterr().out)["compactions"]
    assert "parent session file 7c1e.jsonl" in c["note"]
    assert c["agent"] is not None


def test_config_is_sized_to_the_agent_and_unequal_sizes_are_marked(
    capsys: pytest.CaptureFixture[str], repo_root: Path
) -> None:
    # Review 6: pipeline.json kept its 8,000-token trigger, so it left the whole history
    # ("100%, 2,252 tok, unchanged") beside the agent's 103 tokens.
    path = repo_root / "sample_transcripts" / "claude_code_compacted.jsonl"
    config = repo_root / "examples" / "pipeline.json"
    assert main(["postmortem", str(path), "--config", str(config), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for c in data["compactions"]:
        side = c["strategies"][0]
        assert side["label"] == "pipeline.json"
        assert side["status"] != "unchanged" and side["tokens_after"] < c["history_tokens"]
    assert main(["postmortem", str(path), "--config", str(config)]) == 0
    out = capsys.readouterr().out
    expected = postmortem(
        load_transcript(path),
        [("pipeline.json", sized_factory(json.loads(config.read_text())))],
    )
    rows = [line for line in out.splitlines() if "claude_code.compact_boundary  " in line]
    assert len(rows) == len(expected.compactions)
    for c, row in zip(expected.compactions, rows, strict=True):
        (side,) = c.strategies
        marked = f"{side.tokens_after:,} tok, {side.status}, not at equal size" in row
        assert marked == (not c.at_equal_size(side))
        if not c.at_equal_size(side):
            assert c.size_note(side) in out
    assert any(not c.at_equal_size(c.strategies[0]) for c in expected.compactions)


def test_sized_config_scales_every_token_threshold() -> None:
    config = {
        "type": "pipeline",
        "target": {"op": "at_most", "metric": "tokens", "n": 6000},
        "strategies": [
            {
                "type": "tool_result_collapse",
                "trigger": {"op": "exceed", "metric": "tokens", "n": 8000},
            },
            {
                "type": "truncation",
                "trigger": {
                    "op": "any",
                    "children": [
                        {"op": "exceed", "metric": "tokens", "n": 12000},
                        {"op": "exceed", "metric": "messages", "n": 50},
                    ],
                },
                "minimum_preserved": 4,
            },
        ],
    }
    sized = sized_config(config, 800)
    assert sized["target"]["n"] == 600
    assert sized["strategies"][0]["trigger"]["n"] == 800
    children = sized["strategies"][1]["trigger"]["children"]
    assert [c["n"] for c in children] == [1200, 50]  # messages are not tokens
    assert sized["strategies"][1]["minimum_preserved"] == 4
    assert config["strategies"][0]["trigger"]["n"] == 8000  # the input is not changed
    untouched = {"type": "truncation", "max_n": 10**9}
    assert sized_config(untouched, 800) == untouched
    only_target = {
        "type": "tool_result_collapse",
        "target": {"op": "at_most", "metric": "tokens", "n": 400},
    }
    assert sized_config(only_target, 100)["target"]["n"] == 100
