"""The Cannot-fit debugger in ``compact()`` mode (review 4, #6): one smallest target on the
page, fixes judged as the runs they give once applied and ranked by those verdicts, a
next step with a number and a button after Apply, and "In plain words" without code
names or raw ids.

The configuration is the compact() preset's shape on the synthetic coding agent: compact
above 600 tokens down to 600, the newest 4 messages kept. What must stay (the system
prompt, the re-inserted request, the newest messages) leaves no room for a summary."""

from __future__ import annotations

import re

from apptest_helpers import REPO_ROOT, coding_agent, go, metric_int, no_exceptions, plain, texts

from compactlens import MessageIndex
from compactlens.compact import compact_over_index
from compactlens.formats import from_caller
from compactlens.summarizers import ExtractiveSummarizer
from compactlens_inspector.lab.config import CompactSettings, LabConfig, encode_config, preset

CONFIG = LabConfig(mode="compact", compact=CompactSettings(600, 4, 600))


def _fits(target: int) -> bool:
    """Whether compact() fits at ``target`` with the preset's other settings."""
    index = MessageIndex.build(from_caller(coding_agent()).messages)
    run = compact_over_index(
        index,
        target_tokens=target,
        keep_last_messages=4,
        summarizer=ExtractiveSummarizer(),
        find_fixes=False,
    )
    assert run.result is not None
    return run.result.status == "compacted"


def _bar(at) -> str:
    return next(plain(e.value) for e in (*at.error, *at.warning, *at.success) if "**" in e.value)


def _rows(at) -> list[str]:
    return [
        plain(m.value)
        for m in at.markdown
        if re.match(r"(:\w+-badge\[\w+\] )?\*\*\d+\.\*\*", m.value)
    ]


def _verdict_captions(at) -> list[str]:
    return [plain(c.value) for c in at.caption if c.value.startswith("**Fits")]


def test_one_smallest_target_on_the_page(app) -> None:
    at = go(app(cfg=encode_config(CONFIG)).run(), "cannot_fit")
    no_exceptions(at)
    smallest = metric_int(at, "Smallest target that fits")
    # The card's number is the smallest target: it fits, one token less does not.
    assert _fits(smallest) and not _fits(smallest - 1)
    body = plain(texts(at))
    # Every target the page names as one that fits is that number, never the candidate
    # (what stays with an empty summary, one token short of any summary).
    named = {int(n.replace(",", "")) for n in re.findall(r"target of at least ([\d,]+)", body)}
    named |= {int(n.replace(",", "")) for n in re.findall(r"target to at least ([\d,]+)", body)}
    assert named <= {smallest}, (named, smallest)
    raised = [r for r in _rows(at) if "target to" in r]
    assert any(f"target to {smallest:,} tokens" in r for r in raised), raised


def test_each_fix_carries_the_verdict_it_gives_and_the_bar_names_the_first(app) -> None:
    at = go(app(cfg=encode_config(CONFIG)).run(), "cannot_fit")
    no_exceptions(at)
    rows, captions = _rows(at), _verdict_captions(at)
    assert rows and len(captions) == len(rows), (rows, captions)
    # Ranked by verdict: a safe fix (if any) before every costly one.
    levels = ["safe" if c.startswith("**Fits and safe**") else "costs" for c in captions]
    assert levels == sorted(levels, key=lambda x: x != "safe"), levels
    assert [("badge[costly]" in r) for r in rows] == [lvl == "costs" for lvl in levels]
    # The bar's next step is fix 1, with the verdict its run gives.
    first = rows[0].split("**1.** ", 1)[1]
    promised = captions[0].split("**: ", 1)[1]
    bar = _bar(at)
    # ("Apply, at a cost (<its costs>): …" when fix 1 is costly, as the engine's step.)
    head = "Apply: " if levels[0] == "safe" else "Apply, at a cost ("
    assert head in bar and f"{first[:1].lower()}{first[1:]} ({promised})" in bar, bar
    # Applied, the page's verdict is the one the fix showed.
    at.button(key="cf_apply_0").click().run()
    no_exceptions(at)
    assert promised in _bar(at)


def test_after_applying_a_costly_fix_the_next_step_has_a_number_and_a_button(app) -> None:
    at = go(app(cfg=encode_config(CONFIG)).run(), "cannot_fit")
    no_exceptions(at)
    rows = _rows(at)
    # The fix the review applied: fewer newest messages kept, the trigger as it is.
    keep = next(
        n for n, r in enumerate(rows) if "newest messages kept verbatim" in r and "trigger" not in r
    )
    at.button(key=f"cf_apply_{keep}").click().run()
    no_exceptions(at)
    assert at.session_state["cl_lab"].compact.keep_last_messages < 4
    bar = _bar(at)
    assert "**Fits, with costs**" in bar
    step = bar.split("**Next step:**", 1)[1]
    assert "the fix search finds" not in step and re.search(r"\d", step), step
    assert step.strip().startswith(("Apply: ", "Apply, at a cost ("))
    assert [b for b in at.button if b.key == "cf_apply_0"]
    # One more click lands where the step said.
    promised = _verdict_captions(at)[0].split("**: ", 1)[1]
    at.button(key="cf_apply_0").click().run()
    no_exceptions(at)
    assert promised in _bar(at)


def test_in_plain_words_names_no_code_or_ids(app) -> None:
    at = go(app(cfg=encode_config(CONFIG)).run(), "cannot_fit")
    no_exceptions(at)
    words = plain(texts(at))
    section = words
    for code in ("protected-history", "replaced range", "[1,", "call_", "unresolved call id"):
        assert code not in section, code
    assert "No room for a summary" in words  # the vocabulary's label of the reason
    assert ".." not in words
    lines = [plain(m.value) for m in at.markdown if m.value.startswith("- ")]
    assert any("stay verbatim" in ln and "newest 4 messages" in ln for ln in lines), lines
    assert any(re.search(r"Messages \d+–\d+ would be replaced by one summary", ln) for ln in lines)
    # Tool calls are named by their tool, messages by position.
    assert any("“run_tests”" in ln or "“read_file”" in ln for ln in lines), lines
    # Why each part stays is listed under the parts table (a column cut it at 1280 px).
    assert "why" not in at.dataframe[0].value.columns
    assert not [ln for ln in lines if ln.startswith("- **") and "call_" in ln], lines


def test_when_the_smallest_target_holds_the_whole_history_the_fix_stops_compacting(
    app, monkeypatch
) -> None:
    """cannot_fit_16k with the compact() preset at 16,000: what must stay, with the
    summary's wrapper, is more than the whole history. Fix 1 is the target and trigger
    at the smallest target (the card's number), so nothing is compacted: one click to a
    run that fits, never "search for a change" after the search ran."""
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(REPO_ROOT / "sample_transcripts"))
    config = preset("compact", 16_000)
    at = go(app(sample="cannot_fit_16k", cfg=encode_config(config)).run(), "cannot_fit")
    no_exceptions(at)
    smallest = metric_int(at, "Smallest target that fits")
    rows = _rows(at)
    assert rows and f"to {smallest:,} tokens" in rows[0], rows
    assert "the fix search" not in _bar(at)
    at.button(key="cf_apply_0").click().run()
    no_exceptions(at)
    assert "**Fits" in _bar(at)


def test_messages_that_stop_the_summary_are_named_once() -> None:
    """A Codex log with encrypted reasoning in many messages: the first one keeps itself
    and every later message, so the boundary names it once with how many more there are
    (review 6: the same sentence 22 times)."""
    from compactlens.compact import analyze_boundary
    from compactlens.model import Message, OpaquePart, TextPart
    from compactlens_inspector.views.compact_words import boundary_lines

    secret = OpaquePart(provider="openai", type="reasoning", text="gAAAA")
    messages = [Message(role="system", parts=(TextPart("Be brief."),))]
    for turn in range(6):
        messages.append(Message(role="user", parts=(TextPart(f"question {turn}"),)))
        parts = (secret, TextPart(f"answer {turn}")) if turn >= 1 else (TextPart("hi"),)
        messages.append(Message(role="assistant", parts=parts))
    boundary = analyze_boundary(messages, 2)
    opaque = [p for p in boundary.pins if p.kind == "opaque"]
    assert len(opaque) >= 2
    lines = boundary_lines(boundary, messages, compacted=False)
    said = [line for line in lines if "opaque provider content" in line]
    assert len(said) == 1
    first = min(p.index for p in opaque)
    assert said[0].startswith(f"Message {first} holds opaque provider content")
    assert f"{len(opaque) - 1} later message" in said[0]
