"""The walkthrough notebook measures its one transcript with one counter: the pipeline's
card and the one-shot ``compact()`` card show the same tokens before (they read 46,971
and 64,795: ``compact()`` counts the JSON it would send unless told otherwise)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from compactlens import ExtractiveSummarizer, MessageIndex, compact, load_transcript

REPO_ROOT = Path(__file__).resolve().parents[2]
WALKTHROUGH = REPO_ROOT / "examples" / "walkthrough.ipynb"
# A result's repr, or its verdict's (the cells end with ``verdict(...)``).
BEFORE = re.compile(
    r"<Compact(?:ion)?Result: \w[\w-]*; ([\d,]+) (?:->|→) |<Verdict [\w-]+: [^;]+; ([\d,]+) to "
)


def _tokens_before(source_start: str) -> list[int]:
    nb = nbformat.read(WALKTHROUGH, as_version=4)
    found: list[int] = []
    for cell in nb.cells:
        if cell.cell_type != "code" or source_start not in cell.source:
            continue
        for output in cell.outputs:
            text = output.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            for groups in BEFORE.findall(text):
                found += [int(g.replace(",", "")) for g in groups if g]
    return found


def test_the_walkthrough_s_cards_measure_the_transcript_alike() -> None:
    pipeline = _tokens_before("apply_compaction(")
    one_shot = _tokens_before("compact(")
    assert pipeline and one_shot, "the walkthrough's result cards are not in its outputs"
    assert set(pipeline) == set(one_shot), (pipeline, one_shot)


def test_compact_counts_with_the_index_s_counter_when_given_it() -> None:
    transcript = load_transcript(REPO_ROOT / "sample_transcripts" / "support_long.json")
    index = MessageIndex.build(transcript.messages)
    shot = compact(
        list(transcript.messages),
        summarizer=ExtractiveSummarizer(),
        target_tokens=20_000,
        count_tokens=lambda messages: MessageIndex.build(messages).total_tokens,
    )
    assert shot.tokens.before == index.total_tokens
