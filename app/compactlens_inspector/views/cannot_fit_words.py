"""The Cannot-fit debugger's sentences: the triggers that did not fire, the run's outcome
in one paragraph, and a part with its tokens. No Streamlit here."""

from __future__ import annotations

from compactlens.analysis import SUMMARIES, BudgetPart
from compactlens.engine import CompactionResult, condition_words
from compactlens_inspector.style.numbers import group_digits, num
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.style.wording import part_words


def checked_triggers(result: CompactionResult) -> list[str]:
    """The triggers that were checked and did not fire, each with the values it saw
    (``more than 60,000 tokens``, seen: 23,561 tokens), without repeats."""
    out: list[str] = []
    for e in result.events:
        if e.event != "skipped" or not e.trigger or e.trigger == "(none)":
            continue
        values = ", ".join(f"{num(v)} {k.replace('_', ' ')}" for k, v in e.trigger_values.items())
        line = f"*{md_escape(condition_words(e.trigger))}*" + (
            f" (seen: {values})" if values else ""
        )
        if line not in out:
            out.append(line)
    return out


#: The head of "In plain words" for a run that met its target: the verdict above it is
#: the judge of its costs (a bare "The target was met." read as "all good").
MET_HEAD = "The target was met; the verdict above names its costs, if any."


def with_tokens(label: str, tokens: str) -> str:
    """``label`` with its token count in parentheses, in the label's own when it ends with
    one: "not a tool call (the tool-call stage cannot touch it; 1,205 tokens)", not two
    pairs of parentheses in a row."""
    if label.endswith(")"):
        return f"{label[:-1]}; {tokens} tokens)"
    return f"{label} ({tokens} tokens)"


def in_words(
    status: str,
    reason: str | None,
    after: int,
    target: int | None,
    parts: list[BudgetPart],
) -> str:
    """The outcome as one paragraph: what happened, then what the remaining tokens are."""
    if status == "unchanged" and target is not None and after > target:
        head = (
            f"No trigger fired, so nothing was compacted: the history is {num(after)} tokens, "
            f"{num(after - target)} over the target of {num(target)}."
        )
    elif status == "unchanged":
        head = "No trigger fired and the history is within the target."
    else:
        head = (
            group_digits(reason)
            if reason
            else (MET_HEAD if status != "cannot-fit" else "The target was missed.")
        )
    if not parts:
        return head
    # The compaction's own summaries are not what "cannot be removed": their size is a
    # setting of the summarizing stage.
    written = sum(p.tokens for p in parts if p.label == SUMMARIES)
    fixed = [p for p in parts if p.label != SUMMARIES]
    biggest = sorted(fixed, key=lambda p: p.tokens, reverse=True)[:3]
    shares = ", ".join(with_tokens(part_words(p.label), num(p.tokens)) for p in biggest)
    summaries = (
        f" The summaries the compaction wrote add {num(written)} tokens; they are not fixed: "
        "a lower “summary length cap” (a setting of the summarizing stage) shortens them."
        if written
        else ""
    )
    if target is not None and status == "cannot-fit":
        total = sum(p.tokens for p in fixed)
        largest = f"; the largest parts are {shares}" if shares else ""
        return (
            f"{head.rstrip('.')}. What the stages cannot remove adds up to {num(total)} "
            f"tokens against a target of {num(target)}{largest}.{summaries}"
        )
    if not shares:
        return f"{head}{summaries}"
    return f"{head} The largest parts of what is left: {shares}.{summaries}"


__all__ = ["MET_HEAD", "checked_triggers", "in_words", "with_tokens"]
