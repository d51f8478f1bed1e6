"""The ``/context``-style gauge: where the budget goes, before and after a compaction."""

from __future__ import annotations

import streamlit as st

from compactlens import CompactionResult, MessageIndex
from compactlens.analysis import budget_breakdown
from compactlens_inspector.lab.config import LabConfig
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.views.context import context_gauge, gauge_html


def what_still_costs(result: CompactionResult, index: MessageIndex, top: int = 3) -> str:
    """The largest parts of the compacted history by the reason they stayed (escaped)."""
    parts = sorted(budget_breakdown(result, index), key=lambda p: -p.tokens)[:top]
    return " · ".join(f"{md_escape(p.label)} {num(p.tokens)}" for p in parts if p.tokens)


def show_gauge(
    index: MessageIndex,
    result: CompactionResult | None,
    config: LabConfig,
    *,
    key: str,
) -> None:
    """The gauge in a bordered box titled "Context"; with a run, what still costs most."""
    gauge = context_gauge(index, result, trigger=config.trigger_tokens, target=config.target_tokens)
    with st.container(border=True, key=key):
        st.markdown("**Context** · where the budget goes")
        st.html(gauge_html(gauge))
        if result is not None:
            costs = what_still_costs(result, index)
            if costs:
                st.caption(f"Still there after compaction, by reason: {costs}")
