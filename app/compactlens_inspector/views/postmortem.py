"""Post-mortem of the compactions an agent recorded: plain data and one figure (no Streamlit).

The page shows every recorded compaction on a timeline, then, for the chosen one, the
history it replaced, the agent's summary and recall, and what compactlens would have
kept from the same history with the lab's configuration and the reference pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from compactlens import ExtractiveSummarizer, Message, Transcript, strategy_from_config
from compactlens.analysis import (
    REFERENCE_LABEL,
    CompactionPostmortem,
    Outcome,
    Postmortem,
    StrategyFactory,
    Verdict,
    percent,
    postmortem,
    reference_pipeline,
)
from compactlens.model import make_tokenizer
from compactlens_inspector.lab.config import LabConfig, sized
from compactlens_inspector.style.wording import source_words
from compactlens_inspector.views.message import call_label
from compactlens_inspector.views.recorded import recorded_count

LAB_LABEL = "lab configuration"
#: The recall bars: the agent first, then each strategy; no colour shared.
_SERIES_COLOURS = ("#E4572E", "#1F77B4", "#2BB673", "#9467BD")
#: Characters of a message shown in the history table.
PREVIEW = 160


def lab_factory(config: LabConfig) -> StrategyFactory | None:
    """The lab's configuration sized to a compaction's budget; ``None`` in ``compact()``
    mode (a one-shot, not an engine strategy: not compared)."""
    if config.mode == "compact":
        return None

    def build(budget: int) -> Any:
        return strategy_from_config(
            sized(config, budget).strategy_config(), summarizer=ExtractiveSummarizer()
        )

    return build


def run_postmortem(
    transcript: Transcript,
    config: LabConfig | None,
    tokenizer: str,
    context_window: int | None = None,
) -> Postmortem:
    """The post-mortem with the lab's configuration (when it can run) and the reference,
    every side judged against the model's ``context_window`` (the Analysis page's)."""
    strategies: list[tuple[str, StrategyFactory]] = []
    factory = lab_factory(config) if config is not None else None
    if factory is not None:
        strategies.append((LAB_LABEL, factory))
    strategies.append((REFERENCE_LABEL, reference_pipeline))
    return postmortem(
        transcript, strategies, tokenizer=make_tokenizer(tokenizer), context_window=context_window
    )


def recall_text(outcome: Outcome | None) -> str:
    """The side's fact recall as its verdict words it (``63% (5 of 8 facts)``),
    ``encrypted``, or ``not measured``."""
    if outcome is None:
        return "not measured"
    if outcome.recall is None:
        return "encrypted"
    if outcome.verdict is not None:
        return outcome.verdict.numbers.recall_text
    return f"{recall_share(outcome)} ({outcome.survived:,} of {outcome.extracted:,} facts)"


def verdict_headline(outcome: Outcome | None) -> str:
    """The side's verdict in a table cell: ``Fits, with costs``; ``not judged`` when the
    agent's summary is unreadable or the history is not in the file."""
    if outcome is None or outcome.verdict is None:
        return "not judged"
    return outcome.verdict.headline


def recall_share(outcome: Outcome | None) -> str:
    """The recall as a whole percentage that never rounds a loss away (``63%``,
    ``over 99%``), ``encrypted`` or ``not measured``."""
    if outcome is None:
        return "not measured"
    if outcome.recall is None:
        return "encrypted"
    return percent(outcome.survived, outcome.extracted) if outcome.extracted else "100%"


def _percent(outcome: Outcome | None) -> float | None:
    recall = outcome.recall if outcome is not None else None
    return None if recall is None else round(recall * 100, 1)


def joined_label(labels: Sequence[str]) -> str:
    """One name for strategies that kept the same thing: ``lab configuration`` alone, or
    ``lab configuration and reference pipeline (same result)``."""
    if len(labels) == 1:
        return labels[0]
    return f"{', '.join(labels[:-1])} and {labels[-1]} (same result)"


def strategy_columns(pm: Postmortem) -> list[tuple[str, int]]:
    """(label, position) of each strategy to show: strategies that kept the same thing
    at every compaction share one label (``lab configuration and reference pipeline
    (same result)``)."""
    labels = [o.label for o in pm.compactions[0].strategies] if pm.compactions else []
    out: list[tuple[list[str], int]] = []
    for k, label in enumerate(labels):
        twin = next(
            (
                group
                for group in out
                if all(
                    k < len(c.strategies) and _same(c.strategies[group[1]], c.strategies[k])
                    for c in pm.compactions
                )
            ),
            None,
        )
        if twin is not None:
            twin[0].append(label)
        else:
            out.append(([label], k))
    return [(joined_label(names), k) for names, k in out]


def timeline_rows(pm: Postmortem) -> list[dict[str, Any]]:
    """One row per compaction for the table under the chart (a column the agent never
    recorded is left out; the marker that recorded it is in the agent's column title)."""
    rows: list[dict[str, Any]] = []
    columns = strategy_columns(pm)
    after_recorded = any(c.recorded.tokens_after is not None for c in pm.compactions)
    trigger_recorded = any(c.recorded.trigger for c in pm.compactions)
    for c in pm.compactions:
        r = c.recorded
        row: dict[str, Any] = {"#": c.number, "at message": r.index}
        if trigger_recorded:
            row["trigger"] = r.trigger or "not recorded"
        row["tokens before (recorded)"] = recorded_count(r.tokens_before)
        if after_recorded:
            row["tokens after (recorded)"] = recorded_count(r.tokens_after)
        row.update(
            {
                "history tokens": c.history_tokens,
                "agent kept (tokens)": c.budget,
                "agent recall": recall_share(c.agent),
                "agent verdict": verdict_headline(c.agent),
            }
        )
        for label, k in columns:
            if k < len(c.strategies):
                o = c.strategies[k]
                row[f"{label}: recall"] = recall_share(o)
                row[f"{label}: tokens kept"] = o.tokens_after
                row[f"{label}: at the agent's size"] = "yes" if c.at_equal_size(o) else "no"
                row[f"{label}: verdict"] = verdict_headline(o)
        rows.append(row)
    return rows


#: Height of one bar and of the gap around a compaction's group in the recall chart (px).
_BAR_PX = 34
_GROUP_PX = 40


def _bar_text(share: str, tokens: int | None, unequal: bool) -> str:
    size = f" · {tokens:,} tokens" if tokens is not None else ""
    return f"{share}{size}" + (" · not at equal size" if unequal else "")


def timeline_figure(pm: Postmortem) -> go.Figure:
    """Fact recall at each recorded compaction: one bar for the agent and one for each
    strategy (strategies with the same result share one), each labelled with its recall
    and the tokens it kept; a strategy that could not get as small as the agent is
    hatched and marked "not at equal size" (its recall does not compare)."""
    fig = go.Figure()
    cats = [
        f"#{c.number} · message {c.recorded.index:,}<br>{c.history_tokens:,} tokens replaced"
        for c in pm.compactions
    ]
    agent_y = [_percent(c.agent) or 0.0 for c in pm.compactions]
    agent_text = [
        _bar_text(recall_share(c.agent), c.budget if c.agent is not None else None, False)
        for c in pm.compactions
    ]
    sources = {source_words(c.recorded.source) for c in pm.compactions}
    agent = f"agent ({sources.pop()})" if len(sources) == 1 else "agent"
    series: list[tuple[str, list[float], list[str], list[bool]]] = [
        (agent, agent_y, agent_text, [False] * len(cats))
    ]
    for label, k in strategy_columns(pm):
        outcomes = [c.strategies[k] if k < len(c.strategies) else None for c in pm.compactions]
        unequal = [
            o is not None and not c.at_equal_size(o)
            for c, o in zip(pm.compactions, outcomes, strict=True)
        ]
        series.append(
            (
                f"compactlens: {label}",
                [_percent(o) or 0.0 for o in outcomes],
                [
                    _bar_text(recall_share(o), o.tokens_after if o else None, u)
                    for o, u in zip(outcomes, unequal, strict=True)
                ],
                unequal,
            )
        )
    for n, (name, ys, text, unequal) in enumerate(series):
        colour = _SERIES_COLOURS[n % len(_SERIES_COLOURS)]
        fig.add_bar(
            y=cats,
            x=ys,
            orientation="h",
            name=name,
            text=text,
            textposition="outside",
            cliponaxis=False,
            marker={
                "color": colour,
                "pattern": {"shape": ["/" if u else "" for u in unequal], "solidity": 0.5},
            },
            hovertemplate="%{text}<extra>" + name + "</extra>",
        )
    ticks = [0, 25, 50, 75, 100]
    unequal_any = any(any(s[3]) for s in series)
    title = "Fact recall at each recorded compaction"
    if unequal_any:
        title += (
            "<br><sup>Hatched bars are not at equal size: compactlens could not get as "
            "small as the agent, so their recall does not compare with the agent's.</sup>"
        )
    bars = len(cats) * len(series)
    fig.update_layout(
        title={"text": title},
        barmode="group",
        height=150 + bars * _BAR_PX + len(cats) * _GROUP_PX + (20 if unequal_any else 0),
        margin={"l": 10, "r": 10, "t": 100 if unequal_any else 70, "b": 10},
        # The share and size are written beside each bar: room for them past 100%.
        xaxis={
            "range": [0, 145],
            "tickvals": ticks,
            "ticktext": [f"{t}%" for t in ticks],
        },
        yaxis={"autorange": "reversed"},
        # Above the bars, under the title: below them it met the axis labels.
        legend={"orientation": "h", "x": 0, "y": 1, "yanchor": "bottom", "traceorder": "normal"},
    )
    return fig


@dataclass(frozen=True, slots=True)
class SideView:
    """One column of the side-by-side comparison: its recall, its size beside the
    agent's (``size``), and ``unequal``, a warning when it is not at the agent's size."""

    title: str
    recall: str  # with its count: ``9% (17 of 192 facts)``
    tokens: int
    status: str
    lost: tuple[str, ...]
    kept: tuple[dict[str, Any], ...]
    size: str = ""
    unequal: str = ""
    verdict: Verdict | None = None
    share: str = ""  # the recall alone (``9%``), for a metric's value


def message_rows(messages: Sequence[Message], offset: int = 0) -> list[dict[str, Any]]:
    """``#``, role and a one-line preview per message (shown inert in a table)."""
    rows = []
    for i, m in enumerate(messages):
        text = m.text
        if not text.strip():
            # A call shows its tool and what it was asked (``Bash: pytest -q``).
            calls = "; ".join(call_label(c.name, c.arguments) for c in m.tool_calls)
            results = " ".join(r.output for r in m.tool_results)
            text = calls or results
        flat = " ".join(text.split())
        preview = flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"
        rows.append({"#": i + offset, "role": m.role, "text": preview})
    return rows


def _same(a: Outcome, b: Outcome) -> bool:
    """Whether two strategies kept the same thing (then one column shows both)."""
    same_text = [m.text for m in a.kept] == [m.text for m in b.kept]
    numbers = (a.status, a.tokens_after, a.survived, a.extracted, a.lost)
    return same_text and numbers == (b.status, b.tokens_after, b.survived, b.extracted, b.lost)


def _merged(c: CompactionPostmortem) -> list[tuple[str, Outcome]]:
    """Each strategy with its title; strategies that kept the same thing share a column
    ("Lab configuration and reference pipeline (same result)")."""
    groups: list[tuple[list[str], Outcome]] = []
    for o in c.strategies:
        twin = next((g for g in groups if _same(g[1], o)), None)
        if twin is not None:
            twin[0].append(o.label)
        else:
            groups.append(([o.label], o))
    return [(_capital(joined_label(labels)), o) for labels, o in groups]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def unequal_note(c: CompactionPostmortem, o: Outcome) -> str:
    """Why ``o`` does not compare with the agent at equal size ("" when it does)."""
    return c.size_note(o)


def side_views(c: CompactionPostmortem) -> list[SideView]:
    """The agent's side, then each strategy's (identical strategies in one column), each
    with its size beside the agent's."""
    out: list[SideView] = []
    if c.agent is not None:
        agent = c.agent
        out.append(
            SideView(
                title=f"Agent ({source_words(c.recorded.source)})",
                recall=recall_text(agent),
                share=recall_share(agent),
                tokens=agent.tokens_after,
                status=agent.status,
                lost=agent.lost,
                kept=tuple(message_rows(agent.kept)),
                size=f"{agent.tokens_after:,} tokens kept",
                verdict=agent.verdict,
            )
        )
    for title, o in _merged(c):
        out.append(
            SideView(
                title=title,
                recall=recall_text(o),
                share=recall_share(o),
                tokens=o.tokens_after,
                status=o.status,
                lost=o.lost,
                kept=tuple(message_rows(o.kept)),
                size=f"{o.tokens_after:,} tokens kept (the agent: {c.budget:,})",
                unequal=unequal_note(c, o),
                verdict=o.verdict,
            )
        )
    return out


def choice_label(c: CompactionPostmortem) -> str:
    """``#1 at message 12 · auto · 167,402 tokens before``."""
    r = c.recorded
    bits = [f"#{c.number} at message {r.index}"]
    if r.trigger:
        bits.append(r.trigger)
    if r.tokens_before is not None:
        bits.append(f"{r.tokens_before:,} tokens before")
    return " · ".join(bits)
