"""Review 6 (surfaces): every surface colours and words a run by its verdict. Sweep
markers by verdict level, and "In plain words" does not open with a bare "The target
was met." over a run that has costs."""

from __future__ import annotations

import json
from pathlib import Path

from apptest_helpers import go, no_exceptions, plain
from streamlit.testing.v1 import AppTest

from compactlens.analysis.verdict import HEADLINES, LEVEL_COLORS
from compactlens_inspector.lab.config import encode_config, preset

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"


def _markers(at: AppTest) -> dict[str, str]:
    """Marker trace name -> colour of the page's one chart."""
    (chart,) = at.get("plotly_chart")
    spec = json.loads(chart.proto.spec)
    return {t["name"]: t["marker"]["color"] for t in spec["data"] if t.get("mode") == "markers"}


def test_sweep_markers_are_the_verdicts_colour_and_headline(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "sweep")
    at.number_input(key="sweep_from").set_value(1000)
    at.number_input(key="sweep_to").set_value(4000)
    at.number_input(key="sweep_steps").set_value(4).run()
    no_exceptions(at)
    verdicts = set(at.dataframe[0].value["verdict"])
    assert "Fits, with costs" in verdicts  # the case under test
    by_headline = {words: LEVEL_COLORS[level] for level, words in HEADLINES.items()}
    # Before: one green "compacted" trace beside "Fits, with costs" rows.
    assert _markers(at) == {v: by_headline[v] for v in verdicts}


def test_in_plain_words_of_a_run_with_costs_points_to_the_verdict(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "cannot_fit")
    no_exceptions(at)
    shown = [plain(str(m.value)) for m in at.markdown]
    met = [t for t in shown if t.startswith("The target was met")]
    assert met, shown
    assert met[0].startswith("The target was met; the verdict above names its costs")


def test_findings_the_verdict_does_not_count_are_neutral_notes(app) -> None:
    # Review 6: an amber "findings" box flagged a recall above the floor (81%, 98%) that
    # the verdict does not count as a cost.
    at = go(app(cfg=encode_config(preset("truncation", 5000))).run(), "analysis")
    no_exceptions(at)
    bar = plain(next(str(w.value) for w in at.warning if "**Next step:**" in str(w.value)))
    assert "Fits, with costs" in bar and "88% fact recall" in bar  # above the 80% floor
    flagged = [plain(str(w.value)) for w in at.warning if "finding" in str(w.value)]
    assert not any("recall 88%" in f for f in flagged), flagged
    notes = [plain(str(i.value)) for i in at.info if "not cost" in str(i.value)]
    assert notes and "(recall 88%)" in notes[0], notes


def test_split_findings_follows_the_verdicts_checks() -> None:
    from compactlens_inspector.views.analysis import finding_check

    assert finding_check("116 of the conversation's 603 facts were lost (recall 81%)") == (
        "fact-recall"
    )
    assert finding_check("compaction would fire again on the very next turn (x)") == (
        "next-compaction"
    )
    assert finding_check("something new") is None


def test_the_protocol_card_is_a_note_when_the_verdict_says_so() -> None:
    # Review 6: the Lab card "New problems 77" beside the verdict's "Note, not a cost: 77
    # warnings for Anthropic"; the card now carries the verdict's level and words.
    from dataclasses import replace

    from compactlens import apply_compaction, load_transcript, tokens_exceed, verdict
    from compactlens.analysis import Reason
    from compactlens.engine import TruncationStrategy
    from compactlens_inspector.views.analysis import protocol_card

    log = load_transcript(SAMPLES / "coding_agent.json")
    judged = verdict(apply_compaction(log.messages, TruncationStrategy(tokens_exceed(4000))))
    note = Reason(
        code="provider-warnings", level="safe", text="Note, not a cost: 77 warnings for Anthropic."
    )
    cost = Reason(code="provider-errors", level="costs", text="The compaction introduces 1 error.")
    noted = replace(
        judged,
        reasons=(note,),
        numbers=replace(judged.numbers, provider_errors=0, provider_warnings=77),
    )
    card = protocol_card(noted)
    assert (card.count, card.cost, card.delta) == (77, False, "a note, not a cost")
    assert card.words == (note.text,)
    costly = replace(noted, reasons=(note, cost))
    assert protocol_card(costly).delta == "a cost"


def test_a_label_in_parentheses_takes_its_tokens_inside_them() -> None:
    # Review 6: "not a tool call (the tool-call stage cannot touch it) (1,205 tokens)".
    from compactlens_inspector.views.cannot_fit_words import with_tokens

    label = "not a tool call (the tool-call stage cannot touch it)"
    assert with_tokens(label, "1,205") == (
        "not a tool call (the tool-call stage cannot touch it; 1,205 tokens)"
    )
    assert with_tokens("system messages", "12") == "system messages (12 tokens)"


def test_the_lab_stages_table_fits_its_conditions_whole() -> None:
    # Review 6: "starts when" and "stops at" cut at 1440 and 1280 px.
    from compactlens_inspector.style.widths import fit_columns

    rows = [
        {
            "stage": "  Tool-result collapse",
            "event": "target-missed",
            "starts when": "more than 40,000 tokens",
            "stops at": "at most 40,000 tokens",
            "tokens": "100,846 → 48,981",
            "groups changed": 214,
            "inserted": 0,
        },
        {
            "stage": "Pipeline",
            "event": "applied",
            "starts when": "a stage's trigger fires",
            "stops at": "no target",
            "tokens": "100,846 → 18,484",
            "groups changed": 218,
            "inserted": 1,
        },
    ]
    fitted = fit_columns(rows, titles={"groups changed": "groups"})
    assert fitted.rows == rows  # nothing shortened


def test_the_export_previews_are_folded(app) -> None:
    # Review 6: every preview open made the Export page 55,000 px tall on a Codex log.
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "export")
    no_exceptions(at)
    folded = [e for e in at.expander if e.label.startswith("Show ")]
    assert len(folded) == 4, [e.label for e in at.expander]
    assert all(not e.proto.expanded for e in folded)


def test_runs_and_timeline_prose_names_no_code() -> None:
    # Review 6: "(record_to=a folder)" on Runs, "through a `CompactionSession`" on the
    # Event timeline's session mode.
    from compactlens_inspector.pages import runs, timeline

    for module in (runs, timeline):
        source = Path(module.__file__).read_text(encoding="utf-8")
        prose = [
            line
            for line in source.splitlines()
            if line.strip().startswith(('"', 'f"')) and not line.strip().startswith('"""')
        ]
        assert not [ln for ln in prose if "record_to=" in ln or "CompactionSession" in ln]
