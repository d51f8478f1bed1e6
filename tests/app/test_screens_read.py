"""Screens that read (issue 25, build item 6): a tool call shows its name and the
argument that matters, and the Diff folds a run of identical decisions into one row."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from apptest_helpers import REPO_ROOT, go, no_exceptions, plain, texts

from compactlens import MessageIndex, load_transcript
from compactlens.model import ToolCallPart
from compactlens_inspector.lab.config import SummarizerSettings, encode_config, preset, with_budget
from compactlens_inspector.lab.runs import make_summarizer, run_config
from compactlens_inspector.views.message import KEY_CHARS, call_label, key_argument, message_card
from compactlens_inspector.views.run import FOLDED_ACTIONS, decision_views, diff_rows

SAMPLE = REPO_ROOT / "sample_transcripts" / "coding_agent.json"


def _index() -> MessageIndex:
    return MessageIndex.build(load_transcript(SAMPLE).messages)


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [
        ({"command": "git log --oneline -5"}, "git log --oneline -5"),
        ({"command": ["bash", "-lc", "pytest -q"]}, "bash -lc pytest -q"),
        ({"path": "src/money.py", "limit": 40}, "src/money.py"),
        ({"query": "round half even", "k": 3}, "round half even"),
        ({"anything": "only text"}, "only text"),
    ],
)
def test_a_call_label_names_the_tool_and_what_it_was_asked(
    arguments: dict[str, object], shown: str
) -> None:
    assert call_label("tool", json.dumps(arguments)) == f"tool: {shown}"


def test_a_call_without_a_telling_argument_is_its_name_and_long_ones_are_cut() -> None:
    assert call_label("ping", "{}") == "ping"
    assert call_label("ping", "not json") == "ping"
    assert call_label("ping", json.dumps({"a": 1, "b": 2})) == "ping"
    long = key_argument(json.dumps({"command": "echo " + "x" * 500 + "\nsecond line"}))
    assert len(long) == KEY_CHARS and long.endswith("…") and "\n" not in long


def test_tool_call_titles_show_the_argument_not_the_id() -> None:
    ix = _index()
    calls = [
        (k, p) for k, m in enumerate(ix.messages) for p in m.parts if isinstance(p, ToolCallPart)
    ]
    assert calls
    for k, part in calls:
        card = message_card(ix.messages[k], k, None)
        titles = [b.title for b in card.blocks if b.kind == "tool_call"]
        key = key_argument(part.arguments)
        assert any(part.name in t and key in t for t in titles), titles
        assert not any(part.id in t for t in titles)


def test_the_diff_folds_each_run_of_identical_decisions_into_one_row() -> None:
    ix = _index()
    r = run_config(ix, preset("reference", 4300), make_summarizer(SummarizerSettings())).result
    assert r is not None
    views = decision_views(r)
    rows = diff_rows(views)
    assert [v for row in rows for v in row.views] == views  # nothing lost, order kept
    assert any(row.folded for row in rows)  # the case under test: a summary of many groups
    for row in rows:
        actions = {(v.decision.action, v.decision.strategy, v.decision.reason) for v in row.views}
        assert len(actions) == 1
        if row.folded:
            assert row.decision.action in FOLDED_ACTIONS
    for a, b in itertools.pairwise(rows):  # a run is never split in two
        same = (a.decision.action, a.decision.strategy, a.decision.reason) == (
            b.decision.action,
            b.decision.strategy,
            b.decision.reason,
        )
        assert not (same and a.decision.action in FOLDED_ACTIONS)


def test_the_diff_page_shows_a_summarized_run_as_one_row(
    app, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(SAMPLE.parent))
    at = go(app(sample="coding_agent", preset="reference").run(), "diff")
    no_exceptions(at)
    body = plain(texts(at))
    runs = [int(n.replace(",", "")) for n in re.findall(r"([\d,]+) groups folded into", body)]
    assert runs and max(runs) > 1, body[:2000]
    summarized = int(
        next(m.value for m in at.metric if m.label == "Groups summarized").replace(",", "")
    )
    assert sum(runs) <= summarized
    # Each folded run is one row: far fewer rows than groups on the page.
    assert body.count("folded into the summary above") < summarized


# -- one budget for every stage -------------------------------------------------------------------


def _token_thresholds(trigger: object) -> list[int]:
    if not isinstance(trigger, dict):
        return []
    own = [int(trigger["n"])] if trigger.get("metric") == "tokens" else []
    return own + [n for c in trigger.get("children", []) for n in _token_thresholds(c)]


@pytest.mark.parametrize("name", ["reference", "context_window", "truncation", "compact"])
def test_one_budget_sets_every_stage_trigger_and_target(name: str) -> None:
    config = with_budget(preset(name, 9000), 3000)
    if config.mode == "compact":
        assert config.compact.trigger_tokens == config.compact.target_tokens == 3000
        return
    for stage in config.stages:
        if stage.get("type") == "token_budget":
            assert stage["token_budget"] == 3000
            continue
        assert _token_thresholds(stage.get("trigger")) and set(
            _token_thresholds(stage.get("trigger")) + _token_thresholds(stage.get("target"))
        ) == {3000}
    assert set(_token_thresholds(config.target)) <= {3000}
    assert config.target_tokens == 3000 and config.trigger_tokens == 3000
    # The run meets the one budget it was given.
    r = run_config(_index(), config, make_summarizer(SummarizerSettings())).result
    assert r is not None and r.tokens_after <= 3000


def test_the_lab_budget_control_sets_every_stage_and_stages_stay_editable(app) -> None:
    at = go(app(cfg=encode_config(preset("reference", 9000))).run(), "lab")
    no_exceptions(at)
    at.number_input(key="sb_all_budget").set_value(3000).run()
    at.button(key="sb_set_budget").click().run()
    no_exceptions(at)
    stages = at.session_state["cl_lab"].stages
    assert len(stages) == 4
    assert all(_token_thresholds(s.get("trigger")) == [3000] for s in stages)
    # One stage edited on its own afterwards: the others keep the budget.
    at.number_input(key="sb_stage0_trigger_n_tokens").set_value(5000).run()
    no_exceptions(at)
    stages = at.session_state["cl_lab"].stages
    assert _token_thresholds(stages[0]["trigger"]) == [5000]
    assert all(_token_thresholds(s.get("trigger")) == [3000] for s in stages[1:])
