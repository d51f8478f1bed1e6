"""Plotly figures of compactlens values, for notebooks, the inspector and HTML reports.

Every figure builder is a plain function from library values to a ``plotly`` figure::

    from compactlens.viz import decision_map, tokens_per_group
    tokens_per_group(index).show()
    decision_map(result).show()

plotly is imported only when a figure is first asked for (``pip install
compactlens[viz]``); the plain data behind the figures (:func:`timeline_events`,
:class:`SweepPoint`, the colours and the number words) needs no plotly. Colours are the same
everywhere: one per decision, group kind, status and event. Large transcripts are aggregated
into buckets or drawn with WebGL so a figure stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from compactlens.model.errors import MissingDependencyError, install_hint
from compactlens.viz._style import (
    ACTIONS,
    DECISION_COLORS,
    EVENT_COLORS,
    KIND_COLORS,
    KIND_LABELS,
    KINDS,
    ROLE_COLORS,
    STATUS_COLORS,
    TARGET_COLOR,
    TRIGGER_COLOR,
    WEBGL_POINTS,
)
from compactlens.viz.events import (
    ReplayPoint,
    RunLike,
    SweepPoint,
    TimelineEvent,
    decisions_by_group,
    groups_kept,
    timeline_events,
)
from compactlens.viz.words import (
    PARAM_WORDS,
    PLOTLY_INT,
    STAGE_PARAM_WORDS,
    group_digits,
    money,
    nice_step,
    num,
    param_words,
    part_words,
    price,
    share,
)

if TYPE_CHECKING:
    from compactlens.viz.compaction import budget_bar, budget_waterfall, decision_map
    from compactlens.viz.compare import compare_chart, sweep_chart
    from compactlens.viz.costs import cost_chart, cumulative_costs
    from compactlens.viz.timeline import event_timeline, replay_chart
    from compactlens.viz.transcript import (
        composition,
        cumulative_tokens,
        estimate_vs_exact,
        tokens_per_group,
    )

#: The module of every name that needs plotly (imported on first use).
_FIGURES: dict[str, str] = {
    "budget_bar": "compaction",
    "budget_waterfall": "compaction",
    "decision_map": "compaction",
    "compare_chart": "compare",
    "sweep_chart": "compare",
    "cost_chart": "costs",
    "cumulative_costs": "costs",
    "event_timeline": "timeline",
    "replay_chart": "timeline",
    "composition": "transcript",
    "cumulative_tokens": "transcript",
    "estimate_vs_exact": "transcript",
    "tokens_per_group": "transcript",
}


def __getattr__(name: str) -> Any:
    module = _FIGURES.get(name)
    if module is None:
        raise AttributeError(f"module 'compactlens.viz' has no attribute {name!r}")
    try:
        loaded = importlib.import_module(f"compactlens.viz.{module}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "plotly":
            raise MissingDependencyError(
                f"compactlens.viz.{name} draws with plotly: " + install_hint("viz")
            ) from exc
        raise
    value = getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "ACTIONS",
    "DECISION_COLORS",
    "EVENT_COLORS",
    "KINDS",
    "KIND_COLORS",
    "KIND_LABELS",
    "PARAM_WORDS",
    "PLOTLY_INT",
    "ROLE_COLORS",
    "STAGE_PARAM_WORDS",
    "STATUS_COLORS",
    "TARGET_COLOR",
    "TRIGGER_COLOR",
    "WEBGL_POINTS",
    "ReplayPoint",
    "RunLike",
    "SweepPoint",
    "TimelineEvent",
    "budget_bar",
    "budget_waterfall",
    "compare_chart",
    "composition",
    "cost_chart",
    "cumulative_costs",
    "cumulative_tokens",
    "decision_map",
    "decisions_by_group",
    "estimate_vs_exact",
    "event_timeline",
    "group_digits",
    "groups_kept",
    "money",
    "nice_step",
    "num",
    "param_words",
    "part_words",
    "price",
    "replay_chart",
    "share",
    "sweep_chart",
    "timeline_events",
    "tokens_per_group",
]
