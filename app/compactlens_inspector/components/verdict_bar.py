"""The verdict bar: one run's verdict (:func:`compactlens.verdict`) as the page's headline.

Coloured by level (green: fits and safe, amber: fits with costs, red: does not fit), it
shows the headline, the run's status, the summary, one line per check that did not pass
(or why nothing was compacted) and the next step, all as the library words them (plain
text, escaped).

Every page that shows a run (Overview, Lab, Diff, Timeline, Analysis, the debugger, Story
mode) draws it with :func:`page_verdict`, in a container keyed ``verdict_<page>``: the
page frame (``streamlit_app.py``) makes those containers sticky, so the verdict stays in
view while the visitor scrolls or edits parameters."""

from __future__ import annotations

import streamlit as st

from compactlens.analysis import Verdict
from compactlens.analysis import VerdictLevel as Level
from compactlens_inspector import state
from compactlens_inspector.components import badges
from compactlens_inspector.components.analysis_summary import analysis_wanted
from compactlens_inspector.lab.runs import RunOutcome
from compactlens_inspector.style.safety import md_escape

#: The prefix of every verdict bar's container key (the page frame's CSS makes them sticky).
KEY_PREFIX = "verdict_"

#: The alert and icon of each level.
LEVEL_STYLE: dict[Level, tuple[str, str]] = {
    "safe": ("success", ":material/check_circle:"),
    "costs": ("warning", ":material/warning:"),
    "no-fit": ("error", ":material/block:"),
}


def unchanged(v: Verdict) -> bool:
    """Whether the run left the history as it was (then the bar says why: no trigger)."""
    return v.numbers.status == "unchanged"


def verdict_text(v: Verdict, why: str = "") -> str:
    """The bar's Markdown: headline and summary, the failed checks (and, for a run that
    changed nothing, why), the next step."""
    status = badges.badge(v.numbers.status, "gray")  # the run's own status
    lines = [f"**{md_escape(v.headline)}** {status} · {md_escape(v.summary)}"]
    shown = [r for r in v.reasons if r.level != "safe" or (r.code == "target" and unchanged(v))]
    costs = [f"- {md_escape(r.text)}" for r in shown]
    if costs:
        lines.append("\n".join(costs))
    if why:
        lines.append(f"**A stage failed:** {md_escape(why)}")
    label, step = v.next_step_parts
    lines.append(f"**{md_escape(label)}:** {md_escape(step)}")
    return "\n\n".join(lines)


def verdict_bar(v: Verdict, *, key: str, why: str = "") -> None:
    """The verdict as one coloured alert in a keyed container (``key``); ``why``: what
    failed in the run (a summarizer error, say), shown as it is."""
    kind, icon = LEVEL_STYLE[v.level]
    alert = {"success": st.success, "warning": st.warning, "error": st.error}[kind]
    with st.container(key=key):
        alert(verdict_text(v, why), icon=icon)


def page_verdict(outcome: RunOutcome | None, *, page: str, why: str = "") -> Verdict | None:
    """The verdict of ``outcome`` (the session's run of the lab configuration) as the
    page's sticky bar, judged as the Lab judges it (with the analysis when the Lab would
    analyze the run live), with the run's one next step (the debugger's,
    :func:`~compactlens_inspector.state.advised_verdict`); None (and nothing drawn)
    without a result."""
    if outcome is None or outcome.result is None:
        return None
    judged = state.advised_verdict(outcome, measured=analysis_wanted(outcome))
    if judged is not None:
        verdict_bar(judged, key=f"{KEY_PREFIX}{page}", why=why)
    return judged
