"""Plain data for the Runs page: the run table, its filters, a run's calls as timeline
points (each with the verdict of its replay), the figure, and a call as a lab input.
No Streamlit here.
"""

from __future__ import annotations

import html
import json
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import plotly.graph_objects as go

from compactlens import Trigger, Verdict, analyze, load_transcript, tokens_exceed, verdict
from compactlens.engine import always
from compactlens.integrations import (
    CallSummary,
    FileProblem,
    RecordedCall,
    Replay,
    RunSummary,
    config_name,
    replay_call,
)
from compactlens_inspector.lab.config import LabConfig
from compactlens_inspector.lab.lab_config import CompactSettings
from compactlens_inspector.style.numbers import PLOTLY_INT, num

#: How the run table can be sorted: label -> (RunSummary field, newest / largest first).
SORTS: dict[str, tuple[str, bool]] = {
    "newest first": ("started", True),
    "most cannot-fits": ("cannot_fits", True),
    "most compactions": ("compactions", True),
    "largest history": ("largest", True),
    "most model calls": ("calls", True),
}
#: Colours of a call's marker by status (the app's status colours).
STATUS_COLOURS = {"compacted": "#2e7d32", "cannot-fit": "#c62828", "unchanged": "#78909c"}
#: The marker of a call by status.
SYMBOLS = {"compacted": "diamond", "cannot-fit": "x", "unchanged": "circle"}
#: Calls of one run whose verdicts are computed (by replay) for the hover; later calls
#: show their recorded numbers.
VERDICT_CALLS = 300


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def start_text(started: str | None) -> str:
    """``2026-11-02 09:00:00`` (UTC) from an ISO time."""
    return started[:19].replace("T", " ") if started else "–"


def time_text(stamp: str | None) -> str:
    """``2026-11-02 09:00:07 UTC`` from a recorded ISO time."""
    return f"{start_text(stamp)} UTC" if stamp else "time not recorded"


def filter_runs(
    runs: Sequence[RunSummary],
    *,
    only_cannot_fit: bool = False,
    framework: str | None = None,
    sort: str = "newest first",
) -> list[RunSummary]:
    """The runs shown: those with a cannot-fit (when asked), of one framework (when
    chosen), in the chosen order."""
    shown = [
        r
        for r in runs
        if (not only_cannot_fit or r.cannot_fits > 0)
        and (framework is None or r.framework == framework)
    ]
    field, descending = SORTS.get(sort, SORTS["newest first"])
    return sorted(shown, key=lambda r: (getattr(r, field) or 0, r.name), reverse=descending)


def run_rows(runs: Sequence[RunSummary]) -> list[dict[str, Any]]:
    """One table row per run. A recording named ``<framework>-<time>-<id>`` shows its id
    (the framework and the time have their own columns); the configuration shows with
    each call of the opened run (ten columns do not fit a 1280-pixel window)."""
    return [
        {
            "run": run_id(r),
            "framework": r.framework,
            "started (UTC)": start_text(r.started)[:16],
            "duration": duration_text(r.duration_s),
            "calls": r.calls,
            "compactions": r.compactions,
            "cannot-fits": r.cannot_fits,
            "largest history": r.largest,
            "saved": r.saved,
        }
        for r in runs
    ]


def run_id(run: RunSummary) -> str:
    """``e81f2d39`` for ``agent-framework-20261102T120000-e81f2d39``; another name whole."""
    head, _, tail = run.name.rpartition("-")
    framework, _, stamp = head.rpartition("-")
    if framework == run.framework and len(stamp) == 15 and stamp[8] == "T" and tail:
        return tail
    return run.name


def problem_rows(problems: Sequence[FileProblem]) -> list[dict[str, str]]:
    return [{"file": p.name, "why it is not (wholly) listed": p.reason} for p in problems]


@dataclass(frozen=True, slots=True)
class CallPoint:
    """One model call on the run's timeline."""

    seq: int
    timestamp: str | None
    status: str
    tokens_before: int
    tokens_after: int
    configuration: str
    verdict: str

    @property
    def label(self) -> str:
        return (
            f"call {self.seq} · {num(self.tokens_before)} → {num(self.tokens_after)} tokens "
            f"· {self.status}"
        )


def call_verdict(replay: Replay) -> Verdict | None:
    """The verdict of a replayed call, judged with its analysis report (as every page
    judges a run); None when the replay did not run."""
    run = replay.run
    if run is None or run.result is None:
        return None
    call = replay.call
    original = load_transcript(call.history, format=call.format).messages
    return verdict(run.result, analyze(original, run.result, triggers=call_triggers(call)))


def call_step(v: Verdict, *, cannot_fit: bool) -> Verdict:
    """``v`` with the next step the Runs page gives: its own when it is the run's one next
    step (:attr:`~compactlens.analysis.Verdict.step_final`), else where to find it. The
    page shows no fix search, so a number of its own ("at least 3,845") would contradict
    the debugger's for the same call (review 6)."""
    if v.step_final:
        return v
    where = (
        "Open this call in the Cannot-fit debugger (below): it re-runs the changes that "
        "could help and names the one to take."
        if cannot_fit
        else "Open this call in the Strategy lab (below): its Cannot-fit debugger re-runs "
        "the changes that could help and names the one to take."
    )
    return replace(v, next_step=where)


def call_triggers(call: RecordedCall) -> list[Trigger] | Mapping[str, Any] | None:
    """The triggers of the configuration a call was recorded with (what decides when it
    compacts again); None when the recording holds none."""
    configuration = call.configuration or {}
    strategy = configuration.get("strategy")
    if isinstance(strategy, Mapping):
        return strategy
    shot = configuration.get("one_shot")
    if isinstance(shot, Mapping):
        n = shot.get("trigger_tokens")
        return [always] if n is None else [tokens_exceed(int(n))]
    return None


def replay_verdict(replay: Replay) -> str:
    """The verdict of a replayed call as every page words it (headline and summary), and
    whether the replay reproduced the recording."""
    v = call_verdict(replay)
    if v is None:
        return replay.detail
    tail = "" if replay.reproduced else f" (replay differs: {replay.detail})"
    return f"{v.headline}: {v.summary}{tail}"


def call_point(call: RecordedCall, *, with_verdict: bool = True) -> CallPoint:
    """A call as a timeline point; its verdict comes from replaying it."""
    text = replay_verdict(replay_call(call)) if with_verdict else "not replayed"
    return CallPoint(
        seq=call.seq,
        timestamp=call.timestamp,
        status=call.status,
        tokens_before=call.tokens_before or 0,
        tokens_after=call.tokens_after or 0,
        configuration=config_name(call.configuration),
        verdict=text,
    )


def summary_point(call: CallSummary) -> CallPoint:
    """A listed call (no history) as a point: its recorded numbers only."""
    return CallPoint(
        seq=call.seq,
        timestamp=call.timestamp,
        status=call.status,
        tokens_before=call.tokens_before or 0,
        tokens_after=call.tokens_after or 0,
        configuration="",
        verdict=f"{call.status} (recorded; not replayed)",
    )


def lab_config_for(configuration: Mapping[str, Any] | None, label: str = "") -> LabConfig:
    """The lab configuration a recorded configuration describes."""
    if not configuration:
        raise ValueError("this call's recording holds no configuration (recording version 1)")
    profile = configuration.get("profile")
    guards = configuration.get("guards")
    shot = configuration.get("one_shot")
    if isinstance(shot, Mapping):
        return LabConfig(
            mode="compact",
            compact=CompactSettings.from_dict(shot),
            label=label,
            profile=profile if isinstance(profile, str) else None,
        )
    strategy = configuration.get("strategy")
    if not isinstance(strategy, Mapping):
        raise ValueError("this call's recording holds no strategy configuration")
    if strategy.get("type") == "pipeline":
        stages = tuple(_stage(s) for s in strategy.get("strategies") or [])
        target = strategy.get("target")
    else:
        stages, target = (_stage(strategy),), None
    return LabConfig(
        stages=stages,
        target=dict(target) if isinstance(target, Mapping) else None,
        label=label,
        guards=dict(guards) if isinstance(guards, Mapping) else None,
        profile=profile if isinstance(profile, str) else None,
    )


def _stage(config: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in ("summarizer", "profile") and v is not None}


def target_line(configuration: Mapping[str, Any] | None) -> int | None:
    """The token target the timeline draws (None when the configuration has none)."""
    try:
        return lab_config_for(configuration).target_tokens
    except ValueError:
        return None


def call_input(call: RecordedCall) -> tuple[str, bytes]:
    """The history the call saw as a transcript file (its wire format, JSON)."""
    name = f"{call.run}.call-{call.seq}.json"
    return name, json.dumps(call.history, ensure_ascii=False, indent=1).encode("utf-8")


def timeline_figure(points: Sequence[CallPoint], target: int | None) -> go.Figure:
    """Tokens before and after each call, the target, compactions and cannot-fits marked;
    hovering a point shows the call's verdict."""
    fig = go.Figure()
    xs = [p.seq for p in points]
    hover = [
        f"<b>{html.escape(p.label)}</b><br>"
        + (f"configuration: {html.escape(p.configuration)}<br>" if p.configuration else "")
        + _wrap(p.verdict)
        for p in points
    ]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[p.tokens_before for p in points],
            mode="lines",
            name="tokens before",
            line={"color": "#90a4ae", "width": 1.5},
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[p.tokens_after for p in points],
            mode="lines+markers",
            name="tokens sent",
            line={"color": "#1565c0", "width": 2},
            marker={
                "size": [11 if p.status != "unchanged" else 6 for p in points],
                "color": [STATUS_COLOURS.get(p.status, "#6a1b9a") for p in points],
                "symbol": [SYMBOLS.get(p.status, "diamond") for p in points],
            },
            customdata=xs,
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
        )
    )
    if target is not None:
        fig.add_hline(
            y=target,
            line={"color": "#ef6c00", "dash": "dash", "width": 1.5},
            annotation_text=f"target {num(target)}",
            annotation_position="top left",
        )
    fig.update_layout(
        height=340,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis_title="model call",
        yaxis_title="tokens",
        yaxis={"tickformat": PLOTLY_INT, "rangemode": "tozero"},
        legend={"orientation": "h", "y": 1.14, "x": 0, "xanchor": "left"},
        hoverlabel={"align": "left"},
    )
    return fig


def _wrap(text: str, width: int = 80) -> str:
    """Hover text broken into lines (plotly does not wrap), HTML-escaped."""
    return "<br>".join(html.escape(line) for line in textwrap.wrap(text, width))


__all__ = [
    "SORTS",
    "VERDICT_CALLS",
    "CallPoint",
    "call_input",
    "call_point",
    "call_verdict",
    "duration_text",
    "filter_runs",
    "lab_config_for",
    "problem_rows",
    "replay_verdict",
    "run_rows",
    "start_text",
    "summary_point",
    "target_line",
    "time_text",
    "timeline_figure",
]
