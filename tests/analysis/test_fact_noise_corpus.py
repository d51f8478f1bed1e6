"""Fact survival on real agent logs of the shared corpus (skipped when it is absent): the
noise the review found (disassembly, ``ls -R`` listings, dates, tool names, placeholders)
is counted apart, the facts an agent worked with still count, and every compaction of one
log is measured against the same facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from compactlens import load_transcript
from compactlens.analysis import analyze_facts, conversation_facts, minor_kind
from compactlens.analysis.postmortem import reference_pipeline
from compactlens.engine import apply_compaction
from compactlens.model import Message
from compactlens.model.noise import noise_kind

SWE = "swe_agent__pwn__warmup.json"
DJANGO = "openhands_llmc__django__django-11299.json"
CLAUDE = "claude_code__ae4a77f8-aedd-4bc1-888f-c94edc91af04.json"


def _messages(corpus_dir: Path, name: str) -> list[Message]:
    path = corpus_dir / name
    if not path.is_file():
        pytest.skip(f"{name} is not in the corpus at {corpus_dir}")
    return list(load_transcript(path).messages)


def _counted(messages: list[Message]) -> list[str]:
    return [f.value for f in conversation_facts(messages) if minor_kind(f) is None]


def test_disassembly_is_not_counted_on_the_swe_agent_log(corpus_dir: Path) -> None:
    messages = _messages(corpus_dir, SWE)
    counted = _counted(messages)
    assert counted
    assert not [v for v in counted if v.startswith(("DAT_", "FUN_", "s_"))]
    assert not [v for v in counted if noise_kind(v) in ("hash", "address")]
    assert "57h" not in counted and "25h" not in counted
    # The task's facts still count: the binary's source file and the challenge's host.
    assert {"warmup.c", "pwn.chal.csaw.io"} & set(counted)


def test_a_directory_listing_does_not_drive_recall_on_the_django_log(corpus_dir: Path) -> None:
    messages = _messages(corpus_dir, DJANGO)
    facts = conversation_facts(messages)
    listing = [f for f in facts if minor_kind(f) == "listing"]
    counted = [f for f in facts if minor_kind(f) is None]
    assert len(listing) >= 300  # the ls -R output, set apart
    assert len(counted) < len(listing) / 3
    # A file the agent worked on through a tool call still counts.
    named = {f.value for f in counted if f.kind == "path"}
    assert any(v.endswith("django/db/models/constraints.py") for v in named)


def test_dates_tool_names_and_placeholders_are_not_counted_on_the_claude_log(
    corpus_dir: Path,
) -> None:
    counted = set(_counted(_messages(corpus_dir, CLAUDE)))
    assert counted
    assert not {"2026-02-12", "Bash", "Skill", "../path/to/your", "../path/to/your.db"} & counted
    assert not [v for v in counted if "secret" in v.lower()]


def test_every_compaction_of_a_log_has_the_same_denominator(corpus_dir: Path) -> None:
    for name in (SWE, CLAUDE):
        messages = _messages(corpus_dir, name)
        total = sum(len(m.text) for m in messages) // 4
        reports = []
        for fraction in (0.6, 0.25):
            target = max(500, int(total * fraction))
            result = apply_compaction(messages, reference_pipeline(target))
            reports.append(analyze_facts(messages, result))
        first, second = reports
        assert first.extracted == second.extracted, name
        assert first.minor_extracted == second.minor_extracted, name
        assert first.survived >= second.survived, name  # the larger target keeps more
