"""Diff and event timeline pages."""

from __future__ import annotations

import itertools
import json
from typing import Any

from apptest_helpers import coding_agent, go, metric, metric_int, no_exceptions, plain, texts
from streamlit.testing.v1 import AppTest

from compactlens import CharEstimator, MessageIndex, run_strategy, strategy_from_config
from compactlens.engine.vocabulary import EVENTS
from compactlens.formats import from_caller
from compactlens_inspector.lab.config import (
    CompactSettings,
    LabConfig,
    default_stage,
    encode_config,
    preset,
)
from compactlens_inspector.views.run import decision_views, diff_rows


def _summarize(budget: int) -> LabConfig:
    stage = {**default_stage("summarization", budget), "minimum_preserved": 3}
    return LabConfig(stages=(stage,))


def test_diff_counts_match_the_decisions(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "diff")
    no_exceptions(at)
    excluded = metric_int(at, "Groups dropped")
    kept = metric_int(at, "Groups kept")
    assert excluded > 0 and kept > 0
    assert metric_int(at, "Groups collapsed") == metric_int(at, "Groups summarized") == 0
    assert metric_int(at, "Tokens after") <= 2000
    assert f"for {excluded} groups" in texts(at)  # only changed groups by default
    at.toggle(key="diff_changed_only").set_value(False).run()
    assert f"for {excluded + kept} groups" in texts(at)


def test_diff_shows_the_summary_and_its_text_diff_on_demand(app) -> None:
    at = go(app(cfg=encode_config(_summarize(2000))).run(), "diff")
    no_exceptions(at)
    assert metric_int(at, "Groups inserted") == 1
    assert metric_int(at, "Groups summarized") > 0
    summary_code = [c.value for c in at.code if c.value.startswith("[Extractive summary")]
    assert summary_code, "the summary text is shown"
    assert not any(c.language == "diff" for c in at.code)
    at.toggle(key="diff_show").set_value(True).run()
    diffs = [c.value for c in at.code if c.language == "diff"]
    shown, *whole = diffs
    assert shown.startswith("--- messages 1–") and "+++ summary" in shown
    full = whole[0] if whole else shown
    assert "+[Extractive summary" in full
    if whole:  # a long diff is cut, with the whole of it one click away
        assert len(shown) < len(full) and full.startswith(shown[:200])


def test_timeline_lists_lifecycle_and_stage_events(app) -> None:
    at = go(app(cfg=encode_config(preset("reference", 2000))).run(), "timeline")
    no_exceptions(at)
    table = at.dataframe[0].value
    events = list(table["event"])
    assert events[0] == "started" and events[-1] == "completed"
    assert "skipped" in events or "applied" in events
    strategies = [s.strip() for s in table["stage"]]
    # The pipeline's own event (its total) follows its stages, so tokens read in order.
    assert strategies[1:6] == [
        "Tool-result collapse",
        "Summarization",
        "Sliding window",
        "Truncation",
        "Pipeline (total)",
    ]


def test_choosing_an_event_jumps_to_its_messages(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "timeline")
    at.selectbox(key="timeline_event").set_value(1).run()
    no_exceptions(at)
    assert metric(at, "Event") == "applied"
    rng = metric(at, "Replaced range")
    assert rng != "—"
    first, last = (int(x) for x in rng.split("–"))
    assert first >= 1 and last > first
    assert "Affected groups" in texts(at)
    assert "dropped" in plain(texts(at))


def test_session_replay_fires_the_trigger_over_the_conversation(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 1500))).run(), "timeline")
    at.toggle(key="timeline_session").set_value(True).run()
    no_exceptions(at)
    evaluations = metric_int(at, "Evaluations")
    fired = metric_int(at, "Trigger fired")
    assert evaluations >= 8
    assert 1 <= fired < evaluations  # early turns fit; later ones compact
    table = at.dataframe[0].value
    assert table["status"].iloc[0] == "unchanged"
    assert "compacted" in list(table["status"])
    assert any("started" in str(x) for x in table["lifecycle"])
    # After a compaction, the next evaluation restores the saved checkpoint.
    assert any("restored" in str(x) for x in table["lifecycle"])


def _collapse_then_truncate() -> LabConfig:
    collapse = {
        **default_stage("tool_result_collapse", 3000),
        "keep_last_tool_call_groups": 0,
        "minimum_preserved": 2,
        "formatter": "names",
    }
    truncate = {**default_stage("truncation", 1200), "minimum_preserved": 3}
    return LabConfig(stages=(collapse, truncate))


def test_a_stage_lists_every_group_it_changed_even_when_a_later_stage_changed_it_again(
    app,
) -> None:
    config = _collapse_then_truncate()
    at = go(app(cfg=encode_config(config), sample="coding_agent").run(), "timeline")
    no_exceptions(at)
    # What the engine says each stage did (independent of the page).
    ix = MessageIndex.build(from_caller(coding_agent()).messages, CharEstimator())
    strategy = strategy_from_config(config.strategy_config())
    res = run_strategy(ix, strategy)
    stage = {e.strategy: e for e in res.events}
    collapsed = list(dict.fromkeys(stage["tool_result_collapse"].group_ids))
    excluded_later = set(collapsed) & set(stage["truncation"].group_ids)
    assert collapsed and excluded_later  # the case under test: truncation drops collapsed groups
    table = at.dataframe[0].value
    row = next(i for i, s in enumerate(table["stage"]) if s.strip() == "Tool-result collapse")
    assert table["groups changed"].iloc[row] == len(collapsed)
    at.selectbox(key="timeline_event").set_value(int(table["#"].iloc[row])).run()
    no_exceptions(at)
    body = plain(texts(at))
    assert f"Affected groups ({len(collapsed)})" in body
    assert f"{len(excluded_later)} of these groups were changed again by a later stage" in body
    first, last = (int(x) for x in metric(at, "Replaced range").split("–"))
    spanned = [k for g in collapsed for k in ix.groups[g].indices]
    assert (first, last) == (min(spanned), max(spanned))


def test_compact_mode_timeline_names_the_summarized_groups_and_the_insert(app) -> None:
    config = LabConfig(mode="compact", compact=CompactSettings(2000, 4, None))
    at = go(app(cfg=encode_config(config), sample="coding_agent").run(), "timeline")
    no_exceptions(at)
    at.selectbox(key="timeline_event").set_value(1).run()
    assert metric(at, "Event") == "applied"
    summarized = metric_int(go(at, "diff"), "Groups summarized")
    at = go(at, "timeline")
    body = plain(texts(at))
    assert f"Affected groups ({summarized}) · 1 inserted" in body


def _summary_log() -> str:
    """An OpenAI-chat log holding a Claude Code summary message (no tokens recorded)."""
    msgs: list[dict[str, str]] = [{"role": "system", "content": "You are helpful."}]
    for i in range(6):
        msgs.append({"role": "user", "content": f"Fix bug {i} in src/app_{i}.py " + "x" * 400})
        msgs.append({"role": "assistant", "content": f"Fixed src/app_{i}.py " + "y" * 300})
    summary = (
        "This session is being continued from a previous conversation that ran out of "
        "context. The conversation is summarized below:\n" + "A line about src/app_1.py.\n" * 200
    )
    msgs += [{"role": "user", "content": summary}, {"role": "user", "content": "Run the tests"}]
    return json.dumps(msgs)


def _frame_with(at: AppTest, column: str) -> Any:
    (frame,) = [d.value for d in at.dataframe if column in d.value.columns]
    return frame


def test_recorded_compactions_read_as_the_post_mortem_reads_them(app) -> None:
    at = go(app().run(), "load")
    at.text_area(key="load_paste").set_value(_summary_log())
    at.button(key="load_paste_button").click().run()
    at = go(at, "timeline")
    no_exceptions(at)
    table = _frame_with(at, "history tokens")
    cells = [str(v) for col in table.columns for v in table[col]]
    assert "None" not in cells and "nan" not in cells, cells
    # Words, not the code name; one entry, so said once above the table.
    assert "source" not in table.columns
    assert any("**Source:** Claude Code summary" in m.value for m in at.markdown)
    # The log records no token counts: no column of "not recorded" cells (the table fits).
    assert "tokens before (recorded)" not in table.columns
    # The long summary is shown whole, in its own scrolling box (plain text, inert).
    assert any(len(t.value) > 2_000 for t in at.text)
    history, kept = table["history tokens"][0], table["agent kept (tokens)"][0]
    assert metric_int(at, "History tokens") == history
    body = plain(texts(at))
    assert "claude_code.summary_message" not in body
    at = go(at, "postmortem")
    no_exceptions(at)
    # The post-mortem table has one row per measure and one column per compaction.
    (pm,) = [d.value.set_index("measure") for d in at.dataframe if "measure" in d.value.columns]
    shown = [
        str(pm.loc[m].iloc[0]).replace(",", "") for m in ("history tokens", "agent kept (tokens)")
    ]
    assert shown == [str(history), str(kept)]
    assert "Agent (Claude Code summary)" in plain(texts(at))


def test_timeline_events_are_in_words(app) -> None:
    at = go(app(cfg=encode_config(preset("reference", 1500))).run(), "timeline")
    no_exceptions(at)
    events = set(_frame_with(at, "event")["event"])
    assert events <= set(EVENTS.values()), events
    assert "-" not in metric(at, "Event")


def test_a_run_of_collapsed_groups_is_one_diff_row(app) -> None:
    config = preset("tool_collapse", 2000)
    index = MessageIndex.build(from_caller(coding_agent()).messages)
    result = run_strategy(index, strategy_from_config(config.strategy_config()))
    rows = diff_rows([v for v in decision_views(result) if v.decision.action != "kept"])
    keys = [(r.decision.action, r.decision.strategy, r.decision.reason) for r in rows]
    assert all(a != b for a, b in itertools.pairwise(keys)), keys  # runs are folded
    collapsed = sum(1 for d in result.decisions if d.action == "collapsed")
    assert collapsed > 1
    at = go(app(cfg=encode_config(config)).run(), "diff")
    no_exceptions(at)
    assert metric_int(at, "Groups collapsed") == collapsed
    assert f"{len(rows)} row" in texts(at) and f"for {collapsed} groups" in texts(at)
    assert len(rows) < collapsed
    body = plain(texts(at))
    assert "one line" not in body and "4,096 characters" in body  # what a collapse keeps
