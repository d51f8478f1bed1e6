"""The tuner and the debugger, driven through their widgets as a user would: set a value,
read the status the panel shows, compare it with what the library computes for the same
configuration written by hand."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    PipelineStrategy,
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    Transcript,
    TruncationStrategy,
    apply_compaction,
    load_transcript,
    tokens_exceed,
)
from compactlens.analysis import destructive, fix_recall, search_fixes
from compactlens.engine import MessageIndex, tokens_at_most
from compactlens.notebook import Tuner, TuneSettings, debug, tune

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.status: list[str] = []
        self._in_status = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_status = ("data-role", "status") in attrs

    def handle_data(self, data: str) -> None:
        self.parts.append(data)
        if self._in_status:
            self.status.append(data)
            self._in_status = False


def shown(tuner: Tuner) -> tuple[str, str]:
    """(status badge, whole text) of the status the panel shows."""
    parser = _Text()
    parser.feed(tuner.status.value)
    return "".join(parser.status), " ".join(" ".join(parser.parts).split())


def pipeline(trigger: int, target: int | None = None, keep: int = 4) -> PipelineStrategy:
    over = tokens_exceed(trigger)
    return PipelineStrategy(
        ToolResultCompactionStrategy(trigger=over),
        SummarizationStrategy(ExtractiveSummarizer(), trigger=over),
        TruncationStrategy(trigger=over, minimum_preserved=keep),
        target=tokens_at_most(target) if target is not None else None,
    )


@pytest.fixture()
def transcript() -> Transcript:
    return load_transcript(SAMPLES / "coding_agent.json")


def test_the_target_slider_replans_and_shows_the_librarys_numbers(transcript: Transcript) -> None:
    tuner = tune(transcript, pipeline(8000), budget=4000)
    expected = apply_compaction(transcript.messages, pipeline(4000, 4000), CharEstimator())
    assert tuner.result is not None
    assert (tuner.result.status, tuner.result.tokens_after) == (
        expected.status,
        expected.tokens_after,
    )
    badge, text = shown(tuner)
    assert badge == expected.status
    assert f"{expected.tokens_before:,} → {expected.tokens_after:,} tokens" in text

    runs = tuner.runs
    tuner.target.value = 200  # below what the protected tail needs; the trigger follows
    assert tuner.trigger.value == 200
    stuck = apply_compaction(transcript.messages, pipeline(200, 200), CharEstimator())
    assert stuck.status == "cannot-fit"
    assert tuner.runs == runs + 1
    badge, text = shown(tuner)
    assert badge == "cannot-fit"
    assert f"{stuck.tokens_after:,} of 200 tokens (over budget)" in text


@pytest.mark.parametrize("target", [8000, 7000, 6000])
def test_a_target_change_reruns_the_compaction_with_the_trigger(
    transcript: Transcript, target: int
) -> None:
    tuner = tune(transcript, pipeline(4000), budget=4000)
    before = tuner.result
    tuner.target.value = target
    expected = apply_compaction(transcript.messages, pipeline(target, target), CharEstimator())
    assert tuner.trigger.value == target
    assert tuner.result is not None and before is not None
    assert tuner.result.tokens_after == expected.tokens_after
    # The old failure: the trigger stayed put and the tokens did not move with the target.
    stale = apply_compaction(transcript.messages, pipeline(4000, target), CharEstimator())
    if stale.tokens_after != expected.tokens_after:
        assert tuner.result.tokens_after != stale.tokens_after


def test_the_tokens_follow_the_target(transcript: Transcript) -> None:
    tuner = tune(transcript, pipeline(4000), budget=4000)
    seen = set()
    for target in (8000, 7000, 4000):
        tuner.target.value = target
        assert tuner.result is not None
        seen.add(tuner.result.tokens_after)
    assert len(seen) == 3, seen


def test_unlinked_the_target_moves_alone(transcript: Transcript) -> None:
    tuner = tune(transcript, pipeline(4000), budget=4000)
    tuner.link.value = False
    tuner.target.value = 7000
    assert tuner.trigger.value == 4000 and tuner.settings.trigger_tokens == 4000
    expected = apply_compaction(transcript.messages, pipeline(4000, 7000), CharEstimator())
    assert tuner.result is not None and tuner.result.tokens_after == expected.tokens_after
    tuner.link.value = True  # linking again takes the trigger as the target
    assert tuner.target.value == 4000


def test_a_tuner_started_with_its_own_trigger_is_unlinked(transcript: Transcript) -> None:
    tuner = tune(transcript, pipeline(4000), budget=4000, trigger=6000)
    assert tuner.link.value is False
    tuner.target.value = 3000
    assert tuner.trigger.value == 6000


def test_the_trigger_slider_sets_every_stages_trigger(transcript: Transcript) -> None:
    tuner = tune(transcript, pipeline(8000), budget=4000)
    total = tuner.bench.index("compactlens").total_tokens
    tuner.trigger.value = tuner.trigger.max  # above the whole transcript: nothing fires
    assert total <= tuner.trigger.max
    assert shown(tuner)[0] == "unchanged"
    stages = tuner.strategy.to_dict()["strategies"]
    assert {s["trigger"]["n"] for s in stages} == {tuner.trigger.max}


def test_a_stage_parameter_field_replans(transcript: Transcript) -> None:
    tuner = tune(transcript, pipeline(3000), budget=3000)
    field = tuner.parameters[(2, "minimum_preserved")]
    field.value = 12
    expected = apply_compaction(transcript.messages, pipeline(3000, 3000, keep=12), CharEstimator())
    assert tuner.settings.stages()[2]["minimum_preserved"] == 12
    assert tuner.result is not None
    assert tuner.result.tokens_after == expected.tokens_after
    assert shown(tuner)[0] == expected.status


def test_every_parameter_of_every_stage_has_a_field(transcript: Transcript) -> None:
    strategy = pipeline(3000)
    tuner = tune(transcript, strategy, budget=3000)
    skip = {"type", "trigger", "target", "summarizer"}
    wanted = {
        (i, key)
        for i, stage in enumerate(strategy.to_dict()["strategies"])
        for key in stage
        if key not in skip
    }
    assert set(tuner.parameters) == wanted


def test_the_controls_read_as_the_labs_words_and_the_formatter_is_a_choice(
    transcript: Transcript,
) -> None:
    # Review 6: "trigger = target (move together)", "keep_last_tool_call_groups",
    # "minimum_preserved" and a free-text "formatter" box holding "results".
    tuner = tune(transcript, pipeline(3000), budget=3000)
    labels = {key: field.description for key, field in tuner.parameters.items()}
    assert labels[(0, "keep_last_tool_call_groups")] == "newest tool calls kept verbatim"
    assert labels[(1, "minimum_preserved")] == "newest groups never summarized"
    assert labels[(2, "minimum_preserved")] == "newest groups never dropped"
    assert labels[(0, "formatter")] == "collapsed line"
    assert all("_" not in label for label in [*labels.values(), tuner.link.description])
    formatter = tuner.parameters[(0, "formatter")]
    assert dict(formatter.options) == {
        "a short text of each result": "results",
        "tool names only": "names",
    }
    formatter.value = "names"  # the dropdown sets the code value
    assert tuner.settings.stages()[0]["formatter"] == "names"
    tuner.set_parameter(2, "minimum_preserved", 8)  # the methods keep the code names
    assert tuner.parameters[(2, "minimum_preserved")].value == 8


def test_the_sliders_step_in_round_numbers() -> None:
    log = load_transcript(SAMPLES / "support_long.json")
    tuner = tune(log, pipeline(3000), budget=3000)
    step = tuner.trigger.step
    assert re.fullmatch(r"(1|2|25|5)0*", str(step)), step  # 486 before
    assert tuner.trigger.max % step == 0 and 3000 % step == 0


def test_profile_and_provider_are_part_of_the_run(transcript: Transcript) -> None:
    tuner = tune(transcript, pipeline(3000), budget=3000)
    tuner.profile.value = "maf"
    expected = apply_compaction(transcript.messages, pipeline(3000, 3000), profile="maf")
    assert tuner.result is not None
    assert tuner.result.tokens_after == expected.tokens_after
    tuner.provider.value = "anthropic"
    assert tuner.bench.guards(tuner.settings).provider == "anthropic"
    # The status says what the run was made with.
    assert "profile maf · provider Anthropic" in shown(tuner)[1]
    assert "trigger 3,000 · target 3,000" in shown(tuner)[1]


def test_the_footer_names_the_provider_the_checks_judge_when_it_differs() -> None:
    """A log in Chat Completions form whose tool calls went to Anthropic (every call id is
    Anthropic's): the guards keep the log's form and the checks count Anthropic's rules.
    The footer says both, in words, and the card's checks name the one it says they judge."""
    data = json.loads((SAMPLES / "coding_agent.json").read_text())
    ids = re.compile(r'"(call_[A-Za-z0-9_]+)"')
    wire = json.loads(ids.sub(r'"toolu_\1"', json.dumps(data["messages"])))
    tuner = tune(wire, pipeline(3000), budget=3000)
    assert tuner.verdict is not None and tuner.verdict.numbers.provider == "anthropic"
    text = shown(tuner)[1]
    assert "provider auto (OpenAI Chat Completions); checked for Anthropic" in text
    assert "new error for Anthropic" in text
    # A plain Chat Completions log: one provider, named once.
    plain = tune(data["messages"], pipeline(3000), budget=3000)
    assert "provider auto (OpenAI Chat Completions) " in shown(plain)[1] + " "
    assert "checked for" not in shown(plain)[1]


def test_a_bad_value_is_a_message_not_a_traceback(transcript: Transcript) -> None:
    tuner = tune(transcript, pipeline(3000), budget=3000)
    field = tuner.parameters[(1, "target_count")]  # a text field: empty is none
    field.value = "<b>bogus</b>"
    assert tuner.result is None
    assert "target_count" in (tuner.error or "") and "<b>bogus</b>" in (tuner.error or "")
    assert "<b>bogus" not in tuner.status.value and "&lt;b&gt;bogus" in tuner.status.value
    assert shown(tuner)[0].startswith("error")
    field.value = ""
    assert tuner.result is not None and tuner.error is None


def test_the_debugger_ranks_the_librarys_fixes_and_apply_makes_it_fit() -> None:
    stuck = load_transcript(SAMPLES / "cannot_fit_16k.json")
    strategy = TruncationStrategy(tokens_exceed(16000), minimum_preserved=4)
    result = apply_compaction(stuck.messages, strategy, CharEstimator())
    assert result.status == "cannot-fit"
    debugger = debug(result, strategy, stuck)
    index = MessageIndex.build(stuck.messages, CharEstimator())
    expected = search_fixes(index, strategy, summaries=result.summaries)
    # The search's fixes, listed by the rule every surface uses (the destructive hidden),
    # beside a larger target when only a change that loses most facts keeps the target.
    searched = {f.summary for f in expected.fixes}
    assert all(f.summary in searched or f.changes_target for f in debugger.fixes)
    assert not any(destructive(f) for f in debugger.fixes if f is not debugger.shown.costly_choice)
    assert debugger.fixes, "the sample has a fix"
    assert len(debugger.choice.options) == len(debugger.fixes)
    # The card's next step is the list's first fix, in plain words.
    top = debugger.fixes[0]
    assert debugger.verdict.level == "no-fit" and not debugger.nothing_to_fix
    # A choice of two: the larger target (safe) first, the change that keeps the target
    # at a cost second (review 5, N8).
    words = top.plain_summary
    step = debugger.verdict.next_step
    assert step.startswith("Choose: ") and f"{words[:1].upper()}{words[1:]}, or keep" in step
    assert "Choose: " in debugger.before.value
    # The fixes as a table with the verdict's numbers, and a list box that cannot overlap.
    assert type(debugger.choice).__name__ == "Select"
    for rank, fix in enumerate(debugger.fixes, 1):
        assert f"{rank}. {fix.plain_summary}" in debugger.choice.options[rank - 1][0]
        assert f"{fix.tokens_after:,}" in debugger.table.value
        assert f"{fix_recall(fix):.0%}" in debugger.table.value  # the verdict's recall
    debugger.apply_button.click()
    # It fits (a larger target the whole history fits leaves it as it is).
    assert debugger.applied is not None and debugger.applied.status in ("compacted", "unchanged")
    assert debugger.applied.tokens_after == top.tokens_after
    # What the fix promised is the verdict of the applied run.
    assert top.verdict is not None and top.verdict.numbers.tokens_after == top.tokens_after
    assert f"Verdict: {top.verdict.headline}" in debugger.after.value
    assert f"{top.tokens_after:,}" in debugger.after.value


def test_the_debugger_of_a_safe_run_has_nothing_to_fix() -> None:
    stuck = load_transcript(SAMPLES / "cannot_fit_16k.json")
    index = MessageIndex.build(stuck.messages, CharEstimator())
    strategy = TruncationStrategy(tokens_exceed(index.total_tokens * 2), minimum_preserved=4)
    result = apply_compaction(stuck.messages, strategy, CharEstimator())
    debugger = debug(result, strategy, index)
    assert debugger.verdict.level == "safe" and debugger.nothing_to_fix
    assert debugger.fixes == ()
    # The run's one next step, as every other surface words it (review 3, #9).
    assert debugger.verdict.next_step.startswith("Nothing to change")
    assert "Nothing to change" in debugger.before.value
    assert debugger.apply_button.disabled


def test_apply_from_a_tuner_loads_the_fix_into_it(transcript: Transcript) -> None:
    tuner = tune(transcript, pipeline(4000), budget=4000)
    tuner.target.value = 200
    assert shown(tuner)[0] == "cannot-fit"
    debugger = tuner.debug()
    assert debugger.fixes
    debugger.apply(0)
    assert shown(tuner)[0] == "compacted"
    limit = re.search(r"of ([\d,]+) tokens", shown(tuner)[1])
    assert limit is not None and tuner.target.value == int(limit.group(1).replace(",", ""))


@given(
    start=st.integers(1, 10**6),
    moves=st.lists(
        st.tuples(st.sampled_from(["trigger_tokens", "target_tokens"]), st.integers(1, 10**6)),
        max_size=6,
    ),
)
def test_linked_settings_keep_trigger_and_target_equal(
    start: int, moves: list[tuple[str, int]]
) -> None:
    settings = TuneSettings(
        config={"type": "truncation"}, trigger_tokens=start, target_tokens=start
    )
    for key, value in moves:
        settings = settings.changed(**{key: value})
        assert settings.trigger_tokens == settings.target_tokens == value
    unlinked = settings.changed(linked=False).changed(target_tokens=start + 1)
    assert unlinked.trigger_tokens == settings.trigger_tokens
