"""Cannot-fit debugger: why the target was not reached, as a budget waterfall (what each
protected part still costs against the target), the reason in plain words, the target
that fits (as its one-click larger target sets it), and single changes that fit, found by
re-running."""

from __future__ import annotations

from typing import Any

import streamlit as st

import compactlens.viz as figures
from compactlens import CompactionResult
from compactlens.analysis import (
    SUMMARIES,
    BudgetPart,
    FittingTarget,
    Fix,
    Verdict,
    fitting_target,
    fix_recall,
    protection_label,
    raise_fix,
    unique_protections,
)
from compactlens.engine import StageEvent
from compactlens_inspector import state
from compactlens_inspector.components import budget_bar
from compactlens_inspector.components.analysis_summary import analysis_wanted
from compactlens_inspector.components.sidebar import analysis_sidebar
from compactlens_inspector.components.tables import notes_under, table
from compactlens_inspector.components.verdict_bar import KEY_PREFIX, verdict_bar
from compactlens_inspector.lab import compact_fixes
from compactlens_inspector.lab.compact_fixes import CompactFix
from compactlens_inspector.lab.config import LabConfig, apply_suggestion, lower_token_triggers
from compactlens_inspector.lab.runs import RunOutcome, budget_parts, fix_config
from compactlens_inspector.pages._common import header, need_transcript, page
from compactlens_inspector.style.numbers import group_digits, num
from compactlens_inspector.style.safety import md_escape
from compactlens_inspector.style.wording import (
    part_words,
    plural,
    stage_words,
)
from compactlens_inspector.views import compact_words
from compactlens_inspector.views import fixes as fixes_view
from compactlens_inspector.views.cannot_fit_words import checked_triggers, in_words

FIXES_REQUESTED = "cf_fixes_requested"
#: The toggle that lists destructive fixes too.
SHOW_DESTRUCTIVE = "cf_destructive"
#: A fix row: its words, and a button with room for "Raise the target" at 1280 px.
FIX_ROW = [4, 1]


def _apply(parameter: str, value: object) -> None:
    new = apply_suggestion(state.lab(), parameter, value)
    if new is not None:
        state.set_lab(new)
        state.forget("sb_")


def _apply_config(config: LabConfig) -> None:
    state.set_lab(config)
    state.forget("sb_")


def _not_triggered(r: CompactionResult, target: int) -> None:
    """The alert for a history over the target that no trigger compacted."""
    checked = checked_triggers(r)
    which = "; ".join(checked) if checked else "no trigger is configured"
    st.warning(
        f"**No trigger fired, but the history is over the target.** Checked: {which}. The "
        f"history was left as it is: {num(r.tokens_after)} tokens, "
        f"**{num(r.tokens_after - target)} over the target** of {num(target)}. Lower the "
        "trigger (see *What to change* below) and re-run to see whether it then fits.",
        icon=":material/warning:",
    )


def _stage_missed_note(r: CompactionResult, missed: list[StageEvent], v: Verdict | None) -> None:
    """A note for a run that met the target although a stage missed its own: a pipeline's
    stage may stop short and leave the rest to the next one. Whether anything needs
    fixing is the verdict's to say (its costs are in the bar above)."""
    short = fixes_view.stage_fell_short([(stage_words(e.strategy), e.event) for e in missed])
    head = (
        f"**The target was met** (compacted: {num(r.tokens_before)} → {num(r.tokens_after)} "
        f"tokens). A stage fell short ({md_escape(short)}) and a later stage reached the "
        "overall target"
    )
    if v is not None and v.level == "safe":
        st.info(
            f"{head}: nothing needs fixing. The waterfall below shows what the compacted "
            "history is made of.",
            icon=":material/info:",
        )
        return
    st.info(
        f"{head}. The run still has the costs the verdict above names; see *Optional "
        "improvements* below.",
        icon=":material/info:",
    )


def _fits_note(r: CompactionResult, v: Verdict | None) -> None:
    """The note for a run that fits: nothing to fix when its verdict is safe, else what
    it costs (the optional improvements follow)."""
    if v is not None and v.level == "safe":
        st.success(
            f"**{fixes_view.nothing_to_fix(v)}** The waterfall below still shows what the "
            "compacted history is made of.",
            icon=":material/check_circle:",
        )
        return
    costs = " ".join(c.text for c in v.costs) if v is not None else ""
    # Over the Analysis page's window the target is met but the model rejects the request.
    head = "meets its target" if v is not None and v.numbers.over_window else "fits"
    st.info(
        f"**This configuration {head}** ({r.status}), with costs: {md_escape(costs)} See "
        "*Optional improvements* below.",
        icon=":material/info:",
    )


def _lower_trigger_fix(config: LabConfig, target: int, find: bool) -> None:
    """The lowered-trigger change, re-run (when allowed) to say whether it then fits."""
    lowered = lower_token_triggers(config, target)
    if lowered is None:
        st.caption(
            "No `tokens >` trigger can be lowered: the triggers count something else "
            "(messages, turns, groups). Add a `tokens >` trigger at or under the target."
        )
        return
    change = f"Lower the trigger to the target: `tokens > {target:,}`"
    with st.container(border=True):
        c = st.columns(FIX_ROW, vertical_alignment="center")
        if not find:
            c[0].markdown(
                f":material/lightbulb: {change}. Press **Find fixes by re-running** to check "
                "whether it then fits."
            )
        else:
            outcome = state.run(lowered)
            res = outcome.result if outcome is not None else None
            if res is None:
                error = outcome.error if outcome is not None else "no run"
                c[0].markdown(
                    f":material/error: {change}: the re-run failed ({md_escape(error or '')})."
                )
            elif res.status == "compacted" and res.tokens_after <= target:
                c[0].markdown(
                    f":material/lightbulb: {change}. Re-run: it compacts "
                    f"{res.tokens_before:,} → {res.tokens_after:,} tokens and **fits**, with "
                    f"{target - res.tokens_after:,} tokens to spare."
                )
            else:
                why = md_escape(res.reason or res.explanation.summary)
                c[0].markdown(
                    f":material/warning: {change}. Re-run: it **still does not fit** "
                    f"({res.status}: {why}); apply it to see what remains."
                )
        c[1].button(
            "Apply",
            key="cf_lower_trigger",
            on_click=_apply_config,
            args=(lowered,),
            width="stretch",
        )


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
    find = settings.kind == "extractive" or bool(st.session_state.get(FIXES_REQUESTED))
    outcome = state.run(explain=find)
    if outcome is None or ix is None:
        return
    if outcome.result is None:
        budget_bar.status_line(outcome)
        return
    _verdict_bar(outcome)
    r = outcome.result
    expl = r.explanation
    target = config.target_tokens if config.target_tokens is not None else expl.target_tokens
    missed = [e for e in r.events if e.event in ("target-missed", "failed")]
    untriggered = r.status == "unchanged" and target is not None and r.tokens_after > target
    if untriggered and target is not None:
        _not_triggered(r, target)
    elif r.status != "cannot-fit" and not missed:
        _fits_note(r, state.run_verdict(outcome))
    elif r.status == "compacted":
        _stage_missed_note(r, missed, state.run_verdict(outcome))
    else:  # the verdict bar above says it does not fit; this is the engine's reason
        st.caption(f"**Why the run stopped:** {md_escape(_stop_reason(outcome))}")
    parts = budget_parts(outcome, ix)
    cols = st.columns(4)
    smallest = outcome.compact.smallest_target if outcome.compact is not None else None
    unfit = config.mode == "compact" and r.status == "cannot-fit" and smallest is not None
    if unfit and smallest is not None:
        # compact() leaves the history as it is; "over the target" counts from the smallest
        # target that fits (card 4, the fixes' number), not the candidate (review row 6).
        best = smallest
        cols[0].metric(
            "History, left as it is",
            num(r.tokens_after),
            border=True,
            help="compact() changes nothing when the history cannot fit its target.",
        )
    else:
        best = r.tokens_after
        cols[0].metric("Tokens after", num(best), border=True)
    cols[1].metric("Target", num(target) if target is not None else "—", border=True)
    over = best - target if target is not None else None
    cols[2].metric(
        "Over the target" if over is not None and over > 0 else "Room under the target",
        num(abs(over)) if over is not None else "—",
        border=True,
        help="How far the smallest target that fits is above the target." if unfit else None,
    )
    fitting = _fitting_target(outcome, config)
    if config.mode == "compact" and outcome.compact is not None:
        if outcome.compact.smallest_target is not None:
            # The one number the fixes below name too (review 4, #6a).
            cols[3].metric(
                "Smallest target that fits",
                num(outcome.compact.smallest_target),
                border=True,
                help="What stays besides the summary, plus the one token any summary text "
                "needs; the other settings as they are.",
            )
    elif fitting is not None:  # only a run that does not fit has one to show
        # The target the one-click larger target sets (its trigger with it), never a
        # smaller number beside that fix.
        written = sum(p.tokens for p in parts if p.label == SUMMARIES)
        cols[3].metric(
            fitting.label,
            num(fitting.target),
            border=True,
            help=fitting.words
            + (
                f" The {num(written)} tokens of summaries the compaction wrote are included "
                "(a lower “summary length cap” shortens them)."
                if written
                else ""
            ),
        )
    elif expl.smallest_target is not None:
        cols[3].metric(
            "Best reached",
            num(expl.smallest_target),
            border=True,
            help="The token count of the best the current parameters can do.",
        )
    if untriggered:
        title = "The history as it is (nothing was compacted), against the target"
    elif unfit:
        title = "One-shot compact: what must stay and the shortest summary, against the target"
    elif config.mode == "compact":
        title = "One-shot compact: what stays besides the summary, against the target"
    else:
        title = "What the compacted history still costs, against the target"
    st.plotly_chart(
        figures.budget_waterfall(parts, target, title=title),
        key="cf_waterfall",
        config={"displaylogo": False},
    )
    st.subheader("In plain words", anchor=False)
    reason = _stop_reason(outcome) if r.status == "cannot-fit" else r.reason
    st.markdown(md_escape(in_words(r.status, reason, r.tokens_after, target, parts)))
    if outcome.boundary is not None:
        compacted = r.status == "compacted"
        for line in compact_words.boundary_lines(
            outcome.boundary, ix.messages, compacted=compacted
        ):
            st.markdown(f"- {md_escape(line)}")
    if parts:
        # Why each part stays is a sentence: listed under the table, whole (as a column it
        # was cut at 1280 px).
        table(
            [
                {"part": part_words(p.label), "tokens": p.tokens, "groups": len(p.group_ids)}
                for p in parts
            ],
            key="cf_parts",
        )
        notes_under([(part_words(p.label), _part_why(outcome, ix.messages, p)) for p in parts])
    if expl.protected:
        with st.expander("Protected content as the strategies report it"):
            table(
                [
                    {
                        "protection": protection_label(p.why),
                        "tokens": p.tokens,
                        "groups": len(p.group_ids),
                        "detail": p.detail,
                    }
                    for p in unique_protections(expl.protected)
                ],
                key="cf_protected",
            )
    current_verdict = state.run_verdict(outcome)
    if untriggered:
        heading = "What to change"
    elif current_verdict is None:
        heading = "Fixes, ranked"
    else:
        heading = fixes_view.HEADINGS[fixes_view.section(current_verdict)]
    st.subheader(heading, anchor=False)
    if untriggered and target is not None:
        _lower_trigger_fix(config, target, find)
    if config.mode == "compact" and current_verdict is not None and current_verdict.level == "safe":
        st.caption("No fix is listed: every check passed, so any change could only cost.")
    elif config.mode == "compact":
        judged = state.compact_judged_fixes()
        if judged is not None and current_verdict is not None:
            _compact_fixes(judged[0], judged[1], current_verdict)
        else:
            _compact_suggestions(config, list(expl.suggestions), find)
    elif current_verdict is not None and current_verdict.level == "safe":
        st.caption("No fix is listed: every check passed, so any change could only cost.")
    elif current_verdict is not None:
        _ranked_fixes(config, current_verdict)


def _fitting_target(outcome: RunOutcome, config: LabConfig) -> FittingTarget | None:
    """The target that fits, as the one-click fix listed below sets it (the library's
    :func:`~compactlens.analysis.fitting_target` over the fixes the page lists)."""
    if config.mode == "compact":
        return None
    include = bool(st.session_state.get(SHOW_DESTRUCTIVE))
    shown = state.advised_verdict(outcome, include_destructive=include)
    if shown is None or shown.level != "no-fit":
        return None
    return fitting_target(shown, state.judged_fixes(include_destructive=include))


def _verdict_bar(outcome: RunOutcome) -> None:
    """The page's verdict bar, with the run's one next step (the library's
    :func:`~compactlens.analysis.next_step` over the fixes listed below: the same sentence
    every page's bar, the notebook's ``debug()`` and the command line give)."""
    include = bool(st.session_state.get(SHOW_DESTRUCTIVE))
    shown = state.advised_verdict(
        outcome, measured=analysis_wanted(outcome), include_destructive=include
    )
    if shown is not None:
        verdict_bar(shown, key=f"{KEY_PREFIX}debugger")


def _stop_reason(outcome: RunOutcome) -> str:
    """Why the run stopped, in words: compact()'s reason by its plain label (never its
    code name), else the engine's reason."""
    r = outcome.result
    assert r is not None
    if outcome.compact is not None and outcome.compact.reason is not None:
        return group_digits(compact_words.stop_sentence(outcome.compact))
    return group_digits(r.reason or r.explanation.summary)


def _part_why(outcome: RunOutcome, messages: Any, part: BudgetPart) -> str:
    """Why a waterfall part stays: in compact() mode its first protection in words (its
    messages by position, its tool by name), else the part's own detail."""
    if outcome.boundary is not None:
        said = compact_words.part_reason(part.label, outcome.boundary, messages)
        if said is not None:
            return said
    return part.detail


def _compact_fixes(ranked: list[CompactFix], tried: int, current: Verdict) -> None:
    """compact() mode's fixes, each with the verdict of the run it gives once applied,
    ranked by it (the bar's next step is the first)."""
    st.caption(
        f"{plural(tried, 'change')} of the compact() settings re-run (the extractive summarizer, "
        "offline). Each fix shows the verdict of the run it gives once applied."
    )
    if not ranked:
        st.info(md_escape(compact_fixes.next_step(current, ranked, tried)), icon=":material/info:")
        return
    for n, fix in enumerate(ranked):
        v = fix.verdict
        assert v is not None
        with st.container(border=True, key=f"cf_fix_{n}"):
            c = st.columns(FIX_ROW, vertical_alignment="center")
            badge = ":orange-badge[costly] " if v.level != "safe" else ""
            words = fix.words[:1].upper() + fix.words[1:]
            c[0].markdown(f"{badge}**{n + 1}.** {md_escape(words)}")
            c[0].caption(f"**{md_escape(v.headline)}**: {md_escape(v.summary)}")
            for cost in v.costs:
                c[0].caption(f":orange[{md_escape(cost.text)}]")
            c[1].button(
                "Apply",
                key=f"cf_apply_{n}",
                on_click=_apply_config,
                args=(fix.config,),
                type="primary" if n == 0 else "secondary",
                width="stretch",
            )


def _compact_suggestions(config: LabConfig, suggestions: list[Any], find: bool) -> None:
    """compact() mode: the single changes its explanation found (they call the summarizer)."""
    if not find:
        st.info(
            "Finding fixes re-runs compact(), which calls the model again.",
            icon=":material/info:",
        )
        st.button(
            "Find fixes by re-running",
            key="cf_find_fixes",
            on_click=lambda: st.session_state.update({FIXES_REQUESTED: True}),
        )
    if not suggestions:
        st.caption("No single-parameter change was found to fit (or nothing needs fixing).")
    for n, s in enumerate(suggestions):
        with st.container(border=True):
            c = st.columns(FIX_ROW, vertical_alignment="center")
            # The target bound as the change it is (its own words state a bound).
            change = (
                f"raise the target to {num(s.value)} tokens, the smallest the other settings fit"
                if s.parameter == "target_tokens"
                else group_digits(s.change)
            )
            c[0].markdown(f":material/lightbulb: {md_escape(change)}")
            if apply_suggestion(config, s.parameter, s.value) is not None:
                c[1].button(
                    "Apply",
                    key=f"cf_apply_{n}",
                    on_click=_apply,
                    args=(s.parameter, s.value),
                    width="stretch",
                )


def _ranked_fixes(config: LabConfig, current: Verdict) -> None:
    """The fix search: changes and pairs of changes re-run over the cached index, each
    read as the verdict of the run it gives; destructive ones only on request."""
    show = st.toggle(
        "Show destructive fixes too",
        key=SHOW_DESTRUCTIVE,
        help="Fixes that drop the latest user request or keep less than half of the "
        "conversation's facts.",
    )
    found = state.judged_fixes(include_destructive=bool(show))
    if found is None:
        return
    st.caption(
        f"{num(found.tried)} changes re-run over the cached index in "
        f"{num(round(found.duration_ms))} ms; no model was called (summaries are replayed). "
        "Each fix shows the verdict of the run it gives once applied."
    )
    rows = fixes_view.fix_rows(found.fixes, current, include_destructive=bool(show))
    hidden = fixes_view.shown_fixes(found.fixes, current, include_destructive=bool(show)).hidden
    if not rows and current.level == "costs":
        # The run's one next step, as the verdict bar above gives it (never a second one).
        advised = state.advised_verdict(include_destructive=bool(show)) or current
        st.info(md_escape(fixes_view.no_improvement(advised)), icon=":material/info:")
    elif not rows:
        empty = group_digits(found.none_reason or "no single change fits")
        st.info(md_escape(empty[:1].upper() + empty[1:] + "."), icon=":material/info:")
    choice = next((row for row in rows if row.choice), None)
    if choice is not None:  # said once, above the two choices whatever their order
        window = current.numbers.context_window
        other = (
            "the other choice is to raise the target."
            if window is None
            or any(row.raises_target for row in rows)
            or raise_fix(current, found) is not None
            else f"no larger target fits the {num(window)}-token context window (the "
            "Analysis page's setting)."
        )
        st.markdown(
            "**No change that keeps the target keeps most of the conversation's facts.** "
            f"The best one keeps {fix_recall(choice.fix):.0%} of them; {other}"
        )
    for row in rows:
        with st.container(border=True, key=f"cf_fix_{row.rank - 1}"):
            c = st.columns(FIX_ROW, vertical_alignment="center")
            colour = "orange" if row.badge == "costly" else "red"
            mark = f":{colour}-badge[{row.badge}] " if row.badge else ""
            c[0].markdown(f"{mark}**{row.rank}.** {md_escape(row.title)}")
            c[0].caption(f"**{md_escape(row.headline)}**: {md_escape(row.summary)}")
            for cost in row.costs:
                c[0].caption(f":orange[{md_escape(cost)}]")
            c[1].button(
                "Raise the target" if row.raises_target else "Apply",
                key=f"cf_apply_{row.rank - 1}",
                on_click=_apply_config,
                args=(fix_config(row.fix, config),),
                type="primary" if row.primary else "secondary",
                width="stretch",
            )
    if current.level == "no-fit" and not any(row.raises_target for row in rows):
        raised = raise_fix(current, found)
        if raised is not None:
            _raise_target(config, raised, primary=not any(row.primary for row in rows))
    note = fixes_view.hidden_note(found.hidden_destructive + hidden)
    if note:
        st.caption(note)


def _raise_target(config: LabConfig, raised: Fix, *, primary: bool) -> None:
    """The one-click "raise the target to N" the next step names: the library's fix that
    raises every stage's target and the trigger it needs
    (:func:`compactlens.analysis.raise_fix`), so the click lands on the verdict shown."""
    words = raised.plain_summary
    with st.container(border=True, key="cf_raise"):
        c = st.columns(FIX_ROW, vertical_alignment="center")
        c[0].markdown(f"**{md_escape(words[:1].upper() + words[1:])}**")
        if raised.verdict is not None:
            c[0].caption(
                f"**{md_escape(raised.verdict.headline)}**: {md_escape(raised.verdict.summary)}"
            )
        c[1].button(
            "Raise the target",
            key="cf_raise_target",
            on_click=_apply_config,
            args=(fix_config(raised, config),),
            type="primary" if primary else "secondary",
            width="stretch",
        )


if __name__ == "__main__":
    page(render, "cannot_fit")
