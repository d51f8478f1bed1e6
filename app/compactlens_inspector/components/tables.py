"""Tables whose integer columns carry thousands separators (``8,667``, not ``8667``) and
whose text cannot act as a spreadsheet formula.

:func:`table` is ``st.dataframe`` with a :data:`~compactlens_inspector.style.numbers.INT_FORMAT`
number column for every column that holds integers (booleans excepted); columns the
caller configures keep the caller's settings. The values stay numbers, so sorting works.
Text cells go through :func:`~compactlens_inspector.style.safety.sheet_safe`: the table's
toolbar downloads (CSV) and copies (TSV) exactly the cells it shows, so a cell starting
with ``= + - @`` shows and exports with the CLI's leading ``'``.

Every column the caller gives no width is as wide as its widest cell needs
(:func:`~compactlens_inspector.style.widths.fit_columns`): the grid's own sizing leaves
long cells out and draws them cut. A table in part of the page (a column of
``st.columns``) passes its ``room`` in pixels; over it, the longest text is shortened with
an ellipsis rather than cut or hidden behind a scroll bar.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from compactlens_inspector.style.numbers import INT_FORMAT
from compactlens_inspector.style.safety import md_escape, sheet_safe
from compactlens_inspector.style.widths import FULL_WIDTH_PX, fit_columns

#: What a missing value shows.
MISSING = "—"
#: The width of the checkbox column a table with row selection shows first.
SELECT_PX = 40


def int_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The columns whose values are all integers (or missing), with at least one integer."""
    order: dict[str, None] = {}
    ints: set[str] = set()
    other: set[str] = set()
    for row in rows:
        for name, value in row.items():
            order.setdefault(name)
            if value is None:
                continue
            if isinstance(value, int) and not isinstance(value, bool):
                ints.add(name)
            else:
                other.add(name)
    return [name for name in order if name in ints and name not in other]


def number_config(
    rows: Sequence[Mapping[str, Any]], column_config: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``column_config`` plus a grouped number column for each integer column it leaves out."""
    config: dict[str, Any] = {
        name: st.column_config.NumberColumn(name, format=INT_FORMAT) for name in int_columns(rows)
    }
    config.update(column_config or {})
    return config


def column_room(columns: int) -> int:
    """The room of a table in one of ``columns`` equal ``st.columns`` (1 rem gaps)."""
    return (FULL_WIDTH_PX - 16 * (columns - 1)) // max(columns, 1)


def table(
    rows: Sequence[Mapping[str, Any]],
    *,
    key: str,
    column_config: Mapping[str, Any] | None = None,
    room: int = FULL_WIDTH_PX,
    **kwargs: Any,
) -> Any:
    """``st.dataframe(rows)`` with integer columns grouped, text cells made
    spreadsheet-safe and every column wide enough for its cells within ``room`` pixels;
    returns what it returns."""
    rows = sheet_safe(rows)
    config = number_config(rows, column_config)
    # Columns the caller sized or hid keep that; the row-selection checkbox takes room.
    sized = [
        n for n, c in config.items() if c is None or (isinstance(c, Mapping) and c.get("width"))
    ]
    titles = {
        n: str(c["label"]) for n, c in config.items() if isinstance(c, Mapping) and c.get("label")
    }
    if kwargs.get("on_select", "ignore") != "ignore":
        room -= SELECT_PX
    fitted = fit_columns(rows, room=room, fixed=sized, titles=titles)
    for name, px in fitted.widths.items():
        given = config.get(name)
        if isinstance(given, Mapping):
            config[name] = {**given, "width": px}
        else:
            config[name] = st.column_config.Column(width=px)
    kwargs.setdefault("hide_index", True)
    kwargs.setdefault("width", "stretch")
    # A missing value reads as a dash, never as Python's "None".
    kwargs.setdefault("placeholder", MISSING)
    return st.dataframe(fitted.rows, key=key, column_config=config, **kwargs)


def notes_under(notes: Sequence[tuple[str, str]]) -> None:
    """Long notes about a table's rows, listed under it (``**label**: note``, one a line):
    a sentence in a column is cut however wide the table is. Nothing when there are none."""
    lines = [f"- **{md_escape(label)}**: {md_escape(note)}" for label, note in notes if note]
    if lines:
        st.markdown("\n".join(lines))
