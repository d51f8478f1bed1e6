"""How the inspector writes numbers: with thousands separators, everywhere.

One place for every number the app shows: text (``num``), text that came from the
library with bare integers in it (``group_digits``), fractions (``share``), costs to the
cent (``money``), prices per million tokens (``price``) and plotly
axes (``PLOTLY_INT``) come from :mod:`compactlens.viz`, which the figures share with
notebooks; Streamlit widgets and table columns use :data:`INT_FORMAT` (a sprintf format).
No Streamlit here.
"""

from __future__ import annotations

from compactlens.viz import PLOTLY_INT, group_digits, money, num, price, share

__all__ = [
    "INT_FORMAT",
    "PLOTLY_INT",
    "file_size",
    "group_digits",
    "money",
    "num",
    "price",
    "share",
    "short",
]

#: sprintf format of an integer with thousands separators (``st.slider``, ``NumberColumn``).
INT_FORMAT = "%,d"


def short(n: int) -> str:
    """``59.8k`` for 59,754, ``1.25M`` for 1,254,000; grouped as :func:`num` below 1,000."""
    if n < 1_000:
        return num(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def file_size(n_bytes: int) -> str:
    """``74.9 KB``: a file's size as Streamlit's file uploader counts it (1 KB = 1,000
    bytes), so the two never disagree on one file (``76.7KB`` beside ``74.9 KB``)."""
    if n_bytes < 1_000:
        return f"{num(n_bytes)} bytes"
    if n_bytes < 1_000_000:
        return f"{n_bytes / 1_000:,.1f} KB"
    return f"{n_bytes / 1_000_000:,.1f} MB"
