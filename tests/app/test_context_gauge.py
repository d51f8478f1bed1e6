"""The /context-style gauge: its bars add up to the tokens they describe, free space and
overflow add up to the budget, it shows no transcript text, and the Overview and the lab
draw it."""

from __future__ import annotations

import re

from apptest_helpers import coding_agent, go, hostile, no_exceptions
from hypothesis import given, settings
from hypothesis import strategies as hs

from compactlens import CharEstimator, MessageIndex
from compactlens.formats import from_caller
from compactlens_inspector.lab.config import SummarizerSettings
from compactlens_inspector.lab.presets import PRESETS, preset
from compactlens_inspector.lab.runs import make_summarizer, run_config
from compactlens_inspector.views.context import context_gauge, gauge_html

INDEX = MessageIndex.build(from_caller(coding_agent(6)).messages, CharEstimator())


@settings(max_examples=25, deadline=None)
@given(
    name=hs.sampled_from(sorted(PRESETS)),
    fraction=hs.floats(min_value=0.05, max_value=1.5),
)
def test_bars_add_up_to_the_tokens_before_and_after(name: str, fraction: float) -> None:
    budget = max(1, int(INDEX.total_tokens * fraction))
    config = preset(name, budget)
    outcome = run_config(INDEX, config, make_summarizer(SummarizerSettings()), explain=False)
    assert outcome.result is not None
    gauge = context_gauge(
        INDEX, outcome.result, trigger=config.trigger_tokens, target=config.target_tokens
    )
    before, after = gauge.rows
    assert before.used == INDEX.total_tokens == sum(before.tokens.values())
    assert after.used == outcome.result.tokens_after == sum(after.tokens.values())
    for row in gauge.rows:
        assert row.used + row.free - row.over == gauge.budget
        assert min(row.free, row.over) == 0
        assert gauge.scale >= max(row.used, gauge.budget)
    # Only a summary can add summary tokens; nothing else grows.
    for key, n in after.tokens.items():
        if key != "summary":
            assert n <= before.tokens[key], key


def test_without_a_budget_the_history_is_the_scale() -> None:
    gauge = context_gauge(INDEX, None, trigger=None, target=None)
    assert gauge.budget == INDEX.total_tokens and gauge.rows[0].free == 0
    assert len(gauge.rows) == 1


def test_the_html_holds_our_numbers_and_no_transcript_text() -> None:
    ix = MessageIndex.build(from_caller(hostile()).messages, CharEstimator())
    html = gauge_html(context_gauge(ix, None, trigger=10, target=5))
    assert "pwned" not in html and "<script" not in html and "raw html" not in html
    assert f"{ix.total_tokens:,} tokens" in html and "trigger 10" in html and "target 5" in html


def _gauges(at) -> list[str]:
    return [str(h.proto.body) for h in at.get("html") if "cl-context-gauge" in str(h.proto.body)]


def test_overview_shows_the_gauge_before_and_after_compacting(app) -> None:
    at = app(sample="coding_agent").run()
    no_exceptions(at)
    assert len(_gauges(at)) == 1 and "After" not in _gauges(at)[0]
    at.button(key="landing_compact").click().run()
    no_exceptions(at)
    (after,) = _gauges(at)
    assert "Before" in after and "After" in after


def test_the_lab_shows_the_gauge_with_what_still_costs(app) -> None:
    at = go(app(sample="coding_agent").run(), "lab")
    no_exceptions(at)
    assert len(_gauges(at)) == 1
    assert any("Still there after compaction" in c.value for c in at.caption)


def test_each_budget_mark_wraps_as_a_whole() -> None:
    """A mark ("┆ trigger 3,649") never wraps between its sign and its words: each is its
    own unbreakable item (the review saw a dangling "┆" at a legend line's end)."""
    ix = MessageIndex.build(from_caller(coding_agent()).messages, CharEstimator())
    html = gauge_html(context_gauge(ix, None, trigger=3649, target=2713))
    for mark in ("┆ trigger 3,649", "┆ target 2,713"):
        assert re.search(r'<span style="[^"]*white-space:nowrap[^"]*">' + mark + "</span>", html)
