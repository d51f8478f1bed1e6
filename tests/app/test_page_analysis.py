"""Analysis page: fact survival, prompt cache and cost, re-trigger guard, protocol problems,
for engine strategies and compact() alike; the lab's summary of it."""

from __future__ import annotations

import math
import re

from apptest_helpers import (
    XSS_TEXT,
    coding_agent,
    frame,
    go,
    hostile,
    metric,
    metric_int,
    no_exceptions,
    plain,
    texts,
    unresolved,
)

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    MessageIndex,
    analyze,
    compact,
    run_strategy,
    strategy_from_config,
)
from compactlens.analysis import DEFAULT_PRICES
from compactlens.engine import always, money, price
from compactlens.formats import from_caller
from compactlens_inspector.lab.config import (
    CompactSettings,
    LabConfig,
    default_stage,
    encode_config,
    preset,
)
from compactlens_inspector.style.numbers import group_digits

TRUNCATION = preset("truncation", 2000)


def _index(messages: list[dict]) -> MessageIndex:
    return MessageIndex.build(from_caller(messages).messages, CharEstimator())


def _analysis(app, config: LabConfig, sample: str = "coding_agent"):
    return go(app(cfg=encode_config(config), sample=sample).run(), "analysis")


def _usd(at, label: str) -> float:
    return float(metric(at, label).replace("$", "").replace(",", ""))


def test_the_cards_are_the_analysis_of_the_lab_run(app) -> None:
    at = _analysis(app, TRUNCATION)
    no_exceptions(at)
    # The same run and analysis, made here with compactlens alone.
    ix = _index(coding_agent())
    strategy = strategy_from_config(TRUNCATION.strategy_config())
    report = analyze(
        ix.messages,
        run_strategy(ix, strategy),
        triggers=strategy,
        context_window=128_000,
        prices="gpt-4o",
    )
    assert report.facts.lost, "the case under test loses facts"
    assert metric(at, "Fact recall") == f"{report.facts.recall:.0%}"
    assert metric_int(at, "Facts lost") == len(report.facts.lost)
    assert metric_int(at, "Cache rewrite") == report.cache.rewrite_tokens
    assert metric(at, "Re-trigger in") == str(report.retrigger.turns_until_trigger)
    # Truncation drops the oldest turns: only the system prompt stays a cached prefix.
    assert metric_int(at, "Cache kept") == ix.message_tokens[0]
    cost = report.cache.cost
    assert cost is not None
    # Costs to the cent, written by the library's one money format.
    assert metric(at, "Without compaction") == money(cost.cost_without)
    assert metric(at, "With compaction") == money(cost.cost_with)
    for label in ("Without compaction", "With compaction"):
        assert re.fullmatch(r"-?\$[\d,]+\.\d{2}", metric(at, label)), metric(at, label)
    caption = plain(texts(at))
    assert f"input {price(DEFAULT_PRICES['gpt-4o'].input)}," in caption
    body = plain(texts(at))
    assert "<=" not in body and "≤" not in body  # "at most" in prose
    for warning in report.warnings:
        assert group_digits(warning) in body  # with thousands separators
    assert at.get("plotly_chart"), "the cost chart is drawn"


def test_a_lost_fact_shows_the_message_it_came_from(app) -> None:
    at = _analysis(app, TRUNCATION)
    lost = frame(at, "an_lost")
    facts = list(lost["fact"])
    # Turn 0 read src/module_0.py; truncation dropped that turn and nothing else names it.
    assert "src/module_0.py" in facts
    row = facts.index("src/module_0.py")
    at.selectbox(key="an_fact").set_value(row).run()
    no_exceptions(at)
    source = at.code[-1].value
    message = int(lost["message"].iloc[row])
    assert source.startswith(f"[{message}] ")
    assert "src/module_0.py" in source
    assert f"**Message {message}**" in plain(texts(at))


def test_transcript_text_in_the_analysis_is_inert(app) -> None:
    # Without the guard that keeps it, the latest request is dropped.
    config = LabConfig(
        stages=({**default_stage("truncation", 10), "minimum_preserved": 1},),
        guards={"keep_latest_request": False},
    )
    at = _analysis(app, config, sample="hostile")
    no_exceptions(at)
    # The user request was dropped: it is the latest one, and it is lost.
    assert any("latest user request" in e.value and "does not" in e.value for e in at.error)
    lost = frame(at, "an_lost")
    kinds = list(lost["kind"])
    assert "latest request" in kinds
    at.selectbox(key="an_fact").set_value(kinds.index("latest request")).run()
    assert XSS_TEXT in at.code[-1].value  # shown verbatim, as code
    markdown = "\n".join(str(m.value) for m in at.markdown)
    # Markdown that quotes the transcript escapes it: no tag, no link.
    assert not re.search(r"(?<!\\)<(script|img)", markdown)
    assert "](javascript:" not in markdown
    assert hostile()[1]["content"] not in markdown


def test_model_and_edited_prices_drive_the_cost(app) -> None:
    at = _analysis(app, TRUNCATION)
    gpt4o = _usd(at, "Without compaction")
    at.selectbox(key="an_model").set_value("claude-opus-4").run()
    no_exceptions(at)
    opus = DEFAULT_PRICES["claude-opus-4"]
    base = DEFAULT_PRICES["gpt-4o"]
    # Without compaction every turn is priced at cached input and cache writes only.
    assert _usd(at, "Without compaction") > gpt4o
    assert "claude-opus-4" in plain(texts(at))
    # Edit the selected model's cached-input price in the table: the cost follows.
    models = list(DEFAULT_PRICES)
    doubled = opus.cached_input * 2
    at.session_state["an_prices"] = {
        "edited_rows": {models.index("claude-opus-4"): {"cached_input": doubled}},
        "added_rows": [],
        "deleted_rows": [],
    }
    before = _usd(at, "Without compaction")
    at.run()
    no_exceptions(at)
    settings = at.session_state["cl_analysis"]
    assert settings.chosen.cached_input == doubled
    assert settings.table["gpt-4o"] == base  # the other rows are untouched
    assert _usd(at, "Without compaction") > before
    assert any("edited" in e.label for e in at.expander)
    # The edit survives a visit to another page, and the reset brings the list back.
    at = go(go(at, "lab"), "analysis")
    assert at.session_state["cl_analysis"].chosen.cached_input == doubled
    at.button(key="an_prices_reset").click().run()
    no_exceptions(at)
    assert at.session_state["cl_analysis"].chosen == opus
    assert math.isclose(_usd(at, "Without compaction"), before, abs_tol=0.005)


def test_a_small_context_window_warns_and_zero_turns_the_check_off(app) -> None:
    at = _analysis(app, TRUNCATION)
    window_warning = "of the 1,800-token context window"
    assert window_warning not in plain(texts(at))
    at.number_input(key="an_window").set_value(1800).run()
    no_exceptions(at)
    assert window_warning in plain(texts(at))
    assert at.session_state["cl_analysis"].context_window == 1800
    at.number_input(key="an_window").set_value(0).run()
    assert "context window" not in plain(texts(at)).replace("Context window (tokens", "")


def test_a_compaction_at_its_trigger_fires_again_soon(app) -> None:
    # Trigger and target at the same number: the next turns push it over again.
    at = _analysis(app, TRUNCATION)
    turns = metric_int(at, "Re-trigger in")
    body = plain(texts(at))
    assert "it fires again (more than 2,000 tokens) after" in body
    ix = _index(coding_agent())
    per_turn = sorted(
        sum(g.tokens for g in ix.groups if g.turn == t)
        for t in {g.turn for g in ix.groups if g.turn}
    )
    assert turns >= 1 and per_turn  # a turn adds tokens, so the trigger fires again


def test_pre_existing_and_introduced_protocol_problems_are_told_apart(app) -> None:
    # The unresolved sample ends with a tool call that has no result: already a problem.
    at = _analysis(app, preset("truncation", 100000), sample="unresolved")
    no_exceptions(at)
    table = frame(at, "an_problems")
    # Providers in words, never their code names ("openai-chat", "`any`").
    words = plain(texts(at))
    assert "Checked for OpenAI Chat Completions and Anthropic, the default." in words
    assert "Checked for OpenAI Chat Completions, Anthropic and tool-call pairing:" in words
    assert "openai-chat" not in words and "`any`" not in words
    assert not any(table["introduced"])
    assert "unresolved" in " ".join(table["kind"])
    last = len(unresolved()) - 1
    assert f"message {last} (assistant)" in list(table["location"])
    # Truncation that keeps a tool call but drops the user turn before it introduces one
    # (with the guards that would prevent it turned off).
    config = LabConfig(
        stages=({**default_stage("truncation", 300), "minimum_preserved": 2},),
        guards={"keep_latest_request": False, "provider": "any"},
    )
    at = _analysis(app, config)
    no_exceptions(at)
    assert at.toggle(key="an_introduced_only").value is True
    table = frame(at, "an_problems")
    assert all(table["introduced"]) and len(table) > 0
    providers = set(table["provider"])
    assert providers <= {"any", "openai-chat", "anthropic"}
    ix = _index(coding_agent())
    strategy = strategy_from_config(config.strategy_config())
    report = analyze(ix.messages, run_strategy(ix, strategy, guards=config.guard_set()))
    assert len(table) == len(report.introduced)


def test_compact_mode_is_analysed_from_its_compact_result(app) -> None:
    config = LabConfig(mode="compact", compact=CompactSettings(2000, 4, None))
    at = _analysis(app, config)
    no_exceptions(at)
    ix = _index(coding_agent())
    res = compact(list(ix.messages), summarizer=ExtractiveSummarizer(), target_tokens=2000)
    assert res.status == "compacted"
    report = analyze(ix.messages, res, triggers=[always])
    assert metric_int(at, "Facts lost") == len(report.facts.lost)
    assert metric_int(at, "Cache kept") == report.cache.prefix_tokens
    # compact() re-inserts the latest user message after the summary.
    assert any("latest user request" in i.value and "kept verbatim" in i.value for i in at.info)
    # "0 = always": the compacted history triggers again at once.
    assert metric(at, "Re-trigger in") == "0"


def test_the_lab_shows_the_analysis_in_short(app) -> None:
    at = go(app(cfg=encode_config(TRUNCATION), sample="coding_agent").run(), "lab")
    no_exceptions(at)
    lab = {
        label: metric(at, label)
        for label in (
            "Fact recall",
            "Cache kept",
            "New problems",
            "Re-trigger in",
        )
    }
    at = go(at, "analysis")
    assert lab["Fact recall"] == metric(at, "Fact recall")
    assert lab["Cache kept"] == metric(at, "Cache kept")
    assert lab["Re-trigger in"] == metric(at, "Re-trigger in")
    # Truncation drops the first user turn: Anthropic needs a user message first.
    assert at.toggle(key="an_introduced_only").value is True
    introduced = frame(at, "an_problems")
    assert len(introduced) >= 1
    # The Lab card counts what the verdict counts: the problems for the provider it judges
    # for (the guards' provider, Chat Completions for this file) and tool-call pairing.
    counted = introduced[introduced["provider"].isin(["any", "openai-chat"])]
    assert int(lab["New problems"]) == len(counted)
    # In the verdict's own words (review 6: "The verdict counts 77 of them" beside the
    # verdict's "Note, not a cost: 77 warnings").
    judged = plain(texts(at)).split("The verdict judges those for ", 1)[1].split("\n")[0]
    said = r"introduces [\d,]+ (error|warning)|Note, not a cost|No new (error|warning)"
    assert re.search(said, judged) and "counts" not in judged, judged


def test_selecting_rows_shows_the_fact_source_and_the_problem_message(app) -> None:
    at = _analysis(app, TRUNCATION)
    lost = frame(at, "an_lost")
    row = len(lost) - 1
    at.session_state["an_lost"] = {"selection": {"rows": [row], "columns": []}}
    at.run()
    no_exceptions(at)
    assert at.selectbox(key="an_fact").value == row
    message = int(lost["message"].iloc[row])
    assert f"**Message {message}**" in plain(texts(at))
    problems = frame(at, "an_problems")
    at.session_state["an_problems"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    no_exceptions(at)
    where = int(problems["message"].iloc[0])
    assert f"**Compacted message {where}**" in plain(texts(at))
    assert any(c.value.startswith(f"[{where}] ") for c in at.code)
