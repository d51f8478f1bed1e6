"""Configuration values, URL encoding, suggestions; reading results; inert Markdown."""

from __future__ import annotations

import pytest
from apptest_helpers import coding_agent, unresolved

from compactlens import CharEstimator, ExtractiveSummarizer, MessageIndex, strategy_from_config
from compactlens.formats import from_caller
from compactlens.viz import timeline_events
from compactlens_inspector.lab.config import (
    PRESETS,
    CompactSettings,
    LabConfig,
    SummarizerSettings,
    apply_suggestion,
    decode_config,
    default_stage,
    encode_config,
    get_path,
    preset,
    sweepable_parameters,
    with_value,
)
from compactlens_inspector.lab.runs import budget_parts, make_summarizer, redact, run_config
from compactlens_inspector.style.safety import md_escape, neutralize_markdown
from compactlens_inspector.views.run import decision_views, summary_ranges


def _index(messages: list[dict] | None = None) -> MessageIndex:
    return MessageIndex.build(from_caller(messages or coding_agent()).messages, CharEstimator())


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_builds_and_round_trips_through_the_url(name: str) -> None:
    config = preset(name, 3000)
    assert decode_config(encode_config(config)) == LabConfig.from_dict(config.to_dict())
    if config.mode == "pipeline":
        strategy_from_config(config.strategy_config(), summarizer=ExtractiveSummarizer())


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_honours_the_budget(name: str) -> None:
    """Over ``budget`` tokens it compacts, down to ``budget`` (context_window: 80% -> 50%)."""
    for budget in (1234, 56789):
        config = preset(name, budget)
        if name == "context_window":
            assert (config.trigger_tokens, config.target_tokens) == (
                int(budget * 0.8),
                int(budget * 0.5),
            )
        else:
            assert (config.trigger_tokens, config.target_tokens) == (budget, budget), name
        if config.mode == "pipeline":  # what the engine runs agrees with the numbers shown
            strategy = strategy_from_config(
                config.strategy_config(), summarizer=ExtractiveSummarizer()
            )
            triggers = [t for t in strategy.to_dict().get("strategies", [strategy.to_dict()])]
            assert all(t["trigger"]["n"] == config.trigger_tokens for t in triggers)


@pytest.mark.parametrize("text", ["", "not base64!", "eJwLycgsVgCi4vzcVAUA", "A" * 9000])
def test_a_broken_link_is_a_clear_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        decode_config(text)


def test_with_value_copies_and_sweep_paths_resolve() -> None:
    config = preset("reference", 3000)
    for path, _label in sweepable_parameters(config):
        value = get_path(config, path)
        assert isinstance(value, int)
        changed = with_value(config, path, value + 1)
        assert get_path(changed, path) == value + 1
        assert get_path(config, path) == value  # the original is untouched


def test_apply_suggestion_maps_engine_parameters() -> None:
    single = LabConfig(stages=({**default_stage("truncation", 100), "minimum_preserved": 9},))
    assert apply_suggestion(single, "minimum_preserved", 3).stages[0]["minimum_preserved"] == 3
    pipeline = preset("reference", 100)
    changed = apply_suggestion(pipeline, "truncation.minimum_preserved", 1)
    assert changed is not None and changed.stages[3]["minimum_preserved"] == 1
    target = apply_suggestion(pipeline, "target_tokens", 777)
    assert target is not None and target.stages[-1]["target"]["n"] == 777
    compact = LabConfig(mode="compact", compact=CompactSettings(100, 9, None))
    fixed = apply_suggestion(compact, "keep_last_messages", 2)
    assert fixed is not None and fixed.compact.keep_last_messages == 2
    assert apply_suggestion(pipeline, "nope.nothing", 1) is None


def test_decision_views_rebuild_the_projection_exactly() -> None:
    ix = _index()
    summarizer = make_summarizer(SummarizerSettings())
    for config in (
        preset("reference", 1500),
        preset("tool_collapse", 2000),
        LabConfig(stages=(default_stage("summarization", 2000),)),
        LabConfig(mode="compact", compact=CompactSettings(1500, 4, None)),
    ):
        outcome = run_config(ix, config, summarizer)
        r = outcome.result
        assert r is not None
        views = decision_views(r)
        rebuilt = [k for v in views for k in v.projection]
        assert rebuilt == list(range(len(r.projection)))
        for v in views:
            if v.decision.action == "kept":
                assert [r.projection[k] for k in v.projection] == [
                    ix.messages[k] for k in v.decision.message_indices
                ]


def test_budget_parts_add_up_to_what_is_left() -> None:
    ix = _index(unresolved())
    summarizer = make_summarizer(SummarizerSettings())
    for config in (
        preset("reference", 800),
        preset("truncation", 400),
        preset("tool_collapse", 900),
    ):
        outcome = run_config(ix, config, summarizer)
        assert outcome.result is not None
        assert sum(p.tokens for p in budget_parts(outcome, ix)) == outcome.result.tokens_after


def test_compact_mode_maps_the_replaced_range_to_groups() -> None:
    ix = _index()
    outcome = run_config(
        ix,
        LabConfig(mode="compact", compact=CompactSettings(1500, 4, None)),
        make_summarizer(SummarizerSettings()),
    )
    r = outcome.result
    assert r is not None and r.status == "compacted"
    start, end = outcome.compact.replaced_range
    summarized = [d for d in r.decisions if d.action == "summarized"]
    assert summarized
    assert all(start <= k < end for d in summarized for k in d.message_indices)
    inserted = [d for d in r.decisions if d.action == "inserted"]
    assert len(inserted) == 1 and inserted[0].position == start
    (rng,) = summary_ranges(r, ix)
    assert rng.summary_text == outcome.compact.summary
    events = timeline_events(r)
    assert [e.kind for e in events] == ["started", "applied", "completed"]
    assert events[1].message_range is not None


def test_redact_removes_keys() -> None:
    text = "Incorrect API key provided: sk-abc123456789. Bearer sk-xyz and mysecret"
    out = redact(text, ["mysecret"])
    assert "sk-abc" not in out and "sk-xyz" not in out and "mysecret" not in out


@pytest.mark.parametrize(
    ("text", "forbidden"),
    [
        ("<script>alert(1)</script>", "<script>"),
        ("[x](javascript:alert(1))", "javascript:"),
        ("[x](JAVASCRIPT:alert(1))", "JAVASCRIPT:"),
        ("[x](&#106;avascript:alert(1))", "](&#106;"),
        ("[x](<javascript:alert(1)>)", "javascript:"),
        ("<javascript:alert(1)>", "javascript:"),
        ("[r]: javascript:alert(1)\n\n[click][r]", "javascript:"),
        ("![t](http://tracker.example/p.png)", "](http://tracker"),
        ("<img src=x onerror=alert(1)>", "<img"),
        ("[d](data:text/html,<b>x</b>)", "data:"),
        ("[v](vbscript:msgbox)", "vbscript:"),
    ],
)
def test_neutralize_markdown_blocks_active_content(text: str, forbidden: str) -> None:
    out = neutralize_markdown(text)
    assert forbidden not in out.replace("\\<", "")


def test_neutralize_markdown_keeps_safe_content() -> None:
    text = "**bold** [docs](https://example.com/a_(b)) and `<b>code</b>`\n```\n<tag>\n```"
    out = neutralize_markdown(text)
    assert "**bold**" in out and "[docs](https://example.com/a_(b))" in out
    assert "`<b>code</b>`" in out and "```\n<tag>\n```" in out


def test_md_escape_makes_labels_literal() -> None:
    assert md_escape(":red[x] [a](b) <i>") == r"\:red\[x\] \[a\]\(b\) \<i\>"


def test_a_pipeline_event_covers_what_its_stages_changed() -> None:
    ix = _index()
    outcome = run_config(ix, preset("reference", 1500), make_summarizer(SummarizerSettings()))
    r = outcome.result
    assert r is not None
    events = timeline_events(r)
    pipeline = next(e for e in events[1:-1] if e.strategy == "pipeline")
    changed = {d.group_id for d in r.decisions if d.action != "kept" and d.group_id is not None}
    assert set(pipeline.group_ids) == changed
    for e in events:
        if e.kind == "skipped":
            assert e.group_ids == ()
