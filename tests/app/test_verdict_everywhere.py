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
  (``Verdict._repr_html_``), for every pair.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import pytest
from apptest_helpers import REPO_ROOT, go, metric_int, no_exceptions, plain
from streamlit.testing.v1 import AppTest

from compactlens import load_transcript
from compactlens.analysis import Verdict
from compactlens.cli import main
from compactlens_inspector.exports.files import report_html
from compactlens_inspector.lab.config import LabConfig, SummarizerSettings, encode_config
from compactlens_inspector.lab.presets import PRESETS, nice_budget, preset
from compactlens_inspector.lab.runs import RunOutcome, build_index, make_summarizer, run_config
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
    return Case(sample, config, transcript.format, outcome, judged)


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
        assert row["next_step"] == expected.verdict.next_step
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
    assert escape(v.next_step) in section
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
    assert escape(v.next_step) in card
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
        if "**Next step:**" in str(e.value)
    ]
    assert len(found) == 1, found
    return found[0]


def assert_bar(at: AppTest, v: Verdict, where: str) -> None:
    no_exceptions(at)
    kind, text = bar(at)
    assert kind == ALERT[v.level], where
    assert text.startswith(f"**{v.headline}**"), (where, text)
    assert v.summary in text, (where, text)
    assert f"**Next step:** {v.next_step}" in text, (where, text)
    for reason in v.costs:
        assert reason.text in text, (where, reason.text)


#: One pair of each level, and a compact() run.
PAGE_PAIRS = [
    ("coding_agent.json", "reference"),  # fits and safe
    ("shopping_assistant.json", "truncation"),  # fits, with costs
    ("cannot_fit_16k.json", "sliding_window"),  # does not fit
    ("shopping_assistant.json", "compact"),  # compact(): no group counts
]


def test_the_page_pairs_cover_every_level() -> None:
    assert {case(s, n).verdict.level for s, n in PAGE_PAIRS} == {"safe", "costs", "no-fit"}


@pytest.mark.parametrize(("sample", "name"), PAGE_PAIRS)
def test_every_page_shows_the_verdict(app, sample: str, name: str) -> None:
    expected = case(sample, name)
    v, n = expected.verdict, expected.verdict.numbers
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
    assert_bar(at, case("coding_agent.json", "reference", budget).verdict, "overview")


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
