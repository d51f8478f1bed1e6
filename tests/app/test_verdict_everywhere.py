"""One verdict, every surface: each bundled sample through each strategy preset reads the
same on the command line, on every page of the inspector and in the HTML report.

The expectation of a (sample, preset) pair is the verdict of the run as the inspector
plans and analyzes it (``run_config``, ``run_analysis``, ``judge``: no Streamlit), at the
preset sized to half the sample's tokens. Each surface is then read as a visitor reads it:

- ``compactlens compact --json`` (and ``compactlens report`` for the ``compact()``
  preset, which the ``compact`` command does not run), for every pair: the library's own
  run and analysis, so its numbers are a second, independent computation of the same run;
- the pages through Streamlit's AppTest, for one pair of each level (fits and safe, fits
  with costs, does not fit) and one ``compact()`` run: the verdict bar on Lab, Diff,
  Timeline, Analysis and the debugger, the cards beside it; the Overview after Compact;
  Story mode's cards and fact table;
- the HTML report, for every preset of two samples; the notebook card
  (``Verdict._repr_html_``), for every pair;
- the notebook tuner's widget state, for every engine preset of two samples, before and
  after its target moves; the post-mortem page, for each side of each recorded compaction;
  the timeline's turn-by-turn replay, for each evaluation that compacted.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, replace
from html import escape
from pathlib import Path
from typing import Any

import pytest
from apptest_helpers import (
    REPO_ROOT,
    go,
    is_verdict_bar,
    metric_int,
    no_exceptions,
    plain,
    step_line,
)
from streamlit.testing.v1 import AppTest

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    Trigger,
    analyze,
    apply_compaction,
    load_transcript,
    strategy_from_config,
    verdict,
)
from compactlens.analysis import (
    DEFAULT_CONTEXT_WINDOW,
    Fix,
    Verdict,
    advised,
    postmortem,
    reference_pipeline,
    strategy_triggers,
)
from compactlens.analysis.verdict import DEFAULT_RECALL_FLOOR, LEVEL_COLORS, card_step
from compactlens.cli import main
from compactlens.notebook import Tuner, debug, tune
from compactlens_inspector.exports.files import report_html
from compactlens_inspector.lab import compact_fixes
from compactlens_inspector.lab.config import LabConfig, SummarizerSettings, encode_config
from compactlens_inspector.lab.presets import PRESETS, nice_budget, preset
from compactlens_inspector.lab.replay import replay_session
from compactlens_inspector.lab.runs import (
    RunOutcome,
    build_index,
    find_fixes,
    fix_config,
    make_summarizer,
    run_config,
)
from compactlens_inspector.serving.loader import parse_transcript
from compactlens_inspector.views.analysis import AnalysisSettings, judge, run_analysis
from compactlens_inspector.views.story import STORY_SAMPLE, STRATEGIES

BUNDLED = REPO_ROOT / "sample_transcripts"
SAMPLE_FILES = sorted(p.name for p in BUNDLED.iterdir() if p.suffix in (".json", ".jsonl"))
PAIRS = [(sample, name) for sample in SAMPLE_FILES for name in PRESETS]
#: The alert each level is drawn with.
ALERT = {"safe": "success", "costs": "warning", "no-fit": "error"}
#: The numbers of a run that do not depend on how it was analyzed (prices, window).
RUN_NUMBERS = (
    "status",
    "tokens_before",
    "tokens_after",
    "target_tokens",
    "messages_before",
    "messages_after",
    "groups",
    "facts_kept",
    "facts_total",
    "provider_errors",
    "turns_until_next_compaction",
)


@pytest.fixture(autouse=True)
def _bundled_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(BUNDLED))


@dataclass(frozen=True)
class Case:
    sample: str
    config: LabConfig
    format: str
    outcome: RunOutcome
    verdict: Verdict
    #: The verdict with the run's one next step, as every page's bar shows it (the
    #: library's advice over the fixes, each judged as the inspector judges its run).
    advised: Verdict


@functools.cache
def case(sample: str, name: str, budget: int | None = None) -> Case:
    """The pair's run, planned and judged as the inspector does (estimate tokenizer,
    extractive summarizer, default analysis settings), at ``budget`` (default: half the
    sample's tokens, rounded)."""
    transcript = load_transcript(BUNDLED / sample)
    index = build_index(transcript.messages, "estimate")
    config = preset(name, budget or nice_budget(index.total_tokens))
    outcome = run_config(
        index,
        config,
        make_summarizer(SummarizerSettings()),
        explain=False,
        format_name=transcript.format,
    )
    judged = judge(outcome, run_analysis(index, outcome, AnalysisSettings()))
    assert judged is not None, outcome.error
    advice = _advised(index, outcome, judged, transcript.format)
    return Case(sample, config, transcript.format, outcome, judged, advice)


def _advised(index: Any, outcome: RunOutcome, current: Verdict, format_name: str) -> Verdict:
    """``current`` with the run's one next step (review 3, #9); in compact() mode the
    first of its fixes, each judged as the inspector judges its run (review 4, #6)."""
    if outcome.config.mode == "compact" and current.level != "safe":

        def judged_config(config: LabConfig) -> Verdict | None:
            run = run_config(
                index,
                config,
                make_summarizer(SummarizerSettings()),
                explain=False,
                format_name=format_name,
            )
            return judge(run, run_analysis(index, run, AnalysisSettings()))

        explained = run_config(
            index,
            outcome.config,
            make_summarizer(SummarizerSettings()),
            explain=True,
            format_name=format_name,
        )
        ranked, tried = compact_fixes.search(explained, index, current, judged_config)
        return replace(current, next_step=compact_fixes.next_step(current, ranked, tried))
    if outcome.config.mode == "compact" or outcome.strategy is None or outcome.result is None:
        return current

    def judged(fix: Fix) -> Fix:
        run = run_config(
            index,
            fix_config(fix, outcome.config),
            make_summarizer(SummarizerSettings()),
            explain=False,
            format_name=format_name,
        )
        v = judge(run, run_analysis(index, run, AnalysisSettings()))
        return replace(fix, verdict=v) if v is not None else fix

    search = find_fixes(index, outcome)
    if search is not None:
        search = replace(search, fixes=tuple(judged(f) for f in search.fixes))
    return advised(
        index,
        outcome.strategy,
        current,
        search,
        guards=outcome.guards,
        summaries=outcome.result.summaries,
        judge=judged,
    )[0]


def _run_numbers(numbers: dict[str, Any]) -> dict[str, Any]:
    return {k: numbers[k] for k in RUN_NUMBERS}


# -- the command line ------------------------------------------------------------------------


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    main(list(argv))
    out = capsys.readouterr().out
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.mark.parametrize(("sample", "name"), PAIRS)
def test_the_command_line_shows_the_verdict(
    sample: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = case(sample, name)
    n = expected.verdict.numbers
    if expected.config.mode == "compact":
        # compactlens report runs compact(); its row holds the verdict's numbers.
        folder = tmp_path / "in"
        folder.mkdir()
        (folder / sample).write_bytes((BUNDLED / sample).read_bytes())
        settings = expected.config.compact
        doc = {
            "compact": {
                "target_tokens": settings.target_tokens,
                "keep_last_messages": settings.keep_last_messages,
                "trigger_tokens": settings.trigger_tokens,
            }
        }
        (tmp_path / "c.json").write_text(json.dumps(doc))
        out = tmp_path / "rows.jsonl"
        main(
            [
                "report",
                str(folder),
                "--config",
                str(tmp_path / "c.json"),
                "-o",
                str(out),
                "--pattern",
                "*" + Path(sample).suffix,
                "--jobs",
                "1",
                "--quiet",
            ]
        )
        capsys.readouterr()
        (row,) = [json.loads(line) for line in out.read_text().splitlines()]
        assert row["status"] == n.status
        assert (row["tokens_before"], row["tokens_after"]) == (n.tokens_before, n.tokens_after)
        assert row["facts_extracted"] == n.facts_total
        assert row["facts_lost"] == (n.facts_total or 0) - (n.facts_kept or 0)
        assert row["verdict"] == expected.verdict.level
        # The row's next step is the debugger's: the same compact() fix search, each fix
        # judged as the row is judged.
        assert row["next_step"] == expected.advised.next_step
        return
    config = tmp_path / "config.json"
    guards = expected.config.guard_set(expected.format)
    config.write_text(
        json.dumps({"strategy": expected.config.strategy_config(), "guards": guards.to_dict()})
    )
    data = _cli_json(capsys, "compact", str(BUNDLED / sample), "--config", str(config), "--json")
    shown = data["verdict"]
    assert _run_numbers(shown["numbers"]) == _run_numbers(n.to_dict())
    assert shown["level"] == expected.verdict.level
    assert shown["headline"] == expected.verdict.headline
    assert shown["summary"] == expected.verdict.summary
    # The run's own numbers in the same document agree with its verdict.
    assert (data["tokens_before"], data["tokens_after"]) == (n.tokens_before, n.tokens_after)


# -- the HTML report -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "name"),
    [(s, p) for s in ("coding_agent.json", "cannot_fit_16k.json") for p in PRESETS],
)
def test_the_html_report_shows_the_verdict(sample: str, name: str) -> None:
    expected = case(sample, name)
    loaded = parse_transcript((BUNDLED / sample).read_bytes(), sample)
    index = build_index(loaded.messages, "estimate")
    html = report_html(
        loaded,
        index,
        expected.outcome,
        summarizer=SummarizerSettings(),
        verdict=expected.verdict,
    )
    section = html.split("<section class='verdict", 1)[1].split("</section>", 1)[0]
    v = expected.verdict
    assert f"verdict-{v.level}" in section
    assert f"Verdict: {escape(v.headline)}" in section
    assert escape(v.summary) in section
    label, step = v.next_step_parts
    assert f"<p><b>{escape(label)}:</b> {escape(step)}</p>" in section
    assert "None" not in section.split(f"<b>{escape(label)}:</b>", 1)[1]
    for reason in v.costs:
        assert escape(reason.text) in section
    assert escape(v.numbers.recall_text) in section
    for label, count in (v.numbers.groups or {}).items():
        assert f"groups {label}</div><div class='v'>{count:,}<" in section


# -- the notebook card ----------------------------------------------------------------------


@pytest.mark.parametrize(("sample", "name"), PAIRS)
def test_the_notebook_card_shows_the_verdict(sample: str, name: str) -> None:
    v = case(sample, name).verdict
    n = v.numbers
    card = v._repr_html_()
    assert f"Verdict: {escape(v.headline)}" in card
    assert f"{n.tokens_before:,} → {n.tokens_after:,} tokens" in card
    # The card's step: the verdict's own when it is the run's one step, else the pointer
    # to debug() (this verdict was judged without the fix search).
    label, step = card_step(v)
    assert f'<div data-role="fix"><b>{escape(label)}:</b> {escape(step)}</div>' in card
    assert "None" not in step
    for reason in v.reasons:
        assert escape(reason.text) in card
    for label, count in (n.groups or {}).items():
        assert f"{count:,} {label}" in card


# -- the pages -------------------------------------------------------------------------------


def bar(at: AppTest) -> tuple[str, str]:
    """The page's verdict bar: its alert kind and its text (Markdown escapes removed)."""
    found = [
        (kind, plain(str(e.value)))
        for kind in ("success", "warning", "error")
        for e in getattr(at, kind)
        if is_verdict_bar(str(e.value))
    ]
    assert len(found) == 1, found
    return found[0]


def assert_bar(at: AppTest, v: Verdict, where: str) -> None:
    no_exceptions(at)
    kind, text = bar(at)
    assert kind == ALERT[v.level], where
    assert text.startswith(f"**{v.headline}**"), (where, text)
    assert v.summary in text, (where, text)
    assert "None" not in step_line(v)
    for reason in v.costs:
        assert reason.text in text, (where, reason.text)
    # One next step on every page: the debugger's (review 3, #9).
    assert step_line(v) in text, (where, text)
    step = text.split("**Next step:** ", 1)[1] if "**Next step:** " in text else ""
    if where == "cannot_fit" and step.startswith("Apply: "):
        # ...and it is the first fix the debugger lists.
        rows = [plain(m.value) for m in at.markdown if re.search(r"\*\*1\.\*\* ", m.value)]
        assert rows and rows[0].split("**1.** ", 1)[1].lower() in step.lower(), (rows, step)


#: One run of each level (sample, preset, budget; None: half the sample's tokens), the
#: recall floor's two sides, and a compact() run.
PAGE_PAIRS: list[tuple[str, str, int | None]] = [
    ("coding_agent.json", "reference", 8000),  # fits and safe (99% recall)
    ("coding_agent.json", "reference", None),  # fits, with costs: 57% recall is a cost
    ("shopping_assistant.json", "truncation", None),  # fits, with costs
    ("cannot_fit_16k.json", "sliding_window", None),  # does not fit
    ("shopping_assistant.json", "compact", None),  # compact(): no group counts
]


def test_the_page_pairs_cover_every_level() -> None:
    levels = {case(s, n, b).verdict.level for s, n, b in PAGE_PAIRS}
    assert levels == {"safe", "costs", "no-fit"}


def test_a_large_recall_loss_is_amber_on_the_diff_page(app) -> None:
    """The reference run at half the coding agent's tokens fits with every other check
    passed but keeps 57% of its facts: the Diff page reads "Fits, with costs" (amber) and
    names the loss, not "Fits and safe" (it did with a 50% floor)."""
    v = case("coding_agent.json", "reference").verdict
    recall = v.numbers.fact_recall
    assert recall is not None and recall < v.recall_floor == DEFAULT_RECALL_FLOOR
    assert [r.code for r in v.costs] == ["fact-recall"]
    config = case("coding_agent.json", "reference").config
    at = go(app(sample="coding_agent", cfg=encode_config(config)).run(), "diff")
    kind, text = bar(at)
    assert kind == "warning" and text.startswith("**Fits, with costs**")
    assert "under the floor of 80%" in text and v.numbers.recall_text.split(" (")[0] in text


@pytest.mark.parametrize(("sample", "name", "budget"), PAGE_PAIRS)
def test_every_page_shows_the_verdict(app, sample: str, name: str, budget: int | None) -> None:
    expected = case(sample, name, budget)
    v, n = expected.advised, expected.verdict.numbers
    at = app(sample=Path(sample).stem, cfg=encode_config(expected.config)).run()
    at = go(at, "lab")
    assert_bar(at, v, "lab")
    assert metric_int(at, "Tokens after") == n.tokens_after
    if n.groups is not None:
        assert metric_int(at, "Groups kept") == n.groups["kept"]
    assert metric_int(at, "Messages after") == n.messages_after

    at = go(at, "diff")
    assert_bar(at, v, "diff")
    if n.groups is not None:
        for label, count in n.groups.items():
            assert metric_int(at, f"Groups {label}") == count, label
    assert metric_int(at, "Tokens after") == n.tokens_after

    for page in ("timeline", "export", "analysis", "cannot_fit"):
        at = go(at, page)
        assert_bar(at, v, page)
    # The debugger's own numbers are the verdict's.
    if n.status != "cannot-fit" or expected.config.mode != "compact":
        assert metric_int(at, "Tokens after") == n.tokens_after


def test_the_overview_shows_the_verdict_of_its_compaction(app) -> None:
    at = app(sample="coding_agent").run()
    no_exceptions(at)
    budget = int(at.slider(key="landing_budget").value)
    at.button(key="landing_compact").click().run()
    assert_bar(at, case("coding_agent.json", "reference", budget).advised, "overview")


def test_story_mode_shows_each_strategys_verdict(app) -> None:
    at = app(step="2").run()
    at = go(at, "story")
    no_exceptions(at)
    sample = f"{STORY_SAMPLE}.json"
    expected = {key: case(sample, key).verdict for key, _, _ in STRATEGIES}
    for key, title, _ in STRATEGIES:
        # Each card's heading: the strategy and its verdict's headline.
        heads = [m.value for m in at.markdown if m.value.startswith(f"**{title}**")]
        assert len(heads) == 1 and expected[key].headline in plain(heads[0]), (key, heads)
    after = [m.value for m in at.metric if m.label == "Tokens after"]
    assert [int(str(a).replace(",", "")) for a in after] == [
        v.numbers.tokens_after for v in expected.values()
    ]
    at.query_params["step"] = "3"
    at = at.run()
    no_exceptions(at)
    table = at.dataframe[0].value
    assert list(table["fact recall"]) == [v.numbers.recall_text for v in expected.values()]
    assert list(table["verdict"]) == [v.headline for v in expected.values()]
    assert re.search(r"\d", " ".join(table["fact recall"]))


# -- the post-mortem ------------------------------------------------------------------------


def test_the_postmortem_shows_each_sides_verdict(app) -> None:
    """Each side of a recorded compaction (the agent's own, compactlens's at the agent's
    size) shows its verdict as the library judges it: level, headline, summary, every
    failed check and the next step; its recall and the table's verdict column agree."""
    sample = BUNDLED / "claude_code_compacted.jsonl"
    expected = postmortem(load_transcript(sample), [("reference", reference_pipeline)])
    at = go(app(sample=sample.stem).run(), "postmortem")
    no_exceptions(at)
    # The table shows one column per compaction and one row per measure.
    table = next(d.value for d in at.dataframe if "measure" in d.value.columns)
    shown_verdicts = list(table.set_index("measure").loc["agent verdict"])
    for c, shown in zip(expected.compactions, shown_verdicts, strict=True):
        assert c.agent is not None and c.agent.verdict is not None
        assert shown == c.agent.verdict.headline
    for pick, c in enumerate(expected.compactions):
        at.selectbox(key="pm_pick").set_value(pick).run()
        no_exceptions(at)
        sides = [c.agent, *c.strategies]
        verdicts = [s.verdict for s in sides if s is not None and s.verdict is not None]
        assert len(verdicts) == 2
        alerts = [
            (kind, plain(str(e.value)))
            for kind in ("success", "warning", "error")
            for e in getattr(at, kind)
            if is_verdict_bar(str(e.value))
        ]
        assert len(alerts) == len(verdicts), alerts
        for v in verdicts:
            matching = [
                text
                for kind, text in alerts
                if kind == ALERT[v.level]
                and text.startswith(f"**{v.headline}**")
                and v.summary in text
            ]
            assert len(matching) == 1, (v, alerts)
            assert step_line(v) in matching[0]
            for reason in v.costs:
                assert reason.text in matching[0], reason.text
        # Each side's metric shows the share, its caption the verdict's recall with its count.
        recalls = [str(m.value) for m in at.metric if m.label.startswith("Recall · ")]
        assert recalls == [v.numbers.recall_text.split(" (")[0] for v in verdicts]
        captions = " ".join(plain(str(c.value)) for c in at.caption)
        assert all(v.numbers.recall_text in captions for v in verdicts)
        # At the agent's size: both sides are judged against the tokens the agent kept.
        assert {v.numbers.target_tokens for v in verdicts} == {c.budget}


# -- the notebook tuner ----------------------------------------------------------------------


def _tuner_expected(tuner: Tuner, transcript: Any) -> Verdict:
    """The verdict of the tuner's current run, computed here through the public API: the
    run analyzed with its strategy's triggers and the guards' provider, then judged; its
    next step is the one ``debug()`` of the same run gives (after the fix search,
    review 4 #3), not the verdict's own."""
    assert tuner.result is not None
    guards = tuner.bench.guards(tuner.settings)
    provider = guards.provider
    chosen = provider if provider not in (None, "any") else None
    report = analyze(
        transcript,
        tuner.result,
        triggers=tuner.strategy,
        tokenizer=tuner.bench.index(tuner.settings.profile).tokenizer,
        providers=[chosen] if chosen else None,
        context_window=DEFAULT_CONTEXT_WINDOW,  # the window every surface defaults to
    )
    own = verdict(tuner.result, report, provider=chosen)
    index = tuner.bench.index(tuner.settings.profile)
    debugger = debug(tuner.result, tuner.strategy, index, guards=guards)
    return replace(own, next_step=debugger.verdict.next_step)


def assert_tuner_shows(tuner: Tuner, v: Verdict) -> None:
    """The tuner's widget state (its status HTML) shows ``v``: level colour, headline,
    status, tokens, groups, every check and the next step."""
    assert tuner.verdict == v
    html = tuner.status.value
    assert f"border-left:6px solid {LEVEL_COLORS[v.level]}" in html
    assert f"Verdict: {escape(v.headline)}" in html
    assert f">{escape(v.numbers.status)}</span>" in html
    n = v.numbers
    assert f"{n.tokens_before:,} → {n.tokens_after:,} tokens" in html
    for label, count in (n.groups or {}).items():
        assert f"{count:,} {label}" in html
    for reason in v.reasons:
        assert escape(reason.text) in html
    label, step = v.next_step_parts
    # The card shows the step whole, on one line (a choice of two cut short would hide
    # its second half).
    assert f"<b>{escape(label)}:</b> {escape(' '.join(step.split()))}" in html
    assert "None" not in step


@pytest.mark.parametrize(
    ("sample", "name"),
    [
        (s, p)
        for s in ("coding_agent.json", "cannot_fit_16k.json")
        for p in PRESETS
        if p != "compact"
    ],
)
def test_the_notebook_tuner_shows_the_verdict_of_its_parameters(sample: str, name: str) -> None:
    transcript = load_transcript(BUNDLED / sample)
    config = case(sample, name).config
    strategy = strategy_from_config(config.strategy_config(), summarizer=ExtractiveSummarizer())
    tuner = tune(transcript, strategy, config.target_tokens or 4000)
    assert_tuner_shows(tuner, _tuner_expected(tuner, transcript))
    # Moving the target re-judges: a target far under the system prompt cannot fit (red).
    tuner.update(target_tokens=50)
    moved = _tuner_expected(tuner, transcript)
    assert moved.numbers.target_tokens == 50
    assert_tuner_shows(tuner, moved)


# -- the timeline's replay ------------------------------------------------------------------


def test_the_timeline_replay_shows_each_evaluations_verdict(app) -> None:
    """Replayed turn by turn, every evaluation that compacted shows its verdict (the table's
    verdict column, and the full bar of a chosen evaluation); the first compaction's is the
    verdict the library gives the same history compacted once."""
    sample = BUNDLED / "coding_agent.json"
    transcript = load_transcript(sample)
    index = build_index(transcript.messages, "estimate")
    config = preset("truncation", nice_budget(index.total_tokens, 0.3))
    steps = replay_session(index, config, make_summarizer(SummarizerSettings()), max_steps=30)
    fired = [s for s in steps if s.fired]
    assert fired and all(s.verdict is not None for s in fired)
    # The level follows the step's own outcome.
    for s in fired:
        assert s.verdict is not None
        assert (s.verdict.level == "no-fit") == (s.status == "cannot-fit"), s
    # The first compaction, computed here through the public API.
    first = fired[0]
    history = list(transcript.messages[: first.messages_in])
    strategy = strategy_from_config(config.strategy_config())
    result = apply_compaction(history, strategy, CharEstimator())
    triggers = [Trigger.from_dict(dict(st["trigger"])) for st in config.stages]
    expected = verdict(result, analyze(history, result, triggers=triggers))
    assert first.verdict == expected

    at = app(sample=sample.stem, cfg=encode_config(config)).run()
    at = go(at, "timeline")
    at.toggle(key="timeline_session").set_value(True).run()
    no_exceptions(at)
    table = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    assert list(table["verdict"]) == [s.verdict_text for s in steps]
    assert list(table["status"]) == [s.status for s in steps]
    # Each judged evaluation's full verdict, picked one by one.
    for s in fired[:3]:
        at.selectbox(key="timeline_step").set_value(s.turn).run()
        no_exceptions(at)
        assert s.verdict is not None
        assert_bar(at, s.verdict, f"timeline evaluation {s.turn}")


# -- the next step in words ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "config"),
    [
        # fits and every check passes (99% recall): nothing to change
        (
            "coding_agent.json",
            json.loads((REPO_ROOT / "examples" / "pipeline.json").read_text(encoding="utf-8")),
        ),
        # no trigger fires: nothing to change either
        ("coding_agent.json", {"type": "truncation", "max_n": 9000, "compact_to": 6000}),
    ],
)
def test_no_surface_shows_none_for_a_next_step_with_nothing_to_do(
    sample: str, config: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """When there is nothing to do, the next step is prose ("Nothing to change: <why>") on
    the command line, in the notebook card and in the HTML report: never "None"."""
    transcript = load_transcript(BUNDLED / sample)
    strategy = strategy_from_config(config)
    result = apply_compaction(list(transcript.messages), strategy, CharEstimator())
    # Analyzed as the command line does (an explicit tokenizer: a legacy ``max_n`` counts
    # tokens), so the next step can be compared word for word.
    triggers = strategy_triggers(strategy, tokenizer_given=True)
    report = analyze(transcript, result, triggers=triggers, tokenizer=CharEstimator())
    v = verdict(result, report, provider="openai-chat")
    assert v.level == "safe", v.costs
    label, step = v.next_step_parts
    assert label == "Nothing to change" and step[0].islower() and "None" not in v.next_step
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"strategy": config, "guards": {"provider": "openai-chat"}}))
    main(["compact", str(BUNDLED / sample), "--config", str(path)])
    text = capsys.readouterr().out
    assert text.rstrip().splitlines()[-1] == f"Nothing to change: {step}"
    assert "Next step" not in text and "None" not in text
    card = v._repr_html_()
    assert f"<b>Nothing to change:</b> {escape(step)}" in card and "None" not in card
    loaded = parse_transcript((BUNDLED / sample).read_bytes(), sample)
    outcome = case(sample, "reference").outcome
    html = report_html(
        loaded,
        build_index(loaded.messages, "estimate"),
        outcome,
        summarizer=SummarizerSettings(),
        verdict=v,
    )
    section = html.split("<section class='verdict", 1)[1].split("</section>", 1)[0]
    assert f"<b>Nothing to change:</b> {escape(step)}" in section
    assert "None" not in section


@pytest.mark.parametrize(
    ("sample", "name", "budget"),
    [("coding_agent.json", "reference", None), ("cannot_fit_16k.json", "sliding_window", None)],
)
def test_the_debugger_and_the_command_line_give_one_next_step(
    app, capsys: pytest.CaptureFixture[str], tmp_path: Path, sample: str, name: str, budget: Any
) -> None:
    """Review 3, #9: the debugger's bar and ``compactlens compact --json`` and
    ``--explain`` give the same next step for the same run."""
    expected = case(sample, name, budget)
    config = tmp_path / "config.json"
    guards = expected.config.guard_set(expected.format)
    config.write_text(
        json.dumps({"strategy": expected.config.strategy_config(), "guards": guards.to_dict()})
    )
    argv = ["compact", str(BUNDLED / sample), "--config", str(config)]
    step = _cli_json(capsys, *argv, "--json")["verdict"]["next_step"]
    main([*argv, "--explain"])
    explained = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert explained == f"Next step: {step}"
    at = app(sample=Path(sample).stem, cfg=encode_config(expected.config)).run()
    _kind, text = bar(go(at, "cannot_fit"))
    assert f"**Next step:** {step}" in text, (step, text)
