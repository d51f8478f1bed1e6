"""Sweep and compare: vary one parameter over a range and chart tokens after, groups kept
and status against it; run several configurations side by side on the same transcript."""

from __future__ import annotations

import streamlit as st

import compactlens.viz as figures
from compactlens.analysis import Verdict, group_counts
from compactlens_inspector import state
from compactlens_inspector.components import badges
from compactlens_inspector.components.analysis_summary import LIVE_ANALYSIS_MAX_MESSAGES
from compactlens_inspector.components.sidebar import analysis_sidebar
from compactlens_inspector.components.tables import table
from compactlens_inspector.lab.config import (
    PRESETS,
    config_title,
    get_path,
    preset,
    sweepable_parameters,
    with_value,
)
from compactlens_inspector.lab.runs import RunOutcome
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.style.numbers import group_digits, num, share
from compactlens_inspector.style.safety import md_escape, plot_text
from compactlens_inspector.views.run import sweep_plan, sweep_point, sweep_values

CURRENT = "current"


def _measure_recall() -> bool:
    """Whether to analyze every run for its fact recall: always on transcripts up to
    the lab's live-analysis limit, on request (a toggle) on longer ones."""
    ix = state.index()
    if ix is None:
        return False
    if ix.total_messages <= LIVE_ANALYSIS_MAX_MESSAGES:
        return True
    state.widget("sweep_recall", False)
    return st.toggle(
        "Measure fact recall",
        key="sweep_recall",
        help=f"Analyzing every run takes seconds on transcripts over "
        f"{num(LIVE_ANALYSIS_MAX_MESSAGES)} messages (this one has {num(ix.total_messages)}).",
    )


def _verdict(outcome: RunOutcome, measure: bool) -> Verdict | None:
    """A run's verdict, as every page judges it (with its analysis when measured)."""
    return state.run_verdict(outcome, measured=measure)


def _sweep() -> None:
    config = state.lab()
    params = sweepable_parameters(config)
    if not params:
        st.info("This configuration has no numeric parameter to sweep.", icon=":material/info:")
        return
    labels = dict(params)
    paths = [p for p, _ in params]
    if st.session_state.get("sweep_param") not in paths:
        st.session_state["sweep_param"] = paths[0]
        state.forget("sweep_from")
        state.forget("sweep_to")
    cols = st.columns([4, 2, 2, 2])
    path = cols[0].selectbox("Parameter", paths, format_func=lambda k: labels[k], key="sweep_param")
    value = get_path(config, str(path))
    base = int(value) if isinstance(value, int) else 1
    # Round ends (two significant digits): 1,100 to 8,600, not 1,075 to 8,600.
    state.widget("sweep_from", _round(max(1, base // 4)) if base > 8 else 0)
    state.widget("sweep_to", _round(max(base * 2, 8)))
    state.widget("sweep_steps", 12)
    lo = cols[1].number_input("From", min_value=0, key="sweep_from")
    hi = cols[2].number_input("To", min_value=0, key="sweep_to")
    steps = cols[3].number_input(
        "Runs (at most)",
        min_value=2,
        max_value=60,
        key="sweep_steps",
        help="The two ends, and round values between them (a step of 1, 2, 2.5 or 5 "
        "times a power of ten): fewer runs when no round step gives this many.",
    )
    values = [v for v in sweep_values(int(lo), int(hi), int(steps)) if v >= 0]
    st.caption(sweep_plan(values, int(steps)))
    settings = state.summarizer_settings()
    live = settings.kind == "extractive" or not config.uses_summarizer
    if not live and not st.button("Run the sweep (calls the model)", key="sweep_run"):
        st.info("Sweeping a summarization stage with a model runs it once per value.")
        return
    measure = _measure_recall()
    points = []
    verdicts: dict[int, Verdict | None] = {}
    whys: dict[int, str] = {}
    errors = 0
    with st.spinner(f"Running {num(len(values))} configurations…"):
        for v in values:
            try:
                variant = with_value(config, str(path), v)
            except ValueError as exc:
                errors += 1
                points.append(sweep_point(v, RunOutcome(config, None, error=str(exc))))
                continue
            outcome = state.run(variant)
            if outcome is not None:
                verdicts[v] = _verdict(outcome, measure)
                points.append(sweep_point(v, outcome, verdict=verdicts[v]))
                r = outcome.result
                if r is not None and r.status == "cannot-fit" and r.reason:
                    whys[v] = group_digits(r.reason)
    label = labels.get(str(path), str(path))
    st.plotly_chart(
        figures.sweep_chart(points, plot_text(label), target_tokens=config.target_tokens),
        key="sweep_chart",
        config={"displaylogo": False},
    )
    if len({p.target_tokens for p in points if p.target_tokens is not None}) > 1:
        st.caption(
            "The dotted line is the target each run had to reach: a run that does not fit "
            "missed the target of one of its stages (a stage's trigger is also its target, "
            f"so sweeping {md_escape(label)} moves it), not the pipeline's; *why* names it."
        )
    errors = any(p.error for p in points)
    rows = []
    for p in points:
        row = {
            "value": p.value,
            "status": p.status,
            "tokens after": p.tokens_after,
            "fact recall": None if p.recall is None else round(p.recall * 100),
            "target": p.target_tokens,
            "verdict": _headline(verdicts.get(p.value)),
            "groups kept": p.groups_kept,
            "messages after": p.messages_after,
        }
        if errors:
            row["error"] = p.error or ""
        rows.append(row)
    table(
        rows,
        hide_index=True,
        width="stretch",
        key="sweep_table",
        column_config={"fact recall": st.column_config.NumberColumn(format="%d%%")},
    )
    # Why a run does not fit is a sentence: listed under the table, never cut in a cell.
    if whys:
        st.markdown(
            "**Why these runs do not fit**  \n"
            + "  \n".join(f"{num(v)}: {md_escape(why)}" for v, why in whys.items())
        )


def _round(n: int) -> int:
    """``n`` to two significant digits (1,075 is 1,100; 8,600 stays)."""
    return int(float(f"{n:.2g}"))


def _headline(v: Verdict | None) -> str:
    return v.headline if v is not None else "—"


def _compare() -> None:
    ix = state.index()
    if ix is None:
        return
    options = [CURRENT, *PRESETS]
    names = {CURRENT: "Current lab configuration", **PRESETS}
    state.widget("compare_configs", [CURRENT, "truncation", "sliding_window"])
    picked = st.multiselect(
        "Configurations",
        options,
        format_func=lambda k: names[k],
        key="compare_configs",
        max_selections=6,
    )
    state.widget("compare_budget", state.budget())
    budget = st.number_input(
        "Token budget for the presets", min_value=1, step=1000, key="compare_budget"
    )
    if len(picked) < 1:
        st.info("Pick at least one configuration.")
        return
    measure = _measure_recall()
    outcomes: dict[str, RunOutcome] = {}
    verdicts: dict[str, Verdict | None] = {}
    for name in picked:
        config = state.lab() if name == CURRENT else preset(name, int(budget))
        outcome = state.run(config)
        if outcome is not None:
            title = names[name].split(":")[0]
            outcomes[title] = outcome
            verdicts[title] = _verdict(outcome, measure)
    # Each bar as its card reads: the verdict's colour, headline and recall.
    st.plotly_chart(
        figures.compare_chart(outcomes, verdicts=verdicts),
        key="compare_chart",
        config={"displaylogo": False},
    )
    cols = st.columns(len(outcomes))
    for col, (name, outcome) in zip(cols, outcomes.items(), strict=True):
        with col.container(border=True):
            st.markdown(f"**{md_escape(name)}**")
            st.caption(md_escape(config_title(outcome.config)))
            v = verdicts.get(name)
            if outcome.result is None or v is None:
                st.error(md_escape(outcome.error or "configuration error"))
                continue
            # The run's verdict, as its bar reads on every page: headline, summary, costs.
            st.markdown(badges.verdict(v.headline, v.level))
            st.caption(md_escape(v.summary))
            n = v.numbers
            st.metric("Tokens after", num(n.tokens_after), help=f"{num(n.tokens_before)} before")
            recall = n.fact_recall if n.measured else None
            st.metric(
                "Fact recall",
                "—" if recall is None else share(recall),
                help=f"{md_escape(n.recall_text)}; {md_escape(n.facts_counted)}",
            )
            groups = n.groups or group_counts(outcome.result)
            rest = [f"{num(k)} {label}" for label, k in groups.items() if label != "kept" and k]
            st.metric(
                "Groups kept",
                num(groups["kept"]),
                help="Kept as they were; " + (", ".join(rest) or "nothing else") + ".",
            )
            st.metric("Messages after", num(n.messages_after))


def render() -> None:
    header(
        "Sweep & compare",
        "How the result moves with one parameter, and configurations side by side.",
    )
    current, _config = analysis_sidebar()
    if current is None:
        need_transcript()
        return
    state.widget("sweep_mode", "Sweep one parameter")
    mode = st.segmented_control(
        "Mode",
        ["Sweep one parameter", "Compare configurations"],
        key="sweep_mode",
        required=True,
    )
    if mode == "Compare configurations":
        _compare()
    else:
        _sweep()


if __name__ == "__main__":
    page(render, "sweep")
