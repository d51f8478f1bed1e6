"""One smallest target for a ``compact()`` call that cannot fit (review 4, #6a and #12):
the result, its verdict's next step, the explanation and the notebook card name the same
number, a target that fits (one token less does not), and no surface states a target
as fitting that it has not checked."""

from __future__ import annotations

import re
from typing import Any

from compactlens import ExtractiveSummarizer, apply_compaction, compact, verdict
from compactlens.compact import CANNOT_FIT_REASONS, compact_over_index
from compactlens.engine import MessageIndex, tokens_exceed
from compactlens.engine.display import explanation_card
from compactlens.engine.strategies.truncation import TruncationStrategy
from compactlens.formats import from_caller


def _stuck(b: Any) -> tuple[list[Any], Any]:
    history = b.chat(10, size=120)
    result = compact(history, summarizer=ExtractiveSummarizer(), target_tokens=150)
    assert result.reason == "protected-history"
    return history, result


def test_the_smallest_target_fits_and_one_less_does_not(b: Any) -> None:
    history, result = _stuck(b)
    smallest = result.smallest_target
    assert smallest is not None
    # The candidate has an empty summary: any summary needs one token more.
    assert smallest == (result.candidate_tokens or 0) + 1
    fits = compact(history, summarizer=ExtractiveSummarizer(), target_tokens=smallest)
    short = compact(history, summarizer=ExtractiveSummarizer(), target_tokens=smallest - 1)
    assert fits.status == "compacted" and short.status == "cannot-fit"


def test_the_verdicts_next_step_names_that_target_not_the_candidate(b: Any) -> None:
    _, result = _stuck(b)
    v = verdict(result)
    assert v.level == "no-fit"
    named = [int(n.replace(",", "")) for n in re.findall(r"at least ([\d,]+) tokens", v.next_step)]
    # The smallest target that fits (see above), not the candidate one token short of it.
    assert named == [(result.candidate_tokens or 0) + 1], v.next_step


def test_compact_mode_as_an_engine_result_has_the_same_smallest_target(b: Any) -> None:
    history, _ = _stuck(b)
    index = MessageIndex.build(from_caller(history).messages)
    run = compact_over_index(
        index, target_tokens=150, keep_last_messages=4, summarizer=ExtractiveSummarizer()
    )
    assert run.result is not None and run.compact is not None
    assert run.result.explanation.smallest_target == run.compact.smallest_target


def test_a_compacted_call_has_no_smallest_target(b: Any) -> None:
    history = b.chat(10, size=120)
    result = compact(history, summarizer=ExtractiveSummarizer(), target_tokens=100_000)
    assert result.status == "compacted" and result.smallest_target is None


def test_the_notebook_card_states_a_bound_not_a_fit(b: Any) -> None:
    """The explanation card of an engine run that cannot fit: what the parameters reach
    with the triggers as they are, never "a target of N fits" (with the trigger it then
    needs, N may not fit) and never that bound as the card's fix."""
    history = b.chat(12, size=150)
    result = apply_compaction(history, TruncationStrategy(tokens_exceed(200), minimum_preserved=6))
    assert result.status == "cannot-fit"
    card = explanation_card(result.explanation)
    facts = dict(card.facts)
    assert "smallest target that fits" not in facts
    reached = facts["best the parameters reach"]
    assert reached == f"{result.explanation.smallest_target:,} tokens"
    assert "fits with these parameters" not in card.fix and "target" not in card.fix


def test_every_cannot_fit_reason_has_a_plain_label() -> None:
    from compactlens.engine import cannot_fit_words

    for reason in CANNOT_FIT_REASONS:
        label = cannot_fit_words(reason)
        assert label and "-" not in label and label[0].isupper(), (reason, label)
