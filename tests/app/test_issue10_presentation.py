"""Issue 10, item 5 (presentation): a stage that missed its own target in a run that fits
is a neutral note, the event timeline reads in order, numbers carry thousands
separators, and parameter names read as words."""

from __future__ import annotations

import itertools
import re

from apptest_helpers import coding_agent, go, no_exceptions, plain, texts
from hypothesis import given
from hypothesis import strategies as hs

from compactlens import CharEstimator, MessageIndex
from compactlens.formats import from_caller
from compactlens_inspector.config import (
    LabConfig,
    SummarizerSettings,
    default_stage,
    encode_config,
    preset,
)
from compactlens_inspector.numbers import group_digits, num
from compactlens_inspector.runs import make_summarizer, run_config
from compactlens_inspector.views import timeline_events


def _index() -> MessageIndex:
    return MessageIndex.build(from_caller(coding_agent()).messages, CharEstimator())


def _collapse_then_truncate(budget: int) -> LabConfig:
    """A pipeline whose first stage cannot reach its target alone on the coding agent."""
    return LabConfig(
        stages=(
            default_stage("tool_result_collapse", budget),
            {**default_stage("truncation", budget), "minimum_preserved": 2},
        )
    )


# -- the neutral note ----------------------------------------------------------------------------


def test_a_stage_that_missed_its_target_in_a_run_that_fits_is_a_neutral_note(app) -> None:
    config = _collapse_then_truncate(1500)
    outcome = run_config(_index(), config, make_summarizer(SummarizerSettings()))
    r = outcome.result
    assert r is not None and r.status == "compacted"
    assert any(e.event == "target-missed" for e in r.events)  # the case under test
    at = go(app(cfg=encode_config(config), sample="coding_agent").run(), "cannot_fit")
    no_exceptions(at)
    assert not at.error, [e.value for e in at.error]
    notes = [plain(str(i.value)) for i in at.info if "The target was met" in str(i.value)]
    assert len(notes) == 1, texts(at)
    assert "`tool_result_collapse` missed its own target" in notes[0]
    assert f"{num(r.tokens_before)} → {num(r.tokens_after)} tokens" in notes[0]


def test_a_run_that_cannot_fit_is_still_an_error_box(app) -> None:
    config = LabConfig(stages=({**default_stage("truncation", 1500), "minimum_preserved": 12},))
    at = go(app(cfg=encode_config(config), sample="coding_agent").run(), "cannot_fit")
    no_exceptions(at)
    assert len(at.error) == 1 and "cannot-fit" in plain(at.error[0].value)
    assert not [i for i in at.info if "The target was met" in str(i.value)]


# -- the event timeline --------------------------------------------------------------------------


def test_a_pipeline_total_comes_after_its_stages_so_tokens_read_in_order() -> None:
    for config in (preset("reference", 1500), _collapse_then_truncate(1500)):
        r = run_config(_index(), config, make_summarizer(SummarizerSettings())).result
        assert r is not None
        events = timeline_events(r)
        assert [e.seq for e in events] == list(range(len(events)))
        totals = [e for e in events if e.total]
        assert [e.strategy for e in totals] == ["pipeline"]
        total = totals[0]
        stages = [e for e in events if e.depth == 1]
        assert stages and max(e.seq for e in stages) < total.seq  # stages first
        assert total.label == f"pipeline total: {total.kind}"
        # Each stage starts where the previous one ended; the total spans them all.
        for a, b in itertools.pairwise(stages):
            assert b.tokens_before == a.tokens_after
        assert total.tokens_before == stages[0].tokens_before == r.tokens_before
        assert total.tokens_after == stages[-1].tokens_after == r.tokens_after
        afters = [e.tokens_after for e in events]
        assert afters == sorted(afters, reverse=True), afters  # never back up


# -- numbers -------------------------------------------------------------------------------------


@given(hs.integers(min_value=0, max_value=10**12))
def test_num_and_group_digits_agree_and_read_back(n: int) -> None:
    assert num(n).replace(",", "") == str(n)
    assert group_digits(f"tokens > {n}") == f"tokens > {num(n)}"
    assert group_digits(f"{n} of 3 facts were lost") == f"{num(n)} of 3 facts were lost"


def test_group_digits_leaves_ids_decimals_and_grouped_numbers_alone() -> None:
    for text in ("call_12345", "abc12345", "12345abc", "0.12345", "1,234", "v1.23456"):
        assert group_digits(text) == text
    assert group_digits("tokens > 60000.") == "tokens > 60,000."
    assert re.fullmatch(r"\d{1,3}(,\d{3})*", num(1234567.4))
