"""Diff: original vs compacted side by side at group level (what was dropped, collapsed,
summarized, inserted and where), and on demand a text diff of a replaced range against
its summary."""

from __future__ import annotations

import math

import streamlit as st

from compactlens.analysis import group_counts
from compactlens_inspector import state
from compactlens_inspector.components import badges, budget_bar
from compactlens_inspector.components.diff_view import side_by_side, text_diff
from compactlens_inspector.components.metric_row import Card, metric_row
from compactlens_inspector.components.sidebar import analysis_sidebar
from compactlens_inspector.components.verdict_bar import page_verdict
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.wording import decision_term, plural
from compactlens_inspector.views.run import decision_views, diff_rows, summary_ranges

PAGE_SIZE = 30
#: Wide enough for "Groups summarized" without cutting it (six cards fit at 1,440 px).
GROUP_CARD_WIDTH = 155
GROUPS_NOTE = (
    "Groups by decision, counted as the verdict counts them: kept means kept as it was; "
    "dropped means removed; collapsed means "
    + decision_term("collapsed").explanation[:1].lower()
    + decision_term("collapsed").explanation[1:-1]
    + "; summarized means replaced by a summary; inserted counts the summaries the "
    "compaction added."
)


def render() -> None:
    header("Diff", "Original and compacted, group by group.")
    current, _config = analysis_sidebar()
    if current is None:
        need_transcript()
        return
    outcome = state.run()
    ix = state.index()
    if outcome is None or ix is None:
        return
    if outcome.result is None:
        budget_bar.status_line(outcome)
        return
    r = outcome.result
    judged = page_verdict(outcome, page="diff")
    # The groups by decision are the verdict's (one definition: "kept" is kept as it was;
    # an inserted summary is counted apart), as the Lab and the bar above count them.
    # A compact() run's verdict counts no groups; its groups here are those of its plan.
    groups = (judged.numbers.groups if judged is not None else None) or group_counts(r)
    cards = [Card(f"Groups {label}", num(n)) for label, n in groups.items()]
    cards.append(
        Card("Tokens after", num(r.tokens_after), f"{num(r.tokens_before)} before", width=140)
    )
    metric_row(cards, key="diff_counts", width=GROUP_CARD_WIDTH)
    st.caption(GROUPS_NOTE)
    ranges = summary_ranges(r, ix)
    if ranges:
        st.subheader("Summaries", anchor=False)
        labels = []
        for n, rng in enumerate(ranges, start=1):
            span = rng.message_range
            where = f"messages {span[0]}–{span[1]}" if span else "no messages"
            labels.append(f"Summary {n}: {num(len(rng.replaced))} groups ({where})")
        pick = st.selectbox(
            "Replaced range",
            range(len(ranges)),
            format_func=lambda i: labels[i],
            key="diff_summary",
        )
        rng = ranges[int(pick or 0)]
        st.markdown(f"{badges.decision('inserted')} the summary text:")
        long = rng.summary_text.count("\n") > 16
        if long:
            st.code(rng.summary_text, language=None, wrap_lines=True, height=360)
        else:
            st.code(rng.summary_text, language=None, wrap_lines=True)
        if st.toggle(
            "Show the text diff of the replaced range against its summary", key="diff_show"
        ):
            text_diff(rng)
    st.subheader("Groups", anchor=False)
    state.widget("diff_changed_only", True)
    changed_only = st.toggle("Only changed groups", key="diff_changed_only")
    views = decision_views(r)
    if changed_only:
        views = [v for v in views if v.decision.action != "kept"]
    if not views:
        st.info("Nothing changed: every group was kept.", icon=":material/check:")
        return
    rows = diff_rows(views)
    pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
    current_page = int(st.session_state.get("diff_page", 1) or 1)
    if current_page > pages:
        st.session_state["diff_page"] = 1
        current_page = 1
    start = (current_page - 1) * PAGE_SIZE
    last = min(start + PAGE_SIZE, len(rows))
    st.caption(
        f"{plural(len(rows), 'row')} for {plural(len(views), 'group')} (a run of identical "
        f"decisions is one row) · showing {num(start + 1)}–{num(last)}"
    )
    side_by_side(ix, r, rows[start : start + PAGE_SIZE])
    if pages > 1:
        st.pagination(pages, key="diff_page")


if __name__ == "__main__":
    page(render, "diff")
