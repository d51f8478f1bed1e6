"""Metric cards and the budget bar of a run."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

import compactlens.viz as figures
from compactlens import CompactionResult
from compactlens.viz import groups_kept
from compactlens_inspector import state
from compactlens_inspector.components import badges
from compactlens_inspector.components.metric_row import Card, metric_row
from compactlens_inspector.lab.config import LabConfig
from compactlens_inspector.lab.runs import RunOutcome
from compactlens_inspector.style.numbers import group_digits, num
from compactlens_inspector.style.safety import md_escape

#: Wide enough for a value like "6,435,832" (the metric's font is large).
CARD_WIDTH = 180
#: The saving under "Tokens after" (like "-6,307,998 (-98%)") needs more.
DELTA_CARD_WIDTH = 220

STATUS_ICON = {
    "unchanged": ":material/remove:",
    "compacted": ":material/check_circle:",
    "cannot-fit": ":material/block:",
    "error": ":material/error:",
}


def metric_cards(
    result: CompactionResult,
    config: LabConfig,
    *,
    key: str,
    groups: Mapping[str, int] | None = None,
) -> None:
    """Tokens before / after (with the saving), messages, groups kept and the target.

    ``groups``: the verdict's groups by decision (then "Groups kept" counts what the
    verdict calls kept, and its help names the rest). Cards of fixed widths that wrap on a
    narrow window (equal columns cut a number like 6,435,832 at 1,024 px).
    """
    saved = result.tokens_saved
    pct = f"{-saved / result.tokens_before:.0%}" if result.tokens_before else "0%"
    target = config.target_tokens
    metric_row(
        [
            Card("Tokens before", num(result.tokens_before)),
            Card(
                "Tokens after",
                num(result.tokens_after),
                delta=f"{num(-saved)} ({pct})" if saved else None,
                delta_color="inverse",
                width=DELTA_CARD_WIDTH,
            ),
            Card(
                "Messages after",
                num(result.messages_after),
                help=f"{num(result.messages_before)} before",
            ),
            _groups_card(result, groups),
            Card("Target", num(target) if target is not None else "—"),
        ],
        key=key,
        width=CARD_WIDTH,
    )


def _groups_card(result: CompactionResult, groups: Mapping[str, int] | None) -> Card:
    if groups is None:
        return Card("Groups kept", num(groups_kept(result)))
    rest = [f"{num(n)} {label}" for label, n in groups.items() if label != "kept" and n]
    detail = ", ".join(rest) if rest else "nothing else"
    return Card("Groups kept", num(groups.get("kept", 0)), help=f"Kept as they are; {detail}.")


def status_text(result: CompactionResult) -> str:
    """The status in plain words."""
    if result.status == "unchanged":
        return "No trigger fired: the transcript was left as it is."
    if result.status == "compacted":
        return f"Target met: {num(result.tokens_before)} → {num(result.tokens_after)} tokens."
    return group_digits(result.reason or result.explanation.summary)


def status_line(outcome: RunOutcome) -> None:
    """The status with its reason in words."""
    r = outcome.result
    if r is None:
        st.error(
            f"**Configuration error:** {md_escape(outcome.error or '')}", icon=":material/error:"
        )
        return
    text = f"{badges.status(r.status)} {md_escape(status_text(r))}"
    if r.status == "cannot-fit":
        st.error(text, icon=STATUS_ICON["cannot-fit"])
    elif r.status == "compacted":
        st.success(text, icon=STATUS_ICON["compacted"])
    else:
        st.info(text, icon=STATUS_ICON["unchanged"])


def budget_bar(outcome: RunOutcome, *, key: str) -> None:
    r = outcome.result
    if r is None:
        return
    cfg = outcome.config
    # The "after" bar takes the verdict's colour (green only for "Fits and safe").
    judged = state.run_verdict(outcome)
    fig = figures.budget_bar(
        r.tokens_before,
        r.tokens_after,
        cfg.target_tokens,
        cfg.trigger_tokens,
        level=judged.level if judged is not None else None,
    )
    st.plotly_chart(fig, key=key, config={"displaylogo": False})
