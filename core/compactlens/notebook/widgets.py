"""The things the notebook tools need from Jupyter, imported on first use: the ipywidgets
module, a panel shown with a static copy of its result beside it, and figures that follow
the theme and update in place (displays are no-ops outside a running kernel, so scripts
and tests drive a tuner without printing reprs).

Figures are displayed as plotly's own mimetype or a ``FigureWidget``, never through a
renderer such as ``notebook`` that puts all of plotly.js (about 5 MB) into the output:
that bloats saved notebooks and stalls headless runs (nbconvert, papermill)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compactlens.model.errors import MissingDependencyError, install_hint


def load_widgets() -> Any:
    """The ``ipywidgets`` module, or an ImportError naming the extra to install."""
    try:
        import ipywidgets  # type: ignore[import-untyped]
    except ModuleNotFoundError as exc:
        raise MissingDependencyError(
            "compactlens.notebook needs ipywidgets: " + install_hint("notebook")
        ) from exc
    return ipywidgets


def in_kernel() -> bool:
    """True inside a running Jupyter kernel."""
    try:
        from IPython import get_ipython
    except ModuleNotFoundError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


PLOTLY_MIME = "application/vnd.plotly.v1+json"


def theme_aware(fig: Any) -> Any:
    """``fig`` with a transparent background, grey ink and faint grid lines, so it reads on
    JupyterLab's light and dark themes alike (plotly cannot take the theme's CSS
    variables)."""
    ink = "#8A929B"
    grid = "rgba(138,146,155,0.25)"
    fig.update_layout(
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        font_color=ink,
        title_font_color=ink,
        legend_font_color=ink,
    )
    fig.update_xaxes(gridcolor=grid, zerolinecolor=grid, linecolor=grid)
    fig.update_yaxes(gridcolor=grid, zerolinecolor=grid, linecolor=grid)
    return fig


#: A rule the live panel carries: while the panel is drawn, the static copy of its card
#: displayed after it in the same cell is hidden. Without a kernel or saved widget state
#: the panel is not drawn, the rule is absent, and the copy shows the last result (a saved
#: notebook, an export, a code host).
HIDE_SNAPSHOT_CSS = (
    "<style>.jp-OutputArea-child:has(.compactlens-live) ~ "
    ".jp-OutputArea-child:has(.compactlens-snapshot){display:none}</style>"
)


class Snapshot:
    """What a panel shows after it, outside the widgets: a static copy of its card (HTML,
    hidden while the panel is live) and its figure (plotly's mimetype). Each is displayed
    once and then updated through its display id: JupyterLab keeps the figure's renderer
    and plotly.js redraws the figure in place, and the saved file holds the last result."""

    def __init__(self, *, with_figure: bool) -> None:
        self.with_figure = with_figure
        self._card: Any = None
        self._figure: Any = None
        self.html = ""
        self.figure: Any = None

    def update(self, html: str, figure: Any) -> None:
        """Show ``html`` and ``figure`` (None: no figure) from now on."""
        self.html, self.figure = html, figure
        if self._card is not None:
            self._card.update(_card_bundle(html), raw=True)
        if self._figure is not None:
            self._figure.update(_figure_bundle(figure), raw=True)

    def show(self) -> None:
        """Display the copy (inside a kernel; nothing outside one)."""
        if not in_kernel():
            return
        from IPython.display import display

        self._card = display(_card_bundle(self.html), raw=True, display_id=True)  # type: ignore[no-untyped-call]
        if self.with_figure:
            self._figure = display(_figure_bundle(self.figure), raw=True, display_id=True)  # type: ignore[no-untyped-call]


def _card_bundle(html: str) -> dict[str, str]:
    return {"text/html": f'<div class="compactlens-snapshot">{html}</div>', "text/plain": ""}


def _figure_bundle(figure: Any) -> dict[str, Any]:
    if figure is None:
        return {"text/plain": "(no figure: the current settings do not run)"}
    return {PLOTLY_MIME: json.loads(figure.to_json()), "text/plain": "<plotly figure>"}


@dataclass(frozen=True, slots=True)
class FixControls:
    """A debugger panel's widgets below its card: the list of fixes, their table, the
    Apply button, where the applied fix's verdict goes, and the panel holding them."""

    choice: Any
    table: Any
    apply_button: Any
    after: Any
    panel: Any


def fix_controls(
    w: Any,
    *,
    before: Any,
    note: str,
    lines: Sequence[str],
    empty: str,
    table_html: str,
    on_apply: Callable[[], Any],
    kind: str,
) -> FixControls:
    """The panel of a debugger (``kind``: its CSS class): ``before`` (its card), ``note``,
    the fixes' table, one line per fix to pick (``empty`` when there is none) and an Apply
    button that calls ``on_apply``."""
    options = [(f"{i + 1}. {line}", i) for i, line in enumerate(lines)]
    # A list box (one line per fix, clipped to its width), not radio buttons: long
    # sentences in radio labels wrapped over each other and under the Apply button.
    choice = w.Select(
        options=options or [(empty, -1)],
        rows=max(2, min(len(options), 8)),
        layout=w.Layout(width="100%", max_width="60em"),
        disabled=not options,
    )
    table = w.HTML(table_html)
    button = w.Button(
        description="Apply the selected fix",
        button_style="primary",
        disabled=not options,
        layout=w.Layout(width="16em", margin="6px 0"),
    )
    button.on_click(lambda _b: on_apply())
    after = w.HTML()
    panel = w.VBox(
        [before, w.HTML(note), table, choice, button, after, w.HTML(HIDE_SNAPSHOT_CSS)],
        layout=w.Layout(max_width="100%", overflow="hidden"),
    )
    panel.add_class(kind)
    panel.add_class("compactlens-live")
    return FixControls(choice=choice, table=table, apply_button=button, after=after, panel=panel)


def window_words(window: int | None) -> str:
    """The context window a panel's verdicts are judged against, in words (each panel
    says it: the inspector's default may differ from what a notebook passed)."""
    if not window:
        return "no context window checked"
    return f"context window {window:,}"


def show_panel(panel: Any, text: str) -> None:
    """Display the widget ``panel`` with ``text`` as its plain-text form (instead of the
    widget's ``VBox(...)`` repr, which is what a front end without widgets shows)."""
    if not in_kernel():
        return
    from IPython.display import display

    bundle = panel._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    display({**data, "text/plain": text}, raw=True)  # type: ignore[no-untyped-call]
