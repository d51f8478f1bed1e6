"""Tables whose integer columns carry thousands separators (``8,667``, not ``8667``) and
whose text cannot act as a spreadsheet formula.

:func:`table` is ``st.dataframe`` with a :data:`~compactlens_inspector.style.numbers.INT_FORMAT`
number column for every column that holds integers (booleans excepted); columns the
caller configures keep the caller's settings. The values stay numbers, so sorting works.
Text cells go through :func:`~compactlens_inspector.style.safety.sheet_safe`: the table's
toolbar downloads (CSV) and copies (TSV) exactly the cells it shows, so a cell starting
with ``= + - @`` shows and exports with the CLI's leading ``'``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from compactlens_inspector.style.numbers import INT_FORMAT
from compactlens_inspector.style.safety import sheet_safe


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


def table(
    rows: Sequence[Mapping[str, Any]],
    *,
    key: str,
    column_config: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """``st.dataframe(rows)`` with integer columns grouped and text cells made
    spreadsheet-safe; returns what it returns."""
    rows = sheet_safe(rows)
    kwargs.setdefault("hide_index", True)
    kwargs.setdefault("width", "stretch")
    return st.dataframe(rows, key=key, column_config=number_config(rows, column_config), **kwargs)
