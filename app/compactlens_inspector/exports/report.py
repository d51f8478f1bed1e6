"""A self-contained HTML report of one run: charts, group diff, events, explanation.

The file works offline: plotly.js is inlined once, every figure is embedded as data,
and every piece of transcript text is HTML-escaped (nothing from a transcript is ever
markup). No Streamlit here.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html import escape

import plotly.graph_objects as go  # type: ignore[import-untyped]

import compactlens.viz as figures
from compactlens import MessageIndex
from compactlens.analysis import CompactionReport, Verdict, protection_label, unique_protections
from compactlens.engine import summary_words
from compactlens.viz import timeline_events
from compactlens_inspector.lab.config import LabConfig, SummarizerSettings, config_title
from compactlens_inspector.lab.runs import RunOutcome, budget_parts
from compactlens_inspector.serving.loader import LoadedTranscript
from compactlens_inspector.style.numbers import group_digits, num, price
from compactlens_inspector.style.wording import (
    KIND_TEXT,
    condition_words,
    decision_words,
    event_words,
    reason_words,
    stage_words,
)
from compactlens_inspector.views.analysis import (
    AnalysisSettings,
    latest_request,
    lost_fact_rows,
    problem_rows,
    protocol_card,
    recall_text,
    share,
    turns_text,
)
from compactlens_inspector.views.message import call_names
from compactlens_inspector.views.run import (
    decision_views,
    render_message,
    summary_ranges,
)

PREVIEW_CHARS = 400
MAX_ANALYSIS_ROWS = 200

_CSS = """
body{font-family:Inter,Segoe UI,Helvetica,Arial,sans-serif;margin:0;background:#f6f7f9;
color:#1f2933}
main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px} h2{font-size:19px;margin:28px 0 8px}
.sub{color:#5c677d;margin-bottom:16px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:12px 0}
.card{background:#fff;border:1px solid #e1e5ea;border-radius:10px;padding:12px 16px;min-width:150px}
.card .k{font-size:12px;color:#5c677d;text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:22px;font-weight:600}
.status-compacted{color:#6C757D}.status-cannot-fit{color:#E4572E}.status-unchanged{color:#6C757D}
section{background:#fff;border:1px solid #e1e5ea;border-radius:10px;padding:16px;margin:16px 0}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #eef0f3;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f1f3f6;position:sticky;top:0}
td pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:12px;max-height:12em;
overflow:auto}
.badge{display:inline-block;border-radius:8px;padding:1px 8px;font-size:12px;color:#fff}
pre.code{background:#f1f3f6;padding:12px;border-radius:8px;overflow:auto;font-size:12px}
.muted{color:#8a94a6}
.verdict{border-left:6px solid;border-radius:10px} .verdict h2{margin-top:0}
.verdict-safe{border-left-color:#2BB673}.verdict-costs{border-left-color:#D98E04}
.verdict-no-fit{border-left-color:#E4572E}
"""


def _badge(action: str) -> str:
    """A decision's badge in the word every surface uses (``dropped`` for ``excluded``)."""
    color = figures.DECISION_COLORS.get(action, "#6C757D")
    return f'<span class="badge" style="background:{color}">{escape(decision_words(action))}</span>'


def _preview(text: str) -> str:
    cut = text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + " …"
    return f"<pre>{escape(cut)}</pre>"


def _figure_html(fig: go.Figure, first: bool) -> str:
    return str(
        fig.to_html(
            full_html=False,
            include_plotlyjs=bool(first),
            config={"displaylogo": False, "responsive": True},
        )
    )


def _cards(items: list[tuple[str, str]]) -> str:
    cards = "".join(
        f"<div class='card'><div class='k'>{escape(k)}</div><div class='v'>{escape(v)}</div></div>"
        for k, v in items
    )
    return f"<div class='cards'>{cards}</div>"


def analysis_section(
    report: CompactionReport,
    index: MessageIndex,
    projection_roles: list[str],
    settings: AnalysisSettings,
    *,
    max_rows: int = MAX_ANALYSIS_ROWS,
    judged: Verdict | None = None,
) -> tuple[str, go.Figure | None]:
    """The analysis as an HTML section (every transcript string escaped) and its cost chart.
    The protocol problems are counted and worded as ``judged``, the run's verdict, judges
    them (a note is not a cost)."""
    facts = report.facts
    protocol = protocol_card(judged)
    cache = report.cache
    introduced = report.introduced
    parts = ["<section><h2>Analysis</h2>"]
    parts.append(
        _cards(
            [
                ("fact recall", recall_text(report)),
                ("facts lost", f"{num(len(facts.lost))} of {num(facts.extracted)}"),
                (
                    "cached prefix kept",
                    f"{num(cache.prefix_tokens)} ({share(cache.prefix_fraction)})",
                ),
                ("cache rewrite tokens", num(cache.rewrite_tokens)),
                ("turns until re-trigger", turns_text(report)),
                (
                    "new protocol problems",
                    f"{num(protocol.count)} ({protocol.delta})" if protocol.delta else "none",
                )
                if judged is not None
                else ("protocol problems introduced", num(len(introduced))),
            ]
        )
    )
    latest = latest_request(index, report)
    parts.append(f"<p><b>Latest user request:</b> {escape(latest.words)}</p>")
    if report.warnings:
        parts.append(
            "<ul>"
            + "".join(f"<li>{escape(group_digits(w))}</li>" for w in report.warnings)
            + "</ul>"
        )
    cost = cache.cost
    if cost is not None:
        parts.append(
            f"<p class='muted'>Cost estimate at {escape(cost.model)} prices (input "
            f"{price(cost.prices.input)}, cached input {price(cost.prices.cached_input)}, "
            f"cache write {price(cost.prices.write)} per million tokens"
            f"{', edited' if settings.edited else ''}; "
            f"list prices change) for the next {cost.further_turns} turns.</p>"
        )
    rows = lost_fact_rows(report)
    if rows:
        parts.append(
            "<h3>Lost facts</h3><table><tr><th>fact</th><th>kind</th><th>message</th>"
            "<th>found in</th></tr>"
        )
        for row in rows[:max_rows]:
            parts.append(
                f"<tr><td>{_preview(str(row['fact']))}</td><td>{escape(str(row['kind']))}</td>"
                f"<td>{row['message']} ({escape(str(row['role']))})</td>"
                f"<td>{escape(str(row['found in']))}</td></tr>"
            )
        if len(rows) > max_rows:
            parts.append(
                f"<tr><td colspan='4' class='muted'>{num(len(rows) - max_rows)} more lost facts "
                "not shown</td></tr>"
            )
        parts.append("</table>")
    problems = problem_rows(report, projection_roles)
    parts.append(
        f"<h3>Protocol problems</h3><p>{num(len(report.problems))} in the compacted request, "
        f"{num(len(introduced))} introduced by the compaction."
        + (f" The verdict: {escape(' '.join(protocol.words))}" if protocol.words else "")
        + "</p>"
    )
    if problems:
        parts.append(
            "<table><tr><th>provider</th><th>kind</th><th>severity</th><th>location</th>"
            "<th>introduced</th><th>detail</th></tr>"
        )
        for row in problems[:max_rows]:
            parts.append(
                "<tr>"
                + "".join(
                    f"<td>{escape(str(row[k]))}</td>"
                    for k in ("provider", "kind", "severity", "location")
                )
                + f"<td>{'yes' if row['introduced'] else 'no'}</td>"
                + f"<td>{escape(str(row['detail']))}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</section>")
    return "".join(parts), figures.cost_chart(cost) if cost is not None else None


def verdict_section(v: Verdict) -> str:
    """The run's verdict as the report's first section: the headline, the summary, the
    checks that did not pass, the numbers and the next step, as the library words them."""
    n = v.numbers
    parts = [
        f"<section class='verdict verdict-{v.level}' id='verdict'>",
        f"<h2>Verdict: {escape(v.headline)}</h2>",
        f"<p>{escape(v.summary)}</p>",
    ]
    costs = [r for r in v.reasons if r.level != "safe"]
    if costs:
        parts.append("<ul>" + "".join(f"<li>{escape(r.text)}</li>" for r in costs) + "</ul>")
    groups = dict(n.groups) if n.groups is not None else {}
    cards = [
        ("tokens", f"{num(n.tokens_before)} → {num(n.tokens_after)}"),
        ("target", num(n.target_tokens) if n.target_tokens is not None else "none"),
        ("messages", f"{num(n.messages_before)} → {num(n.messages_after)}"),
        *((f"groups {label}", num(count)) for label, count in groups.items()),
        ("fact recall", n.recall_text),
    ]
    parts.append(_cards(cards))
    label, step = v.next_step_parts
    parts.append(f"<p><b>{escape(label)}:</b> {escape(step)}</p></section>")
    return "".join(parts)


def build_report(
    loaded: LoadedTranscript,
    index: MessageIndex,
    outcome: RunOutcome,
    *,
    summarizer: SummarizerSettings | None = None,
    max_rows: int = 2000,
    analysis: CompactionReport | None = None,
    analysis_settings: AnalysisSettings | None = None,
    verdict: Verdict | None = None,
) -> str:
    """The whole report as one HTML document (UTF-8 text); with ``verdict`` (the run's,
    as the inspector shows it) its section first; with ``analysis``, a section with fact
    recall, the cached prefix, the cost chart and the protocol problems."""
    config: LabConfig = outcome.config
    result = outcome.result
    title = loaded.title or loaded.name
    summarizer = summarizer or SummarizerSettings()
    parts: list[str] = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>compactlens report: {escape(title)}</title>",
        f"<style>{_CSS}</style></head><body><main>",
        f"<h1>compactlens report: {escape(title)}</h1>",
        f"<div class='sub'>{escape(loaded.name)} · {escape(loaded.format)} · "
        f"{num(index.total_messages)} messages · {num(index.total_groups)} groups · tokenizer "
        f"{escape(index.tokenizer_name)} · summarizer {escape(summarizer.label)} · generated "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}</div>",
        f"<div class='sub'>Configuration: {escape(config_title(config))}</div>",
    ]
    if result is None:
        parts.append(
            f"<section><b>Configuration error:</b> {escape(outcome.error or '')}</section>"
        )
        parts.append("</main></body></html>")
        return "".join(parts)
    if verdict is not None:
        parts.append(verdict_section(verdict))
    target = config.target_tokens
    parts.append("<div class='cards'>")
    for key, value, cls in (
        ("status", result.status, f"status-{result.status}"),
        ("tokens before", num(result.tokens_before), ""),
        ("tokens after", num(result.tokens_after), ""),
        ("saved", num(result.tokens_saved), ""),
        ("messages", f"{num(result.messages_before)} → {num(result.messages_after)}", ""),
        ("target", num(target) if target is not None else "—", ""),
    ):
        parts.append(
            f"<div class='card'><div class='k'>{escape(key)}</div>"
            f"<div class='v {cls}'>{escape(str(value))}</div></div>"
        )
    parts.append("</div>")
    expl = result.explanation
    parts.append("<section><h2>Explanation</h2>")
    parts.append(f"<p>{escape(summary_words(expl))}</p>")
    if expl.smallest_target is not None:
        # compact(): the smallest target its other settings fit; an engine run: its best
        # with the triggers as they are (the target the next step's fix sets, which may
        # move the trigger too, is in the verdict above).
        label = (
            "Smallest target that fits"
            if config.mode == "compact"
            else "Best the current parameters reach (the triggers as they are)"
        )
        parts.append(f"<p>{label}: <b>{num(expl.smallest_target)}</b> tokens</p>")
    # Re-run changes only: the target bound is the line above, never a promised fix.
    changes = [s for s in expl.suggestions if s.parameter != "target_tokens"]
    if changes:
        parts.append("<ul>")
        parts.extend(f"<li>{escape(s.change)}</li>" for s in changes)
        parts.append("</ul>")
    if expl.protected:
        parts.append("<table><tr><th>protected</th><th>groups</th><th>tokens</th><th>why</th></tr>")
        for p in unique_protections(expl.protected):
            parts.append(
                f"<tr><td>{escape(protection_label(p.why))}</td><td>{num(len(p.group_ids))}</td>"
                f"<td>{num(p.tokens)}</td><td>{escape(p.detail)}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</section>")

    cost_fig = None
    if analysis is not None:
        section, cost_fig = analysis_section(
            analysis,
            index,
            [m.role for m in result.projection],
            analysis_settings or AnalysisSettings(),
            judged=verdict,
        )
        parts.append(section)

    figs = [
        figures.decision_map(result),
        figures.cumulative_tokens(
            index,
            trigger_tokens=config.trigger_tokens,
            target_tokens=target,
            result=result,
        ),
        figures.budget_waterfall(budget_parts(outcome, index), target),
        figures.event_timeline(timeline_events(result), target_tokens=target),
        figures.tokens_per_group(index),
    ]
    if cost_fig is not None:
        figs.append(cost_fig)
    parts.append("<section><h2>Charts</h2>")
    for i, fig in enumerate(figs):
        parts.append(_figure_html(fig, i == 0))
    parts.append("</section>")

    parts.append("<section><h2>Events</h2><table><tr><th>#</th><th>stage</th><th>event</th>")
    parts.append("<th>starts when</th><th>stops at</th><th>tokens</th><th>detail</th></tr>")
    for e in result.events:
        indent = "&nbsp;&nbsp;" * e.depth
        parts.append(
            f"<tr><td>{e.stage}</td><td>{indent}{escape(stage_words(e.strategy))}</td>"
            f"<td>{escape(event_words(e.event))}</td><td>{escape(condition_words(e.trigger))}</td>"
            f"<td>{escape(condition_words(e.target))}</td>"
            f"<td>{num(e.tokens_before)} → {num(e.tokens_after)}</td>"
            f"<td>{escape(group_digits(e.detail))}</td></tr>"
        )
    parts.append("</table></section>")

    parts.append("<section><h2>Group diff</h2>")
    parts.append(
        "<table><tr><th>group</th><th>kind</th><th>decision</th><th>tokens</th>"
        "<th>reason</th><th>original</th><th>compacted</th></tr>"
    )
    views = decision_views(result)
    calls = call_names(index)  # a tool result names its call, not the call's raw id
    for n, view in enumerate(views):
        if n >= max_rows:
            parts.append(
                f"<tr><td colspan='7' class='muted'>{num(len(views) - max_rows)} more rows "
                "not shown</td></tr>"
            )
            break
        d = view.decision
        original = "\n\n".join(
            render_message(index.messages[k], k, calls) for k in d.message_indices
        )
        compacted = "\n\n".join(
            render_message(result.projection[k], None, calls) for k in view.projection
        )
        if d.action == "kept":
            compacted = "(unchanged)"
        gid = "new" if d.group_id is None else str(d.group_id)
        parts.append(
            f"<tr><td>{gid}</td><td>{escape(KIND_TEXT.get(d.kind, d.kind))}</td>"
            f"<td>{_badge(d.action)}</td><td>{num(d.tokens_before)} → {num(d.tokens_after)}</td>"
            f"<td>{escape(reason_words(d.reason))}</td>"
            f"<td>{_preview(original) if original else ''}</td>"
            f"<td>{_preview(compacted) if compacted else ''}</td></tr>"
        )
    parts.append("</table></section>")

    ranges = summary_ranges(result, index)
    if ranges:
        parts.append("<section><h2>Summaries</h2>")
        for r in ranges:
            span = r.message_range
            where = f"messages {span[0]}–{span[1]}" if span else "no messages"
            parts.append(f"<h3>Summary of {num(len(r.replaced))} groups ({where})</h3>")
            parts.append(f"<pre class='code'>{escape(r.summary_text)}</pre>")
        parts.append("</section>")

    parts.append("<section><h2>Configuration</h2>")
    parts.append(
        f"<pre class='code'>{escape(json.dumps(config.to_dict(), indent=2))}</pre></section>"
    )
    parts.append("</main></body></html>")
    return "".join(parts)
