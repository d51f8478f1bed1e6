"""The things the notebook tools need from Jupyter, imported on first use: the ipywidgets
module, and ways to show a value or a plotly figure (no-ops outside a running kernel, so
scripts and tests drive a tuner without printing reprs)."""

from __future__ import annotations

import json
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


def show(value: Any) -> None:
    """Display ``value`` in the running notebook kernel; nothing outside one."""
    if in_kernel():
        from IPython.display import display

        display(value)  # type: ignore[no-untyped-call]


PLOTLY_MIME = "application/vnd.plotly.v1+json"


def show_figure(fig: Any) -> None:
    """Display a plotly figure as plotly's own mimetype only (the ``plotly_mimetype``
    renderer), whatever ``plotly.io.renderers.default`` says: a renderer such as
    ``notebook`` would put all of plotly.js (about 5 MB) into the widget's output, which
    bloats saved notebooks and stalls headless runs (nbconvert, papermill)."""
    if in_kernel():
        from IPython.display import display

        figure = json.loads(fig.to_json())
        display({PLOTLY_MIME: figure, "text/plain": "<plotly figure>"}, raw=True)  # type: ignore[no-untyped-call]


def clear(output: Any) -> None:
    """Clear an ``Output`` widget before it is drawn again (only inside a kernel: outside
    one, clearing writes terminal control codes)."""
    if in_kernel():
        output.clear_output(wait=True)
