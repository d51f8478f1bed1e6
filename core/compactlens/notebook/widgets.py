"""The two things the notebook tools need from Jupyter, imported on first use: the
ipywidgets module, and a way to show a value (a no-op outside a running kernel, so scripts
and tests drive a tuner without printing reprs)."""

from __future__ import annotations

from typing import Any

from compactlens.model.errors import MissingDependencyError


def load_widgets() -> Any:
    """The ``ipywidgets`` module, or an ImportError naming the extra to install."""
    try:
        import ipywidgets  # type: ignore[import-untyped]
    except ModuleNotFoundError as exc:
        raise MissingDependencyError(
            "compactlens.notebook needs ipywidgets: pip install 'compactlens[notebook]'"
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


def clear(output: Any) -> None:
    """Clear an ``Output`` widget before it is drawn again (only inside a kernel: outside
    one, clearing writes terminal control codes)."""
    if in_kernel():
        output.clear_output(wait=True)
