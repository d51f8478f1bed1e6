"""Strategy lab: build a strategy or pipeline beside its preview, which updates live."""

from __future__ import annotations

import re

from apptest_helpers import go, metric_int, no_exceptions, plain, texts

from compactlens_inspector.lab.config import (
    PRESET_DETAILS,
    PRESETS,
    CompactSettings,
    LabConfig,
    encode_config,
    preset,
)


def _lab(app, config: LabConfig | None = None, **query: str):
    if config is not None:
        query["cfg"] = encode_config(config)
    return go(app(**query).run(), "lab")


def test_preview_shows_before_after_and_status(app) -> None:
    at = _lab(app, preset("truncation", 2000))
    no_exceptions(at)
    before = metric_int(at, "Tokens before")
    after = metric_int(at, "Tokens after")
    assert after <= 2000 < before
    assert metric_int(at, "Target") == 2000
    assert "compacted" in plain(texts(at))


def test_changing_a_parameter_changes_the_numbers(app) -> None:
    at = _lab(app, preset("truncation", 2000))
    first = metric_int(at, "Tokens after")
    at.number_input(key="sb_stage0_trigger_n_tokens").set_value(4000).run()
    no_exceptions(at)
    second = metric_int(at, "Tokens after")
    assert metric_int(at, "Target") == 4000
    assert first <= 2000 < second <= 4000
    stored = at.session_state["cl_lab"]
    assert stored.stages[0]["trigger"] == {"op": "exceed", "metric": "tokens", "n": 4000}
    # The URL follows the configuration.
    assert at.query_params["cfg"] == [encode_config(stored)] or at.query_params["cfg"] == (
        encode_config(stored)
    )


def test_protection_parameter_can_make_it_not_fit(app) -> None:
    at = _lab(app, preset("truncation", 1500))
    at.number_input(key="sb_stage0_minimum_preserved").set_value(30).run()
    no_exceptions(at)
    assert "cannot-fit" in plain(texts(at))
    assert metric_int(at, "Tokens after") > 1500


def test_add_move_and_remove_stages(app) -> None:
    at = _lab(app, preset("truncation", 2000))
    at.selectbox(key="sb_add_type").set_value("tool_result_collapse")
    at.button(key="sb_add").click().run()
    no_exceptions(at)
    kinds = [s["type"] for s in at.session_state["cl_lab"].stages]
    assert kinds == ["truncation", "tool_result_collapse"]
    assert "Pipeline" in plain(texts(at))
    # Move the gentle stage first: tool results are collapsed before anything is dropped.
    at.button(key="sb_stage1_up").click().run()
    kinds = [s["type"] for s in at.session_state["cl_lab"].stages]
    assert kinds == ["tool_result_collapse", "truncation"]
    assert at.selectbox(key="sb_stage0_type").value == "tool_result_collapse"
    events = at.dataframe[0].value
    stages = [str(name).strip() for name in events["stage"]]
    assert stages == ["Pipeline", "Tool-result collapse", "Truncation"]  # the stages' labels
    at.button(key="sb_stage1_remove").click().run()
    kinds = [s["type"] for s in at.session_state["cl_lab"].stages]
    assert kinds == ["tool_result_collapse"]


def test_changing_a_stage_type_keeps_its_trigger(app) -> None:
    at = _lab(app, preset("truncation", 2500))
    at.selectbox(key="sb_stage0_type").set_value("sliding_window").run()
    no_exceptions(at)
    stage = at.session_state["cl_lab"].stages[0]
    assert stage["type"] == "sliding_window"
    assert stage["trigger"] == {"op": "exceed", "metric": "tokens", "n": 2500}


def test_presets_apply(app) -> None:
    at = _lab(app, preset("truncation", 2000))
    at.selectbox(key="sb_preset").set_value("context_window")
    at.number_input(key="sb_budget").set_value(5000)
    at.button(key="sb_apply").click().run()
    no_exceptions(at)
    cfg = at.session_state["cl_lab"]
    assert [s["type"] for s in cfg.stages] == [
        "tool_result_collapse",
        "summarization",
        "truncation",
    ]
    assert cfg.stages[0]["trigger"]["n"] == 4000  # 80% of the window
    assert cfg.target == {"op": "at_most", "metric": "tokens", "n": 2500}  # 50%
    assert metric_int(at, "Target") == 2500


def test_the_one_budget_field_follows_the_preset_and_says_where_stages_run(app) -> None:
    """After a preset, the "budget for every stage" field holds the stages' start (it kept
    the budget from before), and its caption names both thresholds with separators."""
    at = _lab(app, preset("truncation", 2000))
    assert at.number_input(key="sb_all_budget").value == 2000
    at.selectbox(key="sb_preset").set_value("context_window")
    at.number_input(key="sb_budget").set_value(128000)
    at.button(key="sb_apply").click().run()
    no_exceptions(at)
    cfg = at.session_state["cl_lab"]
    assert at.number_input(key="sb_all_budget").value == cfg.trigger_tokens == 102400
    assert "Now: from more than 102,400 tokens to at most 64,000." in plain(texts(at))
    # Set every stage to one budget: the field and its caption follow.
    at.number_input(key="sb_all_budget").set_value(30000)
    at.button(key="sb_set_budget").click().run()
    no_exceptions(at)
    assert at.number_input(key="sb_all_budget").value == 30000
    assert "Now: from more than 30,000 tokens to at most 30,000." in plain(texts(at))


def test_reference_pipeline_with_summarization_reports_the_extractive_summarizer(app) -> None:
    at = _lab(app)
    at.selectbox(key="sb_preset").set_value("reference")
    at.number_input(key="sb_budget").set_value(1800)
    at.button(key="sb_apply").click().run()
    no_exceptions(at)
    body = plain(texts(at))
    assert "extractive (offline)" in body


def test_compact_mode(app) -> None:
    at = _lab(app, LabConfig(mode="compact", compact=CompactSettings(20000, 4, 60000)))
    no_exceptions(at)
    assert at.segmented_control(key="sb_mode").value == "compact"
    # The sample is far below 60,000 tokens: the trigger does not fire (the verdict's words).
    assert "No compaction was needed: no trigger fired" in plain(texts(at))
    at.number_input(key="sb_compact_trigger").set_value(0)
    at.number_input(key="sb_compact_target").set_value(2000).run()
    no_exceptions(at)
    assert metric_int(at, "Tokens after") <= 2000
    assert "compacted" in plain(texts(at))
    # What stays and why, in the Cannot-fit page's words: positions, never "[1, 3)".
    words = plain(texts(at))
    assert re.search(r"Messages? \d+(–\d+)? (is|are) replaced by one summary", words), words
    assert "replaced range:" not in words


def test_a_configuration_error_is_shown_not_raised(app) -> None:
    at = _lab(app, preset("sliding_window", 1000))
    # Neither a trigger nor keep_last_turns: the engine refuses the stage.
    at.selectbox(key="sb_stage0_trigger").set_value("none").run()
    no_exceptions(at)
    assert "Configuration error" in plain(texts(at))
    assert "needs exactly one of trigger" in plain(texts(at)) or "trigger" in plain(texts(at))


def test_a_compact_preset_link_uses_its_budget(app) -> None:
    at = _lab(app, sample="coding_agent", preset="compact", budget="2000")
    no_exceptions(at)
    settings = at.session_state["cl_lab"].compact
    assert (settings.target_tokens, settings.trigger_tokens) == (2000, 2000)
    assert at.number_input(key="sb_compact_target").value == 2000
    assert at.number_input(key="sb_compact_trigger").value == 2000
    assert metric_int(at, "Target") == 2000
    assert metric_int(at, "Tokens before") > 2000 >= metric_int(at, "Tokens after")
    assert "compacted" in plain(texts(at))


def test_switching_to_compact_mode_keeps_the_budget(app) -> None:
    at = _lab(app, preset("truncation", 2500))
    at.segmented_control(key="sb_mode").set_value("compact").run()
    no_exceptions(at)
    assert at.number_input(key="sb_compact_target").value == 2500
    assert at.number_input(key="sb_compact_trigger").value == 2500
    assert metric_int(at, "Target") == 2500


def test_the_analysis_card_counts_the_problems_the_verdict_counts(app) -> None:
    # coding_agent truncated to 4,300 tokens: the cut leaves two assistant turns in a row,
    # a warning for Anthropic only. The verdict judges for the guards' provider (OpenAI
    # Chat Completions, the file's format); the card counted every provider checked
    # ("New problems 1" beside a verdict that named none).
    import re

    at = _lab(app, preset("truncation", 4300))
    no_exceptions(at)
    body = plain(texts(at))
    assert "compacted" in body
    named = sum(
        int(n.replace(",", "")) for n, _ in re.findall(r"introduces ([\d,]+) (error|warning)", body)
    )
    assert metric_int(at, "New problems") == named


def test_the_stages_table_words_a_missing_condition(app) -> None:
    """The context-window preset's pipeline has no trigger of its own: the Stages table
    says when it starts in words ("a stage's trigger fires"), never "none"."""
    at = _lab(app, preset("context_window", 128_000))
    no_exceptions(at)
    # The Lab's fragment hides the table's key from AppTest: it is the one with the column.
    (rows,) = [d.value for d in at.dataframe if "starts when" in d.value.columns]
    pipeline = rows[rows["stage"] == "Pipeline"]
    assert list(pipeline["starts when"]) == ["a stage's trigger fires"]
    cells = {str(c).strip().lower() for c in rows.astype(str).to_numpy().ravel()}
    assert not cells & {"none", "(none)"}


def test_preset_names_fit_the_select_and_each_is_described() -> None:
    """The preset select shows about 36 characters at 1440 px (a longer name was cut
    mid-word); what a preset does is the caption under it."""
    assert all(len(name) <= 32 for name in PRESETS.values()), PRESETS
    assert PRESET_DETAILS.keys() == PRESETS.keys()


def test_the_compact_preset_counts_groups_the_same_in_the_verdict_and_the_table(app) -> None:
    """compact() counts messages; the Lab plans it on groups. The verdict's headline, the
    Stages table and the caption under it read the same group counts (the review saw no
    counts in the headline and "groups 221" against "220 summarized · 1 inserted")."""
    at = _lab(app, preset("compact", 2000))
    no_exceptions(at)
    assert at.session_state["cl_lab"].mode == "compact"
    page = plain(texts(at))
    (rows,) = [d.value for d in at.dataframe if "starts when" in d.value.columns]
    ((summarized, inserted),) = rows[["groups changed", "inserted"]].to_numpy().tolist()
    assert inserted == 1 and summarized > 0
    assert f"{summarized} groups summarized" in page and f"{inserted} group inserted" in page
    assert f"(+{inserted} inserted), {summarized} summarized" in page  # the verdict headline
