"""Original vs compacted, side by side at group level, and a text diff of one summary."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import streamlit as st

from compactlens import CompactionResult, MessageIndex
from compactlens.engine import GroupDecision
from compactlens_inspector.components import badges
from compactlens_inspector.components.messages import call_names, group_header, show_message
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.safety import clip, md_escape
from compactlens_inspector.style.wording import decision_words, plural, reason_words, stage_words
from compactlens_inspector.views.run import DiffRow, SummaryRange

#: Characters of each text shown in a row (a fold holds the rest).
PREVIEW = 360
DIFF_LIMIT = 12000

_RIGHT = {
    "excluded": "dropped",
    "summarized": "folded into the summary above",
}
#: Group headers listed in a folded row's fold, at most.
FOLD_LIST = 60


def _originals(index: MessageIndex, indices: Sequence[int], names: dict[str, str]) -> None:
    """The original messages ``indices`` of ``index``, each cut to :data:`PREVIEW`."""
    for k in indices:
        show_message(index.messages[k], k, index.message_tokens[k], call_names=names, limit=PREVIEW)


def _decision(d: GroupDecision) -> None:
    """The middle cell: the decision, its reason and the stage that made it."""
    st.markdown(badges.decision(d.action))
    st.caption(
        md_escape(reason_words(d.reason))
        + (f" · by {md_escape(stage_words(d.strategy))}" if d.strategy else "")
    )


def _folded_row(
    index: MessageIndex, result: CompactionResult, row: DiffRow, names: dict[str, str]
) -> None:
    """A run of identical decisions as one row: the groups' originals in a fold on the
    left, what they became (kept verbatim, each collapsed note, or nothing) on the right."""
    d = row.decision
    n = len(row.views)
    span = row.message_span
    where = f" · messages #{span[0]}–{span[1]}" if span else ""
    left, mid, right = st.columns([5, 2, 5])
    with left:
        st.markdown(
            f"{badges.tokens(row.tokens_before)} **{plural(n, 'group')}** "
            f"(groups {row.views[0].decision.group_id}–{row.views[-1].decision.group_id}{where})"
        )
        with st.expander(f"Show the {plural(n, 'group')}"):
            for v in row.views[:FOLD_LIST]:
                if v.decision.group_id is not None:
                    st.caption(group_header(index, v.decision.group_id))
                    _originals(index, v.decision.message_indices, names)  # as unfolded
            if n > FOLD_LIST:
                st.caption(f"…and {plural(n - FOLD_LIST, 'more group')}.")
    with mid:
        _decision(d)
    with right:
        if d.action == "kept":
            st.caption(f"{plural(n, 'group')} kept verbatim")
        elif d.action in _RIGHT:
            st.caption(f"{plural(n, 'group')} {_RIGHT[d.action]}")
        else:
            st.markdown(
                f"{badges.tokens(row.tokens_after)} **{plural(n, 'group')} "
                f"{md_escape(decision_words(d.action))}**"
            )
            with st.expander(f"Show what the {plural(n, 'group')} became"):
                for v in row.views[:FOLD_LIST]:
                    for k in v.projection:
                        show_message(
                            result.projection[k], None, None, call_names=names, limit=PREVIEW
                        )
                if n > FOLD_LIST:
                    st.caption(f"…and {plural(n - FOLD_LIST, 'more group')}.")


def side_by_side(index: MessageIndex, result: CompactionResult, rows: Sequence[DiffRow]) -> None:
    """One row per decision: the original group on the left, what it became on the right,
    both as conversation messages (the same rendering as the Transcript page). A run of
    identical decisions is one folded row."""
    names = call_names(index)
    head = st.columns([5, 2, 5])
    head[0].markdown("**Original**")
    head[1].markdown("**Decision**")
    head[2].markdown("**Compacted**")
    for row in rows:
        if row.folded:
            with st.container(border=True):
                _folded_row(index, result, row, names)
            continue
        view = row.views[0]
        d = view.decision
        with st.container(border=True):
            left, mid, right = st.columns([5, 2, 5])
            with left:
                if d.group_id is None:
                    st.caption("(new: not in the original)")
                else:
                    span = (
                        f"#{d.message_indices[0]}"
                        if len(d.message_indices) == 1
                        else f"#{d.message_indices[0]}–{d.message_indices[-1]}"
                    )
                    st.markdown(
                        f"{badges.kind(d.kind)} {badges.tokens(d.tokens_before)} "
                        f"group {d.group_id} · {span}"
                    )
                    _originals(index, d.message_indices, names)
            with mid:
                _decision(d)
            with right:
                if d.action == "kept":
                    st.caption("kept verbatim")
                elif d.action in _RIGHT:
                    st.caption(_RIGHT[d.action])
                else:
                    st.markdown(f"{badges.kind(d.kind)} {badges.tokens(d.tokens_after)}")
                    for k in view.projection:
                        show_message(
                            result.projection[k], None, None, call_names=names, limit=PREVIEW
                        )


def text_diff(rng: SummaryRange) -> None:
    """A unified diff of the replaced range's text against its summary, cut when long."""
    original = rng.original_text.splitlines()
    summary = rng.summary_text.splitlines()
    span = rng.message_range
    where = f"messages {span[0]}–{span[1]}" if span else "the replaced range"
    diff = "\n".join(
        difflib.unified_diff(original, summary, fromfile=where, tofile="summary", lineterm="", n=1)
    )
    shown, cut = clip(diff, DIFF_LIMIT)
    st.code(shown, language="diff", wrap_lines=True)
    if cut:
        with st.expander(f"Show the whole diff ({num(len(diff))} characters)"):
            st.code(diff, language="diff", wrap_lines=True)
