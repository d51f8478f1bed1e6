"""Counts agree with their nouns and providers read as words on every notebook and command
line surface (review 4, #13: "1 fixe ranked", "1 destructive changes not shown",
"75 warnings (openai-chat, anthropic)", "keep the target with add a clamp stage")."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from compactlens import (
    CharEstimator,
    MessageIndex,
    TruncationStrategy,
    apply_compaction,
    load_transcript,
    tokens_exceed,
)
from compactlens.analysis import FixSearch, advise, analyze
from compactlens.cli.render import render_fixes
from compactlens.formats import from_caller
from compactlens.notebook import debug
from compactlens.notebook.debugger import Debugger

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"

#: "1" followed by a plural noun (or a plural cut to "fixe"): a count that disagrees.
ONE_WITH_PLURAL = re.compile(
    r"\b1 (?:destructive )?(?:fixe|fixes|improvements|changes|problems|errors|warnings|"
    r"groups|messages|turns|tokens|facts|tool calls)\b"
)


def test_the_debugger_note_names_one_fix_in_the_singular() -> None:
    """cannot_fit_16k, truncation at 16,000 (newest four groups protected): a debugger
    that lists one fix (the note read "1 fixe ranked of 20 tried"). The search finds
    more than one there; the debugger is given its advice with the first fix only."""
    dump = load_transcript(SAMPLES / "cannot_fit_16k.json")
    index = MessageIndex.build(dump.messages, CharEstimator())
    strategy = TruncationStrategy(trigger=tokens_exceed(16000), minimum_preserved=4)
    result = apply_compaction(dump.messages, strategy, CharEstimator())
    full = debug(result, strategy, index)
    assert full.fixes
    judged, search = advise(index, result, strategy, full.guards)
    one = replace(search, fixes=search.fixes[:1], hidden_destructive=0)
    debugger = Debugger(
        result, index=index, strategy=strategy, guards=full.guards, advice=(judged, one)
    )
    assert len(debugger.fixes) == 1
    note = next(c.value for c in debugger.panel.children if "ranked of" in str(c.value))
    assert note.startswith("<b>1 fix</b> ranked of ")
    assert not ONE_WITH_PLURAL.search(note), note


def test_the_command_line_fix_list_counts_in_the_singular() -> None:
    found = FixSearch(fixes=(), tried=1, hidden_destructive=1, duration_ms=1.0)
    text = render_fixes(found)
    assert "fixes (1 change re-run" in text
    assert "(1 destructive change not shown: " in text
    assert not ONE_WITH_PLURAL.search(text), text
    many = render_fixes(FixSearch(fixes=(), tried=2, hidden_destructive=3, duration_ms=1.0))
    assert "fixes (2 changes re-run" in many and "(3 destructive changes not shown: " in many


def test_the_report_card_counts_problems_and_names_providers_in_words() -> None:
    transcript = load_transcript(SAMPLES / "coding_agent.json")
    strategy = TruncationStrategy(tokens_exceed(4000), minimum_preserved=2)
    report = analyze(transcript, apply_compaction(transcript.messages, strategy), triggers=strategy)
    assert report.providers == ("openai-chat", "anthropic")
    errors = sum(1 for p in report.introduced if p.severity == "error")
    assert errors == 1  # the count this test is about
    html = report._repr_html_()
    assert "1 error, " in html
    assert "(OpenAI Chat Completions and Anthropic)" in html
    assert "openai-chat" not in html and not ONE_WITH_PLURAL.search(html), html


def test_the_index_card_of_one_message_is_singular() -> None:
    hello = from_caller([{"role": "user", "content": "hello"}]).messages
    index = MessageIndex.build(hello, CharEstimator())
    text = index._repr_html_()
    assert "1 message, 1 group, 1 turn" in text
    assert not ONE_WITH_PLURAL.search(text), text


def test_a_figure_hover_of_a_one_message_group_is_singular() -> None:
    from compactlens import viz

    hello = from_caller([{"role": "user", "content": "hello"}]).messages
    figure = viz.tokens_per_group(MessageIndex.build(hello, CharEstimator()))
    hovers = [text for trace in figure.data for text in (trace.hovertext or ())]
    assert hovers and all(" · 1 message<br>" in text for text in hovers), hovers
