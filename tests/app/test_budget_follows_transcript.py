"""Issue 10, item 5: the budget follows the transcript. A newly loaded transcript gets its
own default (half its tokens, rounded) unless the user chose a configuration for it; the
user's choice for a transcript comes back when it is active again."""

from __future__ import annotations

import json

from apptest_helpers import coding_agent, go, is_verdict_bar, metric_int, no_exceptions
from hypothesis import given
from hypothesis import strategies as hs

from compactlens import CharEstimator, MessageIndex, sized_config
from compactlens.formats import from_caller
from compactlens_inspector.lab.config import (
    PRESETS,
    CompactSettings,
    LabConfig,
    default_stage,
    nice_budget,
    preset,
    sized,
)

BIG_TURNS = 60


def _total(messages: list[dict]) -> int:
    return MessageIndex.build(from_caller(messages).messages, CharEstimator()).total_tokens


def _big() -> list[dict]:
    """Longer than the coding agent, with a system prompt larger than its budget (the
    previous file's budget cannot fit it: the system prompt is always kept)."""
    messages = coding_agent(BIG_TURNS)
    messages[0]["content"] *= 30
    return messages


def _paste(at, messages: list[dict]):
    at = go(at, "load")
    at.text_area(key="load_paste").set_value(json.dumps(messages))
    at.button(key="load_paste_button").click().run()
    no_exceptions(at)
    return at


def test_a_large_paste_gets_its_own_budget_and_does_not_open_in_cannot_fit(app) -> None:
    small = _total(coding_agent())
    at = app(sample="coding_agent").run()
    assert at.session_state["cl_lab"].trigger_tokens == nice_budget(small)
    big = _big()
    assert _total(big[:1]) > nice_budget(small)  # the old budget cannot fit it
    at = _paste(at, big)
    lab = at.session_state["cl_lab"]
    assert lab.label == "reference"
    assert lab.trigger_tokens == nice_budget(_total(big)) > nice_budget(small)
    at = go(at, "lab")
    no_exceptions(at)
    assert metric_int(at, "Tokens before") == _total(big)
    assert not at.error, [e.value for e in at.error]
    # The verdict bar (green or amber: it fits) carries the run's status.
    bars = [str(e.value) for e in (*at.success, *at.warning) if is_verdict_bar(str(e.value))]
    assert len(bars) == 1 and "compacted" in bars[0], bars
    assert metric_int(at, "Tokens after") <= nice_budget(_total(big))


def test_the_users_choice_for_a_transcript_wins_and_comes_back(app) -> None:
    at = go(app(sample="coding_agent").run(), "lab")
    first = at.session_state["cl_active"]
    at.selectbox(key="sb_preset").set_value("truncation")
    at.number_input(key="sb_budget").set_value(3000)
    at.button(key="sb_apply").click().run()
    no_exceptions(at)
    assert at.session_state["cl_lab"] == preset("truncation", 3000)
    big = _big()
    at = _paste(at, big)
    # The new transcript: the same preset, sized to its own default budget.
    assert at.session_state["cl_lab"] == preset("truncation", nice_budget(_total(big)))
    at = go(at, "lab")
    assert at.number_input(key="sb_budget").value == nice_budget(_total(big))
    # Back to the first transcript: the user's 3,000 comes back, in the builder too.
    at.selectbox(key="sidebar_source").set_value(first).run()
    no_exceptions(at)
    assert at.session_state["cl_lab"] == preset("truncation", 3000)
    assert at.number_input(key="sb_budget").value == 3000
    assert at.number_input(key="sb_stage0_trigger_n_tokens").value == 3000


def test_the_overview_slider_starts_at_the_transcripts_budget(app) -> None:
    at = app(sample="coding_agent").run()
    slider = at.slider(key="landing_budget")
    assert slider.value == nice_budget(_total(coding_agent()))
    assert slider.proto.format == "%,d"  # thousands separators


# -- sized() -------------------------------------------------------------------------------------


def test_a_preset_is_made_again_at_the_new_budget() -> None:
    for name in PRESETS:
        assert sized(preset(name, 4000), 9000) == preset(name, 9000)


@given(
    trigger=hs.integers(min_value=100, max_value=200_000),
    ratio=hs.floats(min_value=0.1, max_value=1.0),
    budget=hs.integers(min_value=100, max_value=500_000),
)
def test_an_edited_configuration_is_scaled_so_its_trigger_becomes_the_budget(
    trigger: int, ratio: float, budget: int
) -> None:
    target = max(1, round(trigger * ratio))
    stage = {
        **default_stage("truncation", trigger),
        "target": {"op": "at_most", "metric": "tokens", "n": target},
        "minimum_preserved": 3,
    }
    fallback = {**default_stage("token_budget", target)}
    config = LabConfig(
        stages=(stage, fallback), target={"op": "at_most", "metric": "turns", "n": 5}
    )
    out = sized(config, budget)
    assert out.trigger_tokens == budget
    assert out.stages[0]["minimum_preserved"] == 3  # only token thresholds change
    assert out.target == config.target  # a turn target is not a token threshold
    scaled = out.stages[0]["target"]["n"]
    assert abs(scaled - target * budget / trigger) <= 1
    assert out.stages[1]["token_budget"] == scaled  # the same threshold, scaled the same way


def test_compact_mode_scales_target_and_trigger_and_keeps_the_rest() -> None:
    config = LabConfig(mode="compact", compact=CompactSettings(2000, 6, 8000))
    out = sized(config, 4000)
    assert out.compact == CompactSettings(1000, 6, 4000)


def test_a_configuration_without_token_thresholds_is_left_alone() -> None:
    stage = {**default_stage("sliding_window", 1000), "trigger": None, "keep_last_turns": 3}
    config = LabConfig(stages=(stage,))
    assert sized(config, 5000) is config


def test_an_edited_configuration_is_sized_as_the_cli_postmortem_sizes_it() -> None:
    # One sizing for the Post-mortem page and `compactlens postmortem --config`.
    stages = (
        {**default_stage("tool_result_collapse", 8000), "keep_last_tool_call_groups": 1},
        {**default_stage("truncation", 8000), "minimum_preserved": 4},
    )
    config = LabConfig(stages=stages)
    assert sized(config, 103).strategy_config() == sized_config(config.strategy_config(), 103)
