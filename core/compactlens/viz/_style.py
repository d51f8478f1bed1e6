"""What every figure shares: the colours, the layout and the trigger / target lines.

No plotly import at run time: the figures pass their own ``go.Figure`` in. The decision and
status colours live in :mod:`compactlens.model` (the rich-display cards use them too).
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any, get_args

from compactlens.engine import Action, GroupKind
from compactlens.model import DECISION_COLORS, STATUS_COLORS
from compactlens.viz.words import PLOTLY_INT

if TYPE_CHECKING:
    import plotly.graph_objects as go  # type: ignore[import-untyped]

#: Every decision, in the order figures stack them.
ACTIONS: tuple[str, ...] = get_args(Action)
#: Every group kind, in the order figures stack them.
KINDS: tuple[str, ...] = tuple(kind.value for kind in GroupKind)
__all__ = [
    "ACTIONS",
    "DECISION_COLORS",
    "EVENT_COLORS",
    "KINDS",
    "KIND_COLORS",
    "KIND_LABELS",
    "ROLE_COLORS",
    "STATUS_COLORS",
    "TARGET_COLOR",
    "TRIGGER_COLOR",
    "WEBGL_POINTS",
]

#: Who speaks. The inspector's theme takes these fills, so a role has one colour in
#: charts, chat bubbles and the context gauge.
ROLE_COLORS: dict[str, str] = {
    "system": "#5C677D",
    "developer": "#A0527A",
    "user": "#2B6CB0",
    "assistant": "#2BB673",
    "tool": "#F2A541",
}
#: Group kinds in the colours of their roles where the kind is the role (system, user);
#: a darker shade of the role's colour where it is not (an assistant-text group, a tool-call
#: group holding the assistant's call and the tool's results), so a figure that shows roles
#: and kinds together (the composition) never gives two categories one colour; a summary in
#: the "summarized" accent.
KIND_COLORS: dict[str, str] = {
    "system": ROLE_COLORS["system"],
    "user": ROLE_COLORS["user"],
    "assistant_text": "#1B8A55",
    "tool_call": "#B86E0B",
    "summary": DECISION_COLORS["summarized"],
}
KIND_LABELS: dict[str, str] = {
    "system": "system",
    "user": "user",
    "assistant_text": "assistant text",
    "tool_call": "tool call + results",
    "summary": "summary",
}
EVENT_COLORS: dict[str, str] = {
    "started": "#1F77B4",
    "applied": "#2BB673",
    "skipped": "#ADB5BD",
    "target-missed": "#F2A541",
    "failed": "#E4572E",
    "completed": "#3D4B5C",
    "restored": "#7B61FF",
}
#: The target and trigger lines: colours no decision, kind, status or event uses, so a line
#: is never read as one of the categories it is drawn over.
TARGET_COLOR = "#C2185B"
TRIGGER_COLOR = "#0E7490"

#: Above this many points, line charts use WebGL.
WEBGL_POINTS = 2000


#: The ink, grid and pattern of plotly's ``plotly_white`` template.
_INK = "#2a3f5f"
_GRID = "#EBF0F8"
_COLORWAY = (
    "#636efa",
    "#EF553B",
    "#00cc96",
    "#ab63fa",
    "#FFA15A",
    "#19d3f3",
    "#FF6692",
    "#B6E880",
    "#FF97FF",
    "#FECB52",
)


def _template() -> dict[str, Any]:
    """The part of plotly's ``plotly_white`` template these figures use: 2-D axes, bars,
    lines and pies, with the same values, so a figure looks the same.

    Naming ``plotly_white`` copied and validated the whole template (its 3-D scenes,
    maps, polar and ternary axes and some 25 trace types: about 9 ms of CPU a figure);
    this one is built per figure, so no figure shares mutable state with another. In the
    inspector, Streamlit's theme still merges its own values into it as before.
    """
    axis = {
        "automargin": True,
        "gridcolor": _GRID,
        "linecolor": _GRID,
        "ticks": "",
        "title": {"standoff": 15},
        "zerolinecolor": _GRID,
        "zerolinewidth": 2,
    }
    pattern = {"fillmode": "overlay", "size": 10, "solidity": 0.2}
    return {
        "layout": {
            "annotationdefaults": {"arrowcolor": _INK, "arrowhead": 0, "arrowwidth": 1},
            "autotypenumbers": "strict",
            "colorway": list(_COLORWAY),
            "font": {"color": _INK},
            "hoverlabel": {"align": "left"},
            "hovermode": "closest",
            "paper_bgcolor": "white",
            "plot_bgcolor": "white",
            "shapedefaults": {"line": {"color": _INK}},
            "title": {"x": 0.05},
            "xaxis": axis,
            "yaxis": dict(axis),
        },
        "data": {
            "bar": [
                {
                    "error_x": {"color": _INK},
                    "error_y": {"color": _INK},
                    "marker": {"line": {"color": "white", "width": 0.5}, "pattern": pattern},
                }
            ],
            "pie": [{"automargin": True}],
            "scatter": [{"fillpattern": dict(pattern)}],
            "scattergl": [{"marker": {"colorbar": {"outlinewidth": 0, "ticks": ""}}}],
        },
    }


#: Pixels of the title line, of one legend row and of one legend entry's marker and gap;
#: an entry's text is about ``_LEGEND_CHAR_PX`` a character. Legends wrap at the narrowest
#: width a figure is drawn at (half of a wide page).
_TITLE_PX = 30
_LEGEND_ROW_PX = 22
_LEGEND_ENTRY_PX = 44
_LEGEND_CHAR_PX = 7
_LEGEND_WRAP_PX = 560


def legend_rows(fig: go.Figure) -> int:
    """The rows the figure's horizontal legend takes at :data:`_LEGEND_WRAP_PX` (0: none)."""
    shown = [t for t in fig.data if t.showlegend is not False and t.name]
    if not shown or (len(fig.data) < 2 and not any(t.showlegend for t in fig.data)):
        return 0
    # A pie's legend lists its slices, and pies share the entries of equal labels.
    names = [str(label) for t in shown for label in (t.labels if t.type == "pie" else (t.name,))]
    rows, used = 1, 0
    for name in dict.fromkeys(names):
        width = _LEGEND_ENTRY_PX + _LEGEND_CHAR_PX * len(name)
        if used and used + width > _LEGEND_WRAP_PX:
            rows, used = rows + 1, 0
        used += width
    return rows


def _layout(fig: go.Figure, title: str, *, height: int = 360, **extra: Any) -> go.Figure:
    """The shared layout. The title sits at the top of the figure and the legend in its
    own band between the title and the plot (left-aligned, growing a row at a time), so
    a legend never covers the title, whatever their lengths."""
    rows = legend_rows(fig)
    top = 12 + _TITLE_PX + rows * _LEGEND_ROW_PX + 10
    margin = {"l": 60, "r": 20, "t": top, "b": 48, **extra.pop("margin", {})}
    margin["t"] = max(int(margin["t"]), top)
    total = height + rows * _LEGEND_ROW_PX
    # Subplot titles sit just above each plot: the legend goes in the band under the
    # figure's title instead (container coordinates), so neither covers the other.
    subplot_titles = any(
        a.yref == "paper" and a.yanchor == "bottom" for a in fig.layout.annotations
    )
    if subplot_titles:
        margin["t"] += 20
    settings: dict[str, Any] = {
        "title": {
            "text": title,
            "x": 0.0,
            "xanchor": "left",
            "xref": "container",
            "y": 1.0,
            "yanchor": "top",
            "yref": "container",
            "pad": {"t": 12, "l": 12},
            "font": {"size": 16},
        },
        "height": total + (20 if subplot_titles else 0),
        "margin": margin,
        "legend": {
            "orientation": "h",
            "yanchor": "top",
            "y": 1.0 - (12 + _TITLE_PX) / (total + (20 if subplot_titles else 0)),
            "yref": "container",
            "xanchor": "left",
            "x": 0.0,
        },
        "hoverlabel": {"align": "left"},
        "font": {"family": "Inter, Segoe UI, Helvetica, Arial, sans-serif", "size": 12},
    }
    settings.update(extra)
    fig.layout.template = _template()  # assigned: replaces the default, merges nothing
    fig.update_layout(**settings)
    _group_ticks(fig)
    return fig


def _group_ticks(fig: go.Figure) -> None:
    """Thousands separators on every numeric axis that has no format of its own."""

    def group(axis: Any) -> None:
        own = any(v is not None for v in (axis.tickprefix, axis.ticksuffix, axis.ticktext))
        if axis.tickformat is None and not own and axis.type != "category":
            axis.tickformat = PLOTLY_INT

    fig.for_each_xaxis(group)
    fig.for_each_yaxis(group)


#: Where a line's label sits, as plotly's ``annotation_position`` places it: for a
#: horizontal line (x in the plot's width, x anchor, y anchor) and for a vertical line
#: (x anchor, y anchor, with y at the top of the plot).
_HLABEL: dict[str, tuple[float, str, str]] = {
    "top left": (0, "left", "bottom"),
    "top right": (1, "right", "bottom"),
}
_VLABEL: dict[str, tuple[str, str]] = {"top": ("center", "bottom"), "top left": ("right", "top")}


def _line(
    fig: go.Figure,
    *,
    text: str,
    color: str,
    dash: str,
    x: float | None = None,
    y: float | None = None,
    position: str = "top left",
) -> None:
    """A labelled line across the plot at ``y`` (horizontal) or ``x`` (vertical), with
    the shape and label plotly's ``add_hline`` / ``add_vline`` would draw (those copy the
    figure's layout for each line: about 4 ms of CPU a line). The first axes only."""
    line = {"color": color, "dash": dash, "width": 2}
    label: dict[str, Any] = {"font": {"color": color}, "showarrow": False, "text": text}
    if y is not None:
        span = {"xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y}
        at, xanchor, yanchor = _HLABEL[position]
        label |= {"xref": "x domain", "x": at, "yref": "y", "y": y}
    else:
        span = {"xref": "x", "x0": x, "x1": x, "yref": "y domain", "y0": 0, "y1": 1}
        xanchor, yanchor = _VLABEL[position]
        label |= {"xref": "x", "x": x, "yref": "y domain", "y": 1}
    fig.add_shape(type="line", line=line, **span)
    fig.add_annotation(xanchor=xanchor, yanchor=yanchor, **label)


def _hline(fig: go.Figure, y: float | None, label: str, color: str, dash: str = "dash") -> None:
    if y is None:
        return
    _line(fig, y=y, text=f"{label}: {y:,.0f}", color=color, dash=dash)


def _trigger_target(fig: go.Figure, trigger: int | None, target: int | None) -> None:
    """The trigger and target lines (one line when they are the same number)."""
    if trigger is not None and trigger == target:
        _hline(fig, target, "trigger and target", TARGET_COLOR, "dot")
        return
    _hline(fig, trigger, "trigger", TRIGGER_COLOR)
    _hline(fig, target, "target", TARGET_COLOR, "dot")


def _buckets(n: int, max_bars: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into at most ``max_bars`` contiguous (start, stop) buckets."""
    if n <= max_bars:
        return [(i, i + 1) for i in range(n)]
    size = -(-n // max_bars)
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def _wrap(text: str, width: int = 70) -> str:
    words = escape(text).split()
    lines: list[str] = []
    line = ""
    for w in words:
        if len(line) + len(w) + 1 > width and line:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    if line:
        lines.append(line)
    return "<br>".join(lines[:6])
