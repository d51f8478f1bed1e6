"""The Analysis page in two steps: the overview (tokens, prompt cache, re-trigger, protocol)
first, then fact survival in its place, and the split it rests on."""

from __future__ import annotations

from apptest_helpers import coding_agent, go, metric, metric_int, no_exceptions, texts

from compactlens import CharEstimator, ExtractiveSummarizer, MessageIndex
from compactlens.analysis import Fact
from compactlens.formats import from_caller
from compactlens_inspector.lab.config import encode_config, preset
from compactlens_inspector.lab.runs import RunOutcome, run_config
from compactlens_inspector.views.analysis import (
    AnalysisSettings,
    run_analysis,
    run_facts,
    run_overview,
)

TRUNCATION = preset("truncation", 2000)


def test_the_page_shows_the_overview_and_then_the_facts_in_their_place(app) -> None:
    at = go(app(cfg=encode_config(TRUNCATION), sample="coding_agent").run(), "analysis")
    no_exceptions(at)
    # The fact cards were filled in (they say "…" while fact survival is computed).
    assert metric(at, "Fact recall").endswith("%")
    assert metric_int(at, "Facts lost") > 0
    assert metric(at, "Re-trigger in") != "…"
    # The fact section sits above the prompt cache, where its placeholder was reserved,
    # although it is written after the overview's sections.
    headings = [h.value for h in at.subheader]
    assert headings.index("Fact survival") < headings.index("Prompt cache and cost")
    assert "Computing fact survival" not in texts(at)  # the spinner is gone


def _run() -> tuple[MessageIndex, RunOutcome]:
    ix = MessageIndex.build(from_caller(coding_agent(12)).messages, CharEstimator())
    outcome = run_config(ix, TRUNCATION, ExtractiveSummarizer(), explain=False)
    assert outcome.result is not None and outcome.result.status == "compacted"
    return ix, outcome


def test_the_overview_reads_no_fact_and_completes_into_the_whole_analysis() -> None:
    ix, outcome = _run()
    cache: dict[int, list[Fact]] = {}
    settings = AnalysisSettings()
    overview = run_overview(ix, outcome, settings)
    assert overview is not None and overview.affected
    assert not cache
    facts = run_facts(ix, outcome, cache)
    # Fact survival read every message of the conversation (the overview read none).
    assert facts is not None and set(cache) == set(range(len(ix.messages)))
    assert facts.affected_messages == overview.affected
    whole = run_analysis(ix, outcome, settings)
    assert whole is not None
    assert overview.with_facts(facts).to_dict() == whole.to_dict()
    # The facts' findings come first, then the overview's own.
    assert whole.warnings[len(whole.warnings) - len(overview.warnings) :] == overview.warnings
    assert len(whole.warnings) > len(overview.warnings), "the case under test loses facts"
