"""What the cannot-fit debugger lists: plain data for its fix section (no Streamlit).

The run's verdict decides what the section is: nothing to fix (the run fits and is safe),
optional improvements (it fits, with costs: only fixes that fail fewer checks), or the
ranked fixes (it does not fit). Each fix reads as the verdict of the run it gives once
applied (:attr:`compactlens.analysis.Fix.verdict`), so its numbers are the ones the page
shows after Apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from compactlens.analysis import (
    Fix,
    ShownFixes,
    Verdict,
    destructive,
    fix_mark,
    keeps_conversation,
    shown_fixes,
)

Section = Literal["nothing", "improvements", "fixes"]

#: The heading of each section.
HEADINGS: dict[Section, str] = {
    "nothing": "Nothing to fix",
    "improvements": "Optional improvements",
    "fixes": "Fixes, ranked",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class FixRow:
    """One listed fix: its rank (from 1), its changes in plain words, the headline and
    summary of its verdict, the checks it fails, whether it is the primary choice, and
    whether it is the costly choice offered beside raising the target."""

    rank: int
    fix: Fix
    title: str
    headline: str
    summary: str
    costs: tuple[str, ...]
    primary: bool
    raises_target: bool
    choice: bool = False

    @property
    def badge(self) -> str:
        """The library's mark of the fix (:func:`compactlens.analysis.fix_mark`, the same
        in the notebook and on the command line): ``destructive``, ``costly`` (its run
        fits with costs) or empty."""
        return fix_mark(self.fix)


#: The headline of a fix that was not judged (with a model summarizer, judging would call it).
NOT_JUDGED = "Fits (not judged: that would call the model)"


def _tokens(fix: Fix) -> str:
    target = f" (target {fix.target_tokens:,})" if fix.target_tokens is not None else ""
    return f"{fix.tokens_after:,} tokens{target}"


def section(current: Verdict) -> Section:
    """Which section the debugger shows for the run ``current`` judges."""
    if current.level == "safe":
        return "nothing"
    return "improvements" if current.level == "costs" else "fixes"


def fix_rows(
    fixes: Sequence[Fix], current: Verdict, *, include_destructive: bool = False
) -> list[FixRow]:
    """The fixes to list for ``current`` (:func:`shown_fixes` of judged fixes: none when
    it is safe, only improvements when it fits, every fix that fits otherwise; without
    ``include_destructive``, not the destructive ones: the rule of
    :func:`compactlens.analysis.shown_fixes`). The first listed fix that is not
    destructive is the primary one."""
    found = shown_fixes(fixes, current, include_destructive=include_destructive)
    rows: list[FixRow] = []
    primary_given = False
    for n, fix in enumerate(found.fixes):
        v = fix.verdict
        primary = not destructive(fix) and not primary_given
        primary_given = primary_given or primary
        rows.append(
            FixRow(
                rank=n + 1,
                fix=fix,
                title=fix.plain_summary[:1].upper() + fix.plain_summary[1:],
                headline=v.headline if v is not None else NOT_JUDGED,
                summary=v.summary if v is not None else _tokens(fix),
                costs=tuple(r.text for r in v.costs) if v is not None else fix.warnings,
                primary=primary,
                raises_target=fix.changes_target,
                choice=fix is found.costly_choice,
            )
        )
    return rows


def nothing_to_fix(current: Verdict) -> str:
    """The sentence for a run that needs no fix."""
    return f"Nothing to fix: the run fits and every check passed ({current.summary})."


def no_improvement(current: Verdict) -> str:
    """The sentence for a run that fits with costs when no single change the search
    re-ran fails fewer checks: the verdict's own next step is what is left to try."""
    return (
        "No single change the search re-ran removes one of the costs above without adding "
        f"another. The verdict's next step: {current.next_step}"
    )


def stage_fell_short(missed: Sequence[tuple[str, str]]) -> str:
    """Which stages fell short, in a sentence: ``missed`` holds (stage label, event) with
    event ``target-missed`` or ``failed``; "Tool-result collapse and Summarization each
    missed their own target; Clamp failed"."""
    parts = []
    for event, one, many in (
        ("target-missed", "missed its own target", "each missed their own target"),
        ("failed", "failed", "failed"),
    ):
        names = list(dict.fromkeys(name for name, e in missed if e == event))
        if names:
            listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
            parts.append(f"{listed} {one if len(names) == 1 else many}")
    return "; ".join(parts)


def hidden_note(count: int) -> str:
    """How many destructive fixes the toggle hides, in words ("" for none)."""
    if count <= 0:
        return ""
    if count == 1:
        return (
            "1 destructive fix is hidden (it drops the latest request or most of the "
            "conversation's facts); the toggle above shows it."
        )
    return (
        f"{count:,} destructive fixes are hidden (they drop the latest request or most of "
        "the conversation's facts); the toggle above shows them."
    )


__all__ = [
    "HEADINGS",
    "NOT_JUDGED",
    "FixRow",
    "Section",
    "ShownFixes",
    "destructive",
    "fix_mark",
    "fix_rows",
    "hidden_note",
    "keeps_conversation",
    "no_improvement",
    "nothing_to_fix",
    "section",
    "shown_fixes",
    "stage_fell_short",
]
