"""Story mode: a guided walk (next / back) from the problem to the fix, on the bundled
samples, offline. Every step is a deep link: ``story?step=N``."""

from __future__ import annotations

import streamlit as st

from compactlens.analysis import FACT_DEFINITION
from compactlens_inspector import state
from compactlens_inspector.components import badges
from compactlens_inspector.components.context_gauge import show_gauge
from compactlens_inspector.components.tables import table
from compactlens_inspector.components.verdict_bar import verdict_bar
from compactlens_inspector.lab.config import LabConfig
from compactlens_inspector.lab.presets import preset
from compactlens_inspector.pages._common import header, page
from compactlens_inspector.style.numbers import group_digits, money, num, share
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.style.theme import DECISIONS, ROLES
from compactlens_inspector.views.story import (
    CANNOT_FIT_SAMPLE,
    STEPS,
    STORY_SAMPLE,
    Story,
    StrategyRun,
    step_number,
)

QP_STEP = "step"
PICK = "story_pick"


def _go(n: int) -> None:
    st.query_params[QP_STEP] = str(step_number(n))


def _jump() -> None:
    _go(int(st.session_state.get("story_step") or 1))


def _stepper(n: int) -> None:
    st.session_state["story_step"] = n
    st.segmented_control(
        "Step",
        [i + 1 for i in range(len(STEPS))],
        format_func=lambda i: f"{i}. {STEPS[i - 1].title}",
        key="story_step",
        required=True,
        on_change=_jump,
        label_visibility="collapsed",
    )


def _nav(n: int) -> None:
    back, _, nxt = st.columns([1, 4, 1])
    with back:
        st.button(
            "Back",
            key="story_back",
            icon=":material/arrow_back:",
            disabled=n <= 1,
            on_click=_go,
            args=(n - 1,),
            width="stretch",
        )
    if n < len(STEPS):
        with nxt:
            st.button(
                "Next",
                key="story_next",
                icon=":material/arrow_forward:",
                type="primary",
                on_click=_go,
                args=(n + 1,),
                width="stretch",
            )


def _problem(story: Story) -> None:
    ix = state.sample_index(STORY_SAMPLE)
    assert ix is not None
    index = ix[0]
    cols = st.columns(3)
    cols[0].metric("History", f"{num(story.total_tokens)} tokens", border=True)
    cols[1].metric("Budget", f"{num(story.budget)} tokens", border=True)
    over = story.total_tokens - story.budget
    cols[2].metric("Over by", f"{num(max(0, over))} tokens", border=True)
    running, total = [], 0
    for n in index.message_tokens:
        total += n
        running.append(total)
    st.line_chart(
        {"history so far": running, "budget": [story.budget] * len(running)},
        x_label="message",
        y_label="tokens",
        color=[DECISIONS["excluded"].fill, ROLES["user"].fill],
        height=240,
    )
    show_gauge(index, None, preset("reference", story.budget), key="story_gauge_before")


def _strategy_card(run: StrategyRun) -> None:
    """One strategy as its verdict reads: headline, tokens after, groups by decision."""
    v = run.verdict
    n = v.numbers
    with st.container(border=True, key=f"story_card_{run.key}"):
        st.markdown(f"**{run.title}** {badges.verdict(v.headline, v.level)}")
        st.caption(run.what)
        st.metric("Tokens after", num(n.tokens_after))
        groups = n.groups or {}
        st.markdown(
            " · ".join(
                # the verdict's word for the decision, in the decision's colour
                f"{badges.badge(label, badges.DECISION_BADGE.get(action, 'gray'))} "
                f"{num(groups.get(label, 0))}"
                for action, label in (
                    ("excluded", "dropped"),
                    ("collapsed", "collapsed"),
                    ("summarized", "summarized"),
                )
            )
        )


def _strategies(story: Story) -> None:
    for col, run in zip(st.columns(len(story.runs)), story.runs, strict=True):
        with col:
            _strategy_card(run)
    titles = {r.key: r.title for r in story.runs}
    state.widget(PICK, story.runs[-1].key)
    key = st.segmented_control(
        "Context after", list(titles), format_func=lambda k: titles[k], key=PICK, required=True
    )
    run = next((r for r in story.runs if r.key == key), story.runs[-1])
    ix = state.sample_index(STORY_SAMPLE)
    assert ix is not None
    show_gauge(ix[0], run.result, run.config, key="story_gauge_after")


def _lost(story: Story) -> None:
    table(
        [
            {
                "strategy": r.title,
                "fact recall": r.verdict.numbers.recall_text,
                "tokens after": r.verdict.numbers.tokens_after,
                "verdict": r.verdict.headline,
            }
            for r in story.runs
        ],
        hide_index=True,
        key="story_lost_table",
    )
    st.caption(md_escape(FACT_DEFINITION))
    worst = min(story.runs, key=lambda r: _share(r))
    st.markdown(
        f"Facts lost by **{md_escape(worst.title)}**, the run that kept the fewest "
        "(shown as plain text):"
    )
    table(
        [{"kind": k, "value": v} for k, v in worst.lost_examples],
        hide_index=True,
        key="story_lost_examples",
    )
    if worst.minor_lost:
        st.caption(
            f"Not counted as facts: {num(worst.minor_lost)} timestamps, hashes or redaction "
            "placeholders it also dropped (kept apart so they do not drive the recall)."
        )
    st.caption("Tool-result collapse keeps almost every fact but may not reach the budget.")


def _share(run: StrategyRun) -> float:
    recall = run.verdict.numbers.fact_recall
    return 1.0 if recall is None else recall


def _cost(story: Story) -> None:
    def usd(x: float | None) -> str:
        return "—" if x is None else money(x)

    table(
        [
            {
                "strategy": r.title,
                "prompt cache kept": share(r.cache_kept),
                "next 10 turns, no compaction": usd(r.cost_without),
                "next 10 turns, compacted": usd(r.cost_with),
                "pays off after": "—" if r.break_even_turn is None else f"turn {r.break_even_turn}",
            }
            for r in story.runs
        ],
        hide_index=True,
        key="story_cost_table",
    )
    st.caption(
        "Prompt cache kept: the share of the old request that is still a cached prefix "
        "(a change near the start of the history leaves little). Prices are the Analysis "
        "page's defaults; the compacted cost includes writing the new history once."
    )


def _fix(story: Story) -> None:
    fix = story.fix
    if fix is None:
        st.info(f"The {CANNOT_FIT_SAMPLE} sample is not bundled here.", icon=":material/info:")
        return
    verdict_bar(fix.verdict, key="story_fix_verdict")
    cols = st.columns(2)
    cols[0].metric("History", f"{num(fix.tokens)} tokens", border=True)
    cols[1].metric("Target", f"{num(fix.target)} tokens", border=True)
    st.markdown(
        f"On this configuration (one sliding window at {num(fix.target)} tokens, not the "
        f"Lab's default pipeline) the fix search re-ran **{num(fix.tried)}** changes, as the "
        "Cannot-fit debugger does when you open it below. The first fixes it lists, each "
        "judged as the run it gives once applied:"
    )
    for row in fix.fixes:
        mark = badges.badge(row.badge, "orange" if row.badge == "costly" else "red")
        st.markdown(
            f"{row.rank}. {md_escape(group_digits(row.title))}: **{md_escape(row.headline)}**, "
            f"{md_escape(row.summary)}" + (f" {mark}" if row.badge else "")
        )
    if st.button(
        "Open it in the Cannot-fit debugger",
        key="story_open_debugger",
        icon=":material/troubleshoot:",
        type="primary",
    ):
        _open_debugger(fix.config)


def _open_debugger(config: LabConfig) -> None:
    """Make the cannot-fit sample the active transcript with the story's configuration,
    then go to the debugger (same session: the fixes can be applied there)."""
    if state.load_sample(CANNOT_FIT_SAMPLE) is None:
        return
    state.set_lab(config)
    state.forget("sb_")
    st.switch_page("compactlens_inspector/pages/cannot_fit.py")


SHOW = (_problem, _strategies, _lost, _cost, _fix)


def render() -> None:
    header("Story mode", "From the problem to the fix in five steps, on a bundled transcript.")
    story = state.story(state.analysis_settings())  # the Analysis page's window too
    if story is None or not story.runs:
        st.info(f"The {STORY_SAMPLE} sample is not bundled here.", icon=":material/info:")
        return
    n = step_number(st.query_params.get(QP_STEP, "1"))
    _stepper(n)
    step = STEPS[n - 1]
    with st.container(key=f"story_step_{n}"):
        st.subheader(f"{n}. {step.title}", anchor=False)
        st.markdown(step.lede)
        SHOW[n - 1](story)
    _nav(n)


if __name__ == "__main__":
    page(render, "story")
