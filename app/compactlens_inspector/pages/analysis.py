"""Analysis: what the lab's compaction keeps and costs. Fact survival (recall, the lost
facts and the messages they came from, the latest user request), the prompt cache (the
prefix that stays cached, what is written again, the cost of the next turns with and
without compaction at editable list prices), the re-trigger guard (turns until a trigger
fires again, against a context window) and the protocol problems providers would reject."""

from __future__ import annotations

from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import compactlens.viz as figures
from compactlens import MessageIndex
from compactlens.analysis import AnalysisOverview, CompactionReport, Verdict, provider_words
from compactlens_inspector import state
from compactlens_inspector.components import budget_bar
from compactlens_inspector.components.sidebar import analysis_sidebar
from compactlens_inspector.components.tables import table
from compactlens_inspector.components.verdict_bar import page_verdict
from compactlens_inspector.lab.config import config_title
from compactlens_inspector.lab.runs import RunOutcome
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.style.numbers import group_digits, money, num, price
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.style.wording import condition_words, plural, verb
from compactlens_inspector.views.analysis import (
    PRICE_COLUMNS,
    PRICES_NOTE,
    AnalysisSettings,
    kind_rows,
    latest_request,
    lost_fact_rows,
    price_rows,
    prices_from_rows,
    problem_rows,
    protocol_card,
    recall_text,
    share,
    source_text,
    split_findings,
    turns_text,
)
from compactlens_inspector.views.message import call_names
from compactlens_inspector.views.run import render_message

MAX_FACT_CHOICES = 500
LAST_ROW = "an_last_row"


# -- settings ------------------------------------------------------------------------------------


def _price_frame(settings: AnalysisSettings) -> pd.DataFrame:
    return pd.DataFrame(price_rows(settings.table), columns=["model", *PRICE_COLUMNS])


def _reset_prices() -> None:
    current = state.analysis_settings()
    state.set_analysis_settings(
        AnalysisSettings(
            current.model, AnalysisSettings().prices, current.context_window, current.further_turns
        )
    )
    st.session_state.pop("an_prices", None)


def _settings() -> AnalysisSettings:
    """The model, context window, turns ahead and the editable price table."""
    current = state.analysis_settings()
    with st.container(border=True):
        cols = st.columns([2, 2, 2], vertical_alignment="bottom")
        models = list(current.table)
        state.widget("an_model", current.model if current.model in models else models[0])
        model = cols[0].selectbox(
            "Model (prices)",
            models,
            key="an_model",
            help="Whose prices the cost estimate uses. Edit them in the table below.",
        )
        state.widget("an_window", current.context_window or 0)
        window = cols[1].number_input(
            "Context window (tokens, 0 = no check)",
            min_value=0,
            step=8000,
            key="an_window",
            help="Warn when the compacted history uses more than 80% of it.",
        )
        state.widget("an_turns", current.further_turns)
        turns = cols[2].number_input(
            "Further turns to estimate",
            min_value=1,
            max_value=200,
            step=1,
            key="an_turns",
            help="The cost chart covers this many turns after the compaction.",
        )
        pending = st.session_state.get("an_prices")
        edited = current.edited or bool(isinstance(pending, dict) and pending.get("edited_rows"))
        label = "Model prices: editable list prices (USD per million tokens)"
        if edited:
            label += " · edited"
        with st.expander(label, expanded=False):
            st.caption(PRICES_NOTE)
            grid = st.data_editor(
                _price_frame(current),
                key="an_prices",
                num_rows="fixed",
                hide_index=True,
                disabled=["model"],
                width="stretch",
                column_config={
                    "model": st.column_config.TextColumn("model"),
                    **{
                        c: st.column_config.NumberColumn(
                            c.replace("_", " "), min_value=0.0, format="$%.4g", step=0.005
                        )
                        for c in PRICE_COLUMNS
                    },
                },
            )
            prices, errors = prices_from_rows(grid.to_dict("records"))
            for error in errors:
                st.error(f"Not used: {md_escape(error)}", icon=":material/error:")
            st.button(
                "Reset to list prices",
                key="an_prices_reset",
                on_click=_reset_prices,
                disabled=not edited,
            )
    table = dict(current.prices)
    table.update(prices)
    settings = AnalysisSettings(str(model), tuple(table.items()), int(window) or None, int(turns))
    if settings != current:
        state.set_analysis_settings(settings)
    return settings


# -- sections ------------------------------------------------------------------------------------


def _cards(report: AnalysisOverview) -> tuple[DeltaGenerator, DeltaGenerator]:
    """The five cards; the two fact cards say "computing" until :func:`_fact_cards`."""
    cache = report.cache
    cols = st.columns(5)
    recall, lost = cols[0].empty(), cols[1].empty()
    for slot, label in ((recall, "Fact recall"), (lost, "Facts lost")):
        slot.metric(label, "…", border=True, help="Computing fact survival…")
    cols[2].metric(
        "Cache kept",
        num(cache.prefix_tokens),
        delta=f"{share(cache.prefix_fraction)} of the request",
        delta_color="off",
        delta_arrow="off",
        border=True,
        help=f"The first {plural(cache.prefix_messages, 'message')} "
        f"{verb(cache.prefix_messages, 'is')} unchanged, so a provider's "
        "prompt cache still serves them.",
    )
    cols[3].metric(
        "Cache rewrite",
        num(cache.rewrite_tokens),
        border=True,
        help="Tokens of the compacted request after the cached prefix: written to the cache "
        "again on the next request.",
    )
    cols[4].metric(
        "Re-trigger in",
        turns_text(report),
        delta=_loop_words(report),
        delta_color="inverse",
        delta_arrow="off",
        border=True,
        help="Turns (of the measured per-turn growth) until a configured trigger fires again "
        "on the compacted history; agent steps (model calls) for an agent log with too few "
        "user turns to measure a typical turn (a dash: too few steps as well).",
    )

    return recall, lost


def _fact_cards(report: CompactionReport, recall: DeltaGenerator, lost: DeltaGenerator) -> None:
    facts = report.facts
    recall.metric(
        "Fact recall",
        recall_text(report),
        border=True,
        help=f"{num(facts.survived)} of {num(facts.extracted)} facts (ids, paths, numbers, "
        "dates...) of the compacted messages still appear verbatim.",
    )
    lost.metric("Facts lost", num(len(facts.lost)), border=True)


def _loop_words(report: AnalysisOverview) -> str | None:
    """A warning under the re-trigger card when compaction would loop."""
    until = report.retrigger.turns_until_trigger
    if report.status == "unchanged":  # nothing compacted: the next trigger is the first
        return None
    if until == 0:
        return "loops: fires now"
    if until == 1:
        return f"loops: next {report.retrigger.growth.unit}"
    return None


def _findings(report: CompactionReport, judged: Verdict | None) -> None:
    """The analysis' own findings as the verdict judges them: those it counts as costs in
    the warning colour, the others as neutral notes (an amber "1 finding: recall 98%"
    under a green verdict contradicted it). Whether the run is safe is the verdict bar's
    to say (a second green box here could contradict it)."""
    costs, notes = split_findings(report.warnings, judged)
    if costs:
        lines = "\n".join(f"- {md_escape(group_digits(w))}" for w in costs)
        head = f"{plural(len(costs), 'finding')} the verdict counts as " + (
            "a cost" if len(costs) == 1 else "costs"
        )
        st.warning(f"**{head}**\n{lines}", icon=":material/flag:")
    if notes:
        lines = "\n".join(f"- {md_escape(group_digits(w))}" for w in notes)
        head = f"{plural(len(notes), 'note')}, not " + ("a cost" if len(notes) == 1 else "costs")
        st.info(f"**{head}**\n{lines}", icon=":material/info:")


def _selected_row(selection: Any) -> int | None:
    try:
        rows = selection["selection"]["rows"]
    except (KeyError, TypeError):
        return None
    return int(rows[0]) if rows else None


def _facts(report: CompactionReport, ix: MessageIndex) -> None:
    st.subheader("Fact survival", anchor=False)
    facts = report.facts
    latest = latest_request(ix, report)
    icon = {
        "kept": ":material/check_circle:",
        "survived": ":material/check_circle:",
        "lost": ":material/error:",
        "none": ":material/info:",
    }[latest.state]
    box = st.error if latest.state == "lost" else st.info
    box(f"**Latest user request:** {md_escape(latest.words)}", icon=icon)
    if not facts.affected_messages:
        st.caption("Nothing was removed, collapsed or summarized: every fact is still there.")
        return
    st.caption(
        f"Recall counts all {num(facts.extracted)} facts of the whole conversation; they can "
        f"be lost only from the {num(len(facts.affected_messages))} messages the compaction "
        "removed, collapsed or summarized. A fact survives when its text still appears "
        "verbatim in the compacted history. Deterministic, no model."
    )
    # One above the other, full width: side by side, the lost facts' columns were cut.
    left, right = st.container(), st.container()
    with left:
        table(
            kind_rows(report),
            hide_index=True,
            width="stretch",
            key="an_kinds",
            column_config={
                "recall": st.column_config.ProgressColumn(
                    "recall", min_value=0, max_value=100, format="%d%%", width="small"
                )
            },
        )
    rows = lost_fact_rows(report)
    with right:
        if not rows:
            st.success("Every extracted fact survives.", icon=":material/check_circle:")
            return
        selection = table(
            rows,
            hide_index=True,
            width="stretch",
            height=300,
            key="an_lost",
            on_select="rerun",
            selection_mode="single-row",
            column_config={"fact": st.column_config.TextColumn("lost fact")},
        )
    choices = list(range(min(len(rows), MAX_FACT_CHOICES)))
    clicked = _selected_row(selection)
    if clicked is not None and clicked != st.session_state.get(LAST_ROW):
        st.session_state[LAST_ROW] = clicked
        if clicked in choices:
            st.session_state["an_fact"] = clicked
    if st.session_state.get("an_fact") not in choices:
        st.session_state["an_fact"] = 0

    def label(i: int) -> str:
        row = rows[i]
        value = str(row["fact"])
        short = value if len(value) <= 70 else value[:67] + "…"
        return f"{short} · {row['kind']} · message {row['message']}"

    picked = st.selectbox(
        "Source of a lost fact (or click a row above)", choices, format_func=label, key="an_fact"
    )
    fact = facts.lost[int(picked)]
    with st.container(border=True):
        value = fact.value if len(fact.value) <= 80 else fact.value[:77] + "…"
        st.markdown(
            f"**Message {fact.message_index}** · {md_escape(fact.role)} · the lost "
            f"{md_escape(fact.kind.replace('_', ' '))} “{md_escape(value)}” is in its "
            f"{md_escape(fact.source.replace('_', ' '))}; the compaction removed, collapsed or "
            "summarized this message"
        )
        st.code(source_text(ix, fact.message_index), language=None, wrap_lines=True, height=260)
    if len(rows) > MAX_FACT_CHOICES:
        st.caption(
            f"The picker lists the first {num(MAX_FACT_CHOICES)} of {num(len(rows))} lost facts."
        )


def _cache(report: AnalysisOverview) -> None:
    st.subheader("Prompt cache and cost", anchor=False)
    cache = report.cache
    if cache.first_difference is None:
        st.markdown(
            "The compacted request is the original one: the whole prompt cache "
            f"({num(cache.prefix_tokens)} tokens) still applies."
        )
    else:
        n = cache.prefix_messages
        if n == 0:
            kept = "Not even the first message is unchanged: nothing stays cached."
        else:
            what = "The first **message**" if n == 1 else f"The first **{num(n)} messages**"
            kept = (
                f"{what} ({num(cache.prefix_tokens)} tokens, {share(cache.prefix_fraction)} of "
                f"the original request) {'is' if n == 1 else 'are'} unchanged and "
                f"{'stays' if n == 1 else 'stay'} cached."
            )
        st.markdown(
            f"{kept} From message {cache.first_difference} on, the compacted request "
            f"(**{num(cache.rewrite_tokens)} tokens**) is written to the cache again, and "
            f"{num(cache.invalidated_tokens)} cached tokens of the original are thrown away."
        )
    cost = cache.cost
    if cost is None:
        return
    st.plotly_chart(figures.cost_chart(cost), key="an_cost_chart", config={"displaylogo": False})
    write = cost.prices.write
    st.caption(
        f"{md_escape(cost.model)}: input {price(cost.prices.input)}, cached input "
        f"{price(cost.prices.cached_input)}, cache write {price(write)} per "
        "million tokens (editable "
        f"list prices above); every {report.retrigger.growth.unit} adds "
        f"{num(cost.growth_tokens)} tokens ({_growth_words(report)}) and re-reads the "
        "previous request from the cache. An estimate to compare setups, not a bill: "
        "re-compactions within these turns, cache minimums, block sizes and expiry are "
        "ignored."
    )
    cols = st.columns(3)
    cols[0].metric("Without compaction", money(cost.cost_without), border=True)
    cols[1].metric("With compaction", money(cost.cost_with), border=True)
    turn = cost.break_even_turn
    cols[2].metric(
        "Break-even",
        f"turn {turn}" if turn is not None else "never",
        border=True,
        help="The first turn after which the compaction has paid for rewriting the cache.",
    )


def _growth_words(report: AnalysisOverview) -> str:
    """Where the growth a cost estimate assumes comes from, in a few words."""
    growth = report.retrigger.growth
    return {
        "transcript": "measured on this transcript",
        "steps": "a typical agent step of this log",
        "few": "the largest of this log's only steps, an estimate",
        "given": "given",
    }.get(growth.source, "none could be measured on this transcript")


def _retrigger(report: AnalysisOverview) -> None:
    st.subheader("Re-trigger guard", anchor=False)
    r = report.retrigger
    growth = r.growth
    if not r.triggers:
        st.caption("The configuration has no trigger to project.")
        return
    triggers = " or ".join(md_escape(condition_words(t)) for t in r.triggers)
    firing = md_escape(condition_words(r.firing_trigger or ""))
    if r.turns_until_trigger is None and growth.source == "none":
        when = "when the next compaction comes is not estimated"
    elif r.turns_until_trigger is None:
        when = f"no trigger fires within {plural(r.horizon, growth.unit)}"
    elif r.turns_until_trigger == 0:
        when = f"it **already fires** on the compacted history ({firing})"
    else:
        n = r.turns_until_trigger
        when = f"it fires again ({firing}) after **{plural(n, growth.unit)}**"
    source = {
        "transcript": f"the median of the latest {plural(growth.turns_measured, 'turn')}",
        "steps": f"the median of the latest {plural(growth.turns_measured, 'agent step')}, "
        "one model call each, as the log has too few user turns to measure a typical turn",
        "few": f"estimated from the largest of the log's only "
        f"{plural(growth.turns_measured, 'agent step')}: too few for a typical one",
        "given": "given",
    }.get(growth.source, "none could be measured")
    st.markdown(
        f"Compaction starts at {triggers}. The compacted history starts at "
        f"{num(r.start.tokens)} tokens and grows by about {growth.tokens:,.0f} tokens a "
        f"{'step' if growth.unit == 'step' else 'turn'} ({source}): {when}."
    )
    if r.context_window:
        fraction = r.window_fraction or 0.0
        st.progress(
            min(1.0, fraction),
            text=f"{num(r.start.tokens)} of the {num(r.context_window)}-token context window "
            f"({fraction:.0%}; warn above {r.max_fraction:.0%})",
        )


def _call_names() -> dict[str, str]:
    """The transcript's calls by id, so a tool result reads as the call it answers."""
    ix = state.index()
    return call_names(ix) if ix is not None else {}


def _protocol(report: AnalysisOverview, outcome: RunOutcome) -> None:
    st.subheader("Protocol problems", anchor=False)
    result = outcome.result
    assert result is not None
    introduced = report.introduced
    errors = [p for p in introduced if p.severity == "error"]
    words = [provider_words(p) for p in report.providers] + ["tool-call pairing"]
    checked = " and ".join(", ".join(words).rsplit(", ", 1))
    st.markdown(
        f"Checked for {md_escape(checked)}: **{plural(len(report.problems), 'problem')}** in "
        "the compacted request, "
        f"**{num(len(introduced))}** introduced by the compaction "
        f"({plural(len(errors), 'error')}).",
    )
    note = report.providers_note
    if note:  # which providers and why: the transcript's own API, as chosen, the default
        st.caption(note[:1].upper() + note[1:] + ".")
    judged = state.run_verdict(outcome)
    provider = judged.numbers.provider if judged is not None else None
    if provider is not None and introduced:
        # The verdict's own words (a cost, or "Note, not a cost"), never a count of its
        # own beside them ("The verdict counts 77 of them" above a note).
        said = " ".join(protocol_card(judged).words)
        st.caption(
            f"The verdict judges those for {md_escape(provider_words(provider))} and "
            f"tool-call pairing (the API the request goes to): {md_escape(said)}"
        )
    if not report.problems:
        st.success("No provider would reject the compacted request.", icon=":material/check:")
        return
    state.widget("an_introduced_only", bool(introduced))
    only = st.toggle("Only problems the compaction introduced", key="an_introduced_only")
    roles = [m.role for m in result.projection]
    rows = problem_rows(report, roles, introduced_only=only)
    if not rows:
        st.caption("None: every problem was already in the original history.")
        return
    selection = table(
        rows,
        hide_index=True,
        width="stretch",
        key="an_problems",
        on_select="rerun",
        selection_mode="single-row",
        column_config={
            "message": None,
        },
    )
    st.caption(
        "Locations are message positions in the compacted request; a problem that is not "
        "introduced was already in the original history. Select a row to see the message."
    )
    picked = _selected_row(selection)
    if picked is not None and 0 <= picked < len(rows):
        at = int(rows[picked]["message"])
        if 0 <= at < len(result.projection):
            with st.container(border=True):
                st.markdown(
                    f"**Compacted message {at}** · {md_escape(str(rows[picked]['kind']))} "
                    f"({md_escape(str(rows[picked]['provider']))})"
                )
                st.code(
                    render_message(result.projection[at], at, _call_names()),
                    language=None,
                    wrap_lines=True,
                    height=220,
                )


def render() -> None:
    header(
        "Analysis",
        "What the compaction keeps and costs: facts, the prompt cache, when it fires again, "
        "and what providers would reject.",
    )
    current, config = analysis_sidebar()
    if current is None:
        need_transcript()
        return
    settings = _settings()
    outcome = state.run()
    ix = state.index()
    if outcome is None or ix is None:
        return
    st.markdown(f"**Configuration:** {md_escape(config_title(config))}")
    if outcome.result is None:
        budget_bar.status_line(outcome)  # the configuration error
        return
    page_verdict(outcome, page="analysis")
    # The overview (counts only) first; fact survival, which reads every compacted
    # message's text, fills its cards and section when it is done.
    overview = state.analysis_overview(outcome, settings)
    if overview is None:
        return
    recall, lost = _cards(overview)
    findings = st.container()  # two boxes: the costs, then the notes
    facts_box = st.container()
    _cache(overview)
    _retrigger(overview)
    _protocol(overview, outcome)
    with facts_box, st.spinner("Computing fact survival…"):
        facts = state.analysis_facts(outcome)
    if facts is None:
        return
    report = overview.with_facts(facts)
    _fact_cards(report, recall, lost)
    with findings:
        _findings(report, state.run_verdict(outcome))
    with facts_box:
        _facts(report, ix)


if __name__ == "__main__":
    page(render, "analysis")
