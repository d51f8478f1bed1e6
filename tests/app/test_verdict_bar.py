"""Strategy lab: the verdict bar on top is the library's verdict of the same run and report.

The expectation is computed here with compactlens alone (load, run, analyze, ``verdict``)
over the bundled samples, for two presets, and compared with the bar's headline and colour.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

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

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    MessageIndex,
    analyze,
    load_transcript,
    run_strategy,
    strategy_from_config,
    verdict,
)
from compactlens.analysis import Fix, advised, search_fixes
from compactlens.analysis.verdict import Verdict
from compactlens_inspector.lab.config import LabConfig, encode_config, preset

BUNDLED = REPO_ROOT / "sample_transcripts"
#: The alert each level is drawn with.
ALERT = {"safe": "success", "costs": "warning", "no-fit": "error"}
CASES = [
    ("coding_agent", "truncation", 4000),
    ("coding_agent", "reference", 4000),
    ("cannot_fit_16k", "truncation", 16000),
    ("cannot_fit_16k", "reference", 16000),
]


@pytest.fixture(autouse=True)
def _bundled_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(BUNDLED))


def expected_verdict(sample: str, config: LabConfig) -> Verdict:
    """The verdict of ``config`` over the bundled ``sample``, made with compactlens alone:
    the run as the lab plans it and the analysis its card shows (the strategy's triggers)."""
    transcript = load_transcript(Path(BUNDLED / f"{sample}.json"))
    ix = MessageIndex.build(transcript.messages, CharEstimator())
    strategy = strategy_from_config(config.strategy_config(), summarizer=ExtractiveSummarizer())
    guards = config.guard_set(transcript.format)
    result = run_strategy(ix, strategy, guards=guards)
    report = analyze(
        ix.messages, result, triggers=strategy, context_window=128_000, prices="gpt-4o"
    )
    provider = guards.provider if guards.provider in report.providers else None
    current = verdict(result, report, provider=provider)

    def judged(fix: Fix) -> Fix:  # each fix judged as the lab judges the run it gives
        run = run_strategy(ix, fix.strategy, guards=fix.guards)
        rep = analyze(
            ix.messages, run, triggers=fix.strategy, context_window=128_000, prices="gpt-4o"
        )
        chosen = fix.guards.provider if fix.guards.provider in rep.providers else None
        return replace(fix, verdict=verdict(run, rep, provider=chosen))

    # The bar's next step is the run's one next step: the library's advice over the
    # judged fixes (review 3, #9).
    search = search_fixes(ix, strategy, guards=guards, summaries=result.summaries)
    search = replace(search, fixes=tuple(judged(f) for f in search.fixes))
    return advised(
        ix, strategy, current, search, guards=guards, summaries=result.summaries, judge=judged
    )[0]


def bar(at) -> tuple[str, str]:
    """The verdict bar's alert kind and its text (Markdown escapes removed)."""
    found = [
        (kind, plain(str(e.value)))
        for kind in ("success", "warning", "error")
        for e in getattr(at, kind)
        if is_verdict_bar(str(e.value))
    ]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(("sample", "name", "budget"), CASES)
def test_the_bar_is_the_library_verdict(app, sample: str, name: str, budget: int) -> None:
    config = preset(name, budget)
    at = go(app(sample=sample, cfg=encode_config(config)).run(), "lab")
    no_exceptions(at)
    expected = expected_verdict(sample, config)
    kind, text = bar(at)
    assert kind == ALERT[expected.level]
    assert text.startswith(f"**{expected.headline}**")
    assert expected.summary in text
    assert step_line(expected) in text
    for reason in expected.costs:
        assert reason.text in text
    # The card below the bar counts groups as the verdict does.
    assert expected.numbers.groups is not None
    assert metric_int(at, "Groups kept") == expected.numbers.groups["kept"]
    for reason in expected.reasons:
        if reason.level == "safe" and reason.code != "target":
            assert reason.text not in text  # only the checks that did not pass


def test_cannot_fit_reads_does_not_fit_with_a_token_number(app) -> None:
    at = go(
        app(sample="cannot_fit_16k", cfg=encode_config(preset("truncation", 16000))).run(), "lab"
    )
    no_exceptions(at)
    kind, text = bar(at)
    assert kind == "error"
    assert text.startswith("**Does not fit**")
    step = text.split("**Next step:**", 1)[1]
    assert re.search(r"\d{1,3}(,\d{3})+ tokens", step), step
    assert "None" not in text and "_" not in text
