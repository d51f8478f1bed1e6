"""Timestamps, hashes and redaction placeholders are minor: checked like facts but
counted apart, outside recall, so a headline is driven by the facts a reader would miss."""

from __future__ import annotations

from pathlib import Path

import pytest

from compactlens import load_transcript
from compactlens.analysis import extract_facts, fact_survival
from compactlens.analysis.fact_values import FactReport, noise_memo
from compactlens.analysis.facts import (
    Fact,
    FactKind,
    check_facts,
    conversation_facts,
    minor_kind,
)
from compactlens.model import Message, TextPart
from compactlens.model.noise import noise_kind

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"


def fact(kind: FactKind, value: str) -> Fact:
    return Fact(kind, value, 0, "assistant", "text")


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        ("date", "16:42:11", "timestamp"),
        ("date", "Apr 9", "timestamp"),
        ("date", "2024-04-11T02:00:01.874Z", "timestamp"),
        ("identifier", "8e41c07", "hash"),
        ("identifier", "8e41c07d2b5a9f3e61c0a4d7b8e29f15c3a6d402", "hash"),
        ("quoted", "[REDACTED]", "redaction"),
        ("identifier", "****", "redaction"),
        ("date", "2024-03-28", None),  # a calendar date a person wrote
        ("date", "April 22", None),
        ("identifier", "INC-4821", None),
        ("identifier", "1234567", None),  # digits only: an order number, not a hash
        ("identifier", "deadbeefcafe", None),  # letters only
        ("path", "src/billing/money.py", None),
        ("quantity", "1500 ms", None),
        ("latest_request", "Fix the 16:42 cron job", None),
    ],
)
def test_minor_kinds(kind: FactKind, value: str, expected: str | None) -> None:
    assert minor_kind(fact(kind, value)) == expected


def _said(text: str) -> Message:
    return Message(role="assistant", parts=(TextPart(text),))


def test_minor_values_are_kept_out_of_recall_and_counted_apart() -> None:
    original = [
        _said("Deploy at 16:42:11 of commit 8e41c07 fixed INC-4821 in src/app/payments.py."),
        _said("Done."),
    ]
    # The compacted history keeps the ticket and the path, not the time or the commit.
    compacted = [_said("Summary: INC-4821 fixed in src/app/payments.py."), original[1]]
    report = fact_survival(original, compacted, [0])
    assert {c.fact.value for c in report.checks} == {"INC-4821", "src/app/payments.py"}
    assert report.recall == 1.0 and report.lost == ()
    assert report.minor_extracted == 2 and report.minor_survived == 0
    assert {f.value for f in report.minor_lost} == {"16:42:11", "8e41c07"}
    assert dict((k, (n, kept)) for k, n, kept in report.minor_by_kind()) == {
        "timestamp": (1, 0),
        "hash": (1, 0),
    }
    data = report.to_dict()
    assert data["extracted"] == 2 and data["minor"]["extracted"] == 2


def test_on_a_log_heavy_sample_most_values_are_minor() -> None:
    messages = load_transcript(SAMPLES / "cannot_fit_16k.json").messages
    report = fact_survival(messages, messages[:1], range(len(messages)))
    every = extract_facts(messages, range(len(messages)), latest_request=None)
    assert report.extracted + report.minor_extracted >= len(every)
    # The sample is mostly log timestamps and request hashes: they no longer make the count.
    assert report.minor_extracted > report.extracted
    assert all(minor_kind(c.fact) is None for c in report.checks)
    assert all(minor_kind(c.fact) is not None for c in report.minor)


@pytest.mark.parametrize("name", ["cannot_fit_16k.json", "coding_agent.json"])
def test_the_noise_memo_of_an_analysis_gives_what_noise_kind_gives(name: str) -> None:
    messages = load_transcript(SAMPLES / name).messages
    memo = noise_memo()
    facts = conversation_facts(messages, noise_of=memo)
    assert facts == conversation_facts(messages, noise_of=noise_kind)
    checks = check_facts(facts, messages[:1])
    shared = FactReport.of(checks, (), noise_of=memo)
    assert shared == FactReport.of(checks, ())
    assert shared.minor and shared.checks  # both sides are exercised
    assert memo("8e41c07") == noise_kind("8e41c07") == "hash"
