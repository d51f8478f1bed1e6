"""The fix search's judging reuses the conversation's facts across runs without changing
any answer: every fix judged with one shared fact cache (and the memo of the whole
conversation's facts) reads exactly as when each is judged from scratch."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from compactlens import CharEstimator, MessageIndex, load_transcript, run_strategy
from compactlens.analysis import advised, judge_fix, judge_fixes, judge_run, search_fixes
from compactlens.analysis.facts import conversation_facts
from compactlens.analysis.postmortem import reference_pipeline

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"
CASES = [
    (REPO / "sample_transcripts" / "cannot_fit_16k.json", 12_000),
    (REPO / "sample_transcripts" / "coding_agent.json", 3_000),
    (REPO / "sample_transcripts" / "support_long.json", 4_000),
    (CORPUS / "swe_agent__pwn__warmup.json", 2_100),
    (CORPUS / "openhands_llmc__django__django-11299.json", 4_000),
]


def _answer(verdict: Any, search: Any) -> tuple[Any, ...]:
    fixes = tuple(
        (f.plain_summary, f.tokens_after, f.verdict.to_dict() if f.verdict else None)
        for f in (search.fixes if search is not None else ())
    )
    return verdict.level, verdict.next_step, fixes


@pytest.mark.parametrize(("path", "budget"), CASES, ids=lambda c: getattr(c, "stem", str(c)))
def test_a_shared_fact_cache_gives_the_same_advice(path: Path, budget: int) -> None:
    if not path.exists():
        pytest.skip(f"{path} is absent")
    index = MessageIndex.build(load_transcript(path).messages, CharEstimator())
    strategy = reference_pipeline(budget)
    result = run_strategy(index, strategy)
    current = judge_run(index, result, strategy)
    found = search_fixes(index, strategy, summaries=result.summaries)
    shared = advised(
        index, strategy, current, judge_fixes(index, found), summaries=result.summaries
    )

    def fresh(fix: Any) -> Any:  # no cache at all: every fact extracted again
        return judge_fix(index, fix)

    alone = replace_fixes(found, fresh)
    scratch = advised(index, strategy, current, alone, summaries=result.summaries, judge=fresh)
    assert _answer(*shared) == _answer(*scratch)


def replace_fixes(found: Any, judge: Any) -> Any:
    return replace(found, fixes=tuple(judge(f) for f in found.fixes))


def test_the_conversation_facts_are_the_same_from_a_warm_cache() -> None:
    path = REPO / "sample_transcripts" / "coding_agent.json"
    messages = load_transcript(path).messages
    cache: dict[int, Any] = {}
    first = conversation_facts(messages, cache=cache)
    again = conversation_facts(messages, cache=cache)
    assert first == again == conversation_facts(messages)
    # Another conversation with its own cache is not given the first one's facts.
    other = messages[: len(messages) // 2]
    assert conversation_facts(other, cache={}) == conversation_facts(other)
