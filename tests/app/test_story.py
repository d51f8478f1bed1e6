"""Story mode: five deep-linked steps on the bundled samples, next / back, the fix."""

from __future__ import annotations

import re

import pytest
from apptest_helpers import REPO_ROOT, go, no_exceptions, plain, texts

from compactlens.analysis.facts import Fact, minor_kind
from compactlens_inspector.lab.runs import build_index
from compactlens_inspector.serving.loader import parse_transcript
from compactlens_inspector.views.story import (
    STEPS,
    STRATEGIES,
    build_story,
    recognisable,
    step_number,
)

SAMPLES = REPO_ROOT / "sample_transcripts"


@pytest.fixture(autouse=True)
def _bundled_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    if not (SAMPLES / "coding_agent.json").is_file():
        pytest.skip(f"the bundled samples are not in {SAMPLES}")
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(SAMPLES))


def _index(name: str):
    loaded = parse_transcript((SAMPLES / f"{name}.json").read_bytes(), f"{name}.json")
    return build_index(loaded.messages, "estimate"), loaded.format


def _story(app, step: str | None = None):
    at = app(step=step).run() if step is not None else app().run()
    return go(at, "story")


def _heading(at) -> str:
    return next(s.value for s in at.subheader)


def test_step_numbers_from_links_are_clamped() -> None:
    assert [step_number(v) for v in ("1", "3", "0", "-2", "99", "x", None, "")] == [
        1, 3, 1, 1, len(STEPS), 1, 1, 1,
    ]  # fmt: skip


@pytest.mark.parametrize("n", range(1, len(STEPS) + 1))
def test_every_step_is_a_deep_link(app, n: int) -> None:
    at = _story(app, str(n))
    no_exceptions(at)
    assert not at.error or n == len(STEPS)  # the last step shows the cannot-fit status
    assert _heading(at) == f"{n}. {STEPS[n - 1].title}"
    assert at.segmented_control(key="story_step").value == n


def test_next_and_back_walk_all_steps(app) -> None:
    at = _story(app)
    assert _heading(at).startswith("1.")
    assert at.button(key="story_back").disabled
    for n in range(2, len(STEPS) + 1):
        at.button(key="story_next").click().run()
        no_exceptions(at)
        assert _heading(at).startswith(f"{n}.")
        assert at.query_params["step"] in (str(n), [str(n)])
    assert not [b for b in at.button if b.key == "story_next"]
    at.button(key="story_back").click().run()
    assert _heading(at).startswith(f"{len(STEPS) - 1}.")


def test_the_stepper_jumps(app) -> None:
    at = _story(app)
    at.segmented_control(key="story_step").set_value(4).run()
    no_exceptions(at)
    assert _heading(at).startswith("4.") and at.query_params["step"] in ("4", ["4"])


def test_story_numbers_keep_their_promises() -> None:
    story = build_story(*_index("coding_agent"), *_index("cannot_fit_16k"))
    assert story.budget < story.total_tokens  # the problem: the history is over the budget
    assert [r.key for r in story.runs] == [k for k, _, _ in STRATEGIES]
    for run in story.runs:
        n = run.verdict.numbers
        assert n.tokens_after == run.result.tokens_after <= story.total_tokens
        if n.status == "compacted":
            assert n.tokens_after <= story.budget
        assert n.facts_kept is not None and n.facts_total is not None
        assert 0 <= n.facts_kept <= n.facts_total
        assert 0.0 <= run.cache_kept <= 1.0
        assert len(run.lost_examples) == min(5, n.facts_total - n.facts_kept)
        # What was lost reads as kinds in words, never as timestamps or hashes.
        for kind, value in run.lost_examples:
            assert "_" not in kind, kind
            assert minor_kind(Fact("identifier", value, 0, "tool", "text")) is None, value
            assert minor_kind(Fact("date", value, 0, "tool", "text")) is None, value
    assert story.fix is not None and story.fix.tokens > story.fix.target
    assert story.fix.fixes
    for row in story.fix.fixes:  # each listed fix fits, by the verdict of its run
        v = row.fix.verdict
        assert v is not None and v.level != "no-fit", row
        if v.numbers.status == "unchanged":  # a target raised over the whole history
            assert row.fix.changes_target and v.numbers.tokens_after == story.fix.tokens
            continue
        assert v.numbers.target_tokens is not None
        assert v.numbers.tokens_after <= v.numbers.target_tokens


def test_the_strategies_and_lost_facts_steps_show_each_strategy(app) -> None:
    at = _story(app, "2")
    no_exceptions(at)
    assert len([m for m in at.metric if m.label == "Tokens after"]) == len(STRATEGIES)
    assert all(title in texts(at) for _, title, _ in STRATEGIES)
    at = _story(app, "3")
    no_exceptions(at)
    lost = at.dataframe[0].value  # the first table: facts survived by strategy
    assert list(lost["strategy"]) == [title for _, title, _ in STRATEGIES]


def test_the_last_step_finds_a_fix_and_links_to_the_debugger(app) -> None:
    at = _story(app, str(len(STEPS)))
    no_exceptions(at)
    assert at.error[0].value.startswith("**Does not fit**")  # the run's verdict
    # Judged with its analysis as every page judges a run: no check left "not measured".
    body = texts(at)
    assert "not measured" not in body and "analysis report" not in body
    badge = re.compile(r" :\w+-badge\[\w+\]$")  # costly / destructive, as the debugger marks
    fixes = [
        badge.sub("", plain(m.value)) for m in at.markdown if m.value[:2] in ("1.", "2.", "3.")
    ]
    assert fixes, "no fix is listed"
    tried = re.search(r"re-ran \*\*([\d,]+)\*\* changes", texts(at))
    assert tried, "the story says how many changes the search re-ran"
    at.button(key="story_open_debugger").click().run()
    no_exceptions(at)
    assert at.title[0].value == "Cannot-fit debugger"
    # The same search, the same fixes in the same order, with the same verdicts.
    assert f"{tried.group(1)} changes re-run" in texts(at)
    shown = plain(texts(at))
    for n, line in enumerate(fixes, start=1):
        title, rest = line[3:].split(": **", 1)
        headline, summary = rest.split("**, ", 1)
        assert f"**{n}.** {title}" in shown, (line, shown)
        assert f"**{headline}**: {summary}" in shown, (line, shown)
    active = at.session_state["cl_active"]
    assert at.session_state["cl_sources"][active].sample == "cannot_fit_16k"
    config = at.session_state["cl_lab"]
    assert config.stages[0]["type"] == "sliding_window"
    assert any(e.value.startswith("**Does not fit**") for e in at.error)  # same verdict there


def test_what_was_lost_shows_one_value_of_each_recognisable_kind_first() -> None:
    lost = [
        Fact("tool_name", "run_tests", 1, "assistant", "tool_call"),
        Fact("quoted", "ruff --fix", 2, "assistant", "text"),
        Fact("identifier", "INC-4821", 3, "user", "text"),
        Fact("identifier", "ORD-99812", 4, "user", "text"),
        Fact("path", "src/money.py", 5, "assistant", "text"),
    ]
    shown = recognisable(lost)
    assert [k for k, _ in shown] == [
        "identifier",
        "file path",
        "quoted name or text",
        "tool name",
        "identifier",
    ]
    assert shown[0] == ("identifier", "INC-4821")
