"""Cannot-fit debugger: why the target was not reached, as a budget waterfall (what each
protected part still costs against the target), the reason in plain words, the smallest
target that fits, and single changes that fit, found by re-running."""

from __future__ import annotations

import streamlit as st

from compactlens_inspector import figures, state
from compactlens_inspector.components import budget_bar
from compactlens_inspector.components.sidebar import analysis_sidebar
from compactlens_inspector.config import apply_suggestion
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.runs import (
    BudgetPart,
    budget_parts,
    protection_label,
    unique_protections,
)
from compactlens_inspector.safety import md_escape


def _apply(parameter: str, value: object) -> None:
    new = apply_suggestion(state.lab(), parameter, value)
    if new is not None:
        state.set_lab(new)
        state.forget("sb_")


def _in_words(
    status: str, reason: str | None, after: int, target: int | None, parts: list[BudgetPart]
) -> str:
    """The outcome as one paragraph: what happened, then what the remaining tokens are."""
    head = reason or ("The target was met." if status != "cannot-fit" else "The target was missed.")
    if not parts:
        return head
    biggest = sorted(parts, key=lambda p: p.tokens, reverse=True)[:3]
    shares = ", ".join(f"{p.label} ({p.tokens:,} tokens)" for p in biggest)
    if target is not None and status == "cannot-fit":
        total = sum(p.tokens for p in parts)
        return (
            f"{head}. What cannot be removed adds up to {total:,} tokens against a target of "
            f"{target:,}; the largest parts are {shares}."
        )
    return f"{head} The largest parts of what is left: {shares}."


def render() -> None:
    header(
        "Cannot-fit debugger",
        "Why the target was not reached, and the smallest change that makes it fit.",
    )
    current, config = analysis_sidebar()
    if current is None:
        need_transcript()
        return
    settings = state.summarizer_settings()
    ix = state.index()
    find = settings.kind == "extractive" or bool(st.session_state.get("cf_fixes_requested"))
    outcome = state.run(explain=find)
    if outcome is None or ix is None:
        return
    if outcome.result is None:
        budget_bar.status_line(outcome)
        return
    r = outcome.result
    missed = [e for e in r.events if e.event in ("target-missed", "failed")]
    if r.status != "cannot-fit" and not missed:
        st.success(
            f"**This configuration fits** ({r.status}): nothing to debug. The waterfall below "
            "still shows what the compacted history is made of.",
            icon=":material/check_circle:",
        )
    else:
        st.error(
            f"**{r.status}**: {md_escape(r.reason or r.explanation.summary)}",
            icon=":material/block:",
        )
        if missed and r.status != "cannot-fit":
            st.caption(
                "A stage missed its own target, but a later stage reached the overall target."
            )
    expl = r.explanation
    target = config.target_tokens if config.target_tokens is not None else expl.target_tokens
    parts = budget_parts(outcome, ix)
    cols = st.columns(4)
    if config.mode == "compact" and r.status == "cannot-fit" and parts:
        # compact() leaves the history as it is; what matters is its best candidate.
        best = sum(p.tokens for p in parts)
        cols[0].metric(
            "Candidate tokens",
            f"{best:,}",
            border=True,
            help="What stays besides the summary text: leading system messages, protected "
            "messages and the summary wrapper.",
        )
    else:
        best = r.tokens_after
        cols[0].metric("Tokens after", f"{best:,}", border=True)
    cols[1].metric("Target", f"{target:,}" if target is not None else "—", border=True)
    over = best - target if target is not None else None
    cols[2].metric(
        "Over the target" if over is not None and over > 0 else "Room under the target",
        f"{abs(over):,}" if over is not None else "—",
        border=True,
    )
    cols[3].metric(
        "Smallest target that fits",
        f"{expl.smallest_target:,}" if expl.smallest_target is not None else "—",
        border=True,
        help="The token count of the best the current parameters can do.",
    )
    title = (
        "compact(): what stays besides the summary, against the target"
        if config.mode == "compact"
        else "What the compacted history still costs, against the target"
    )
    st.plotly_chart(
        figures.budget_waterfall(parts, target, title=title),
        key="cf_waterfall",
        config={"displaylogo": False},
    )
    st.subheader("In plain words", anchor=False)
    st.markdown(md_escape(_in_words(r.status, r.reason, r.tokens_after, target, parts)))
    if outcome.boundary is not None:
        for line in outcome.boundary.explain():
            st.markdown(f"- {md_escape(line)}")
    if parts:
        st.dataframe(
            [
                {"part": p.label, "tokens": p.tokens, "groups": len(p.group_ids), "why": p.detail}
                for p in parts
            ],
            hide_index=True,
            width="stretch",
            key="cf_parts",
        )
    if expl.protected:
        with st.expander("Protected content as the strategies report it"):
            st.dataframe(
                [
                    {
                        "protection": protection_label(p.why),
                        "groups": len(p.group_ids),
                        "tokens": p.tokens,
                        "detail": p.detail,
                    }
                    for p in unique_protections(expl.protected)
                ],
                hide_index=True,
                width="stretch",
                key="cf_protected",
            )
    st.subheader("Single changes that fit", anchor=False)
    if not find:
        st.info(
            "Finding fixes re-runs the configuration, which calls the model again for "
            "summarization stages.",
            icon=":material/info:",
        )
        st.button(
            "Find fixes by re-running",
            key="cf_find_fixes",
            on_click=lambda: st.session_state.update({"cf_fixes_requested": True}),
        )
    suggestions = list(expl.suggestions)
    if not suggestions:
        st.caption("No single-parameter change was found to fit (or nothing needs fixing).")
    for n, s in enumerate(suggestions):
        with st.container(border=True):
            c = st.columns([6, 1], vertical_alignment="center")
            c[0].markdown(f":material/lightbulb: {md_escape(s.change)}")
            if apply_suggestion(config, s.parameter, s.value) is not None:
                c[1].button(
                    "Apply",
                    key=f"cf_apply_{n}",
                    on_click=_apply,
                    args=(s.parameter, s.value),
                    width="stretch",
                )


if __name__ == "__main__":
    page(render, "cannot_fit")
