"""The verdict bar: one run's verdict (:func:`compactlens.verdict`) as the page's headline.

Coloured by level (green: fits and safe, amber: fits with costs, red: does not fit), it
shows the headline, the run's status, the summary, one line per check that did not pass
(or why nothing was compacted) and the next step, all as the library words them (plain
text, escaped)."""

from __future__ import annotations

import streamlit as st

from compactlens.analysis import Verdict
from compactlens.analysis import VerdictLevel as Level
from compactlens_inspector.components import badges
from compactlens_inspector.style.safety import md_escape

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
    lines.append(f"**Next step:** {md_escape(v.next_step)}")
    return "\n\n".join(lines)


def verdict_bar(v: Verdict, *, key: str, why: str = "") -> None:
    """The verdict as one coloured alert in a keyed container (``key``); ``why``: what
    failed in the run (a summarizer error, say), shown as it is."""
    kind, icon = LEVEL_STYLE[v.level]
    alert = {"success": st.success, "warning": st.warning, "error": st.error}[kind]
    with st.container(key=key):
        alert(verdict_text(v, why), icon=icon)
