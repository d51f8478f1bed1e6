"""How the inspector writes numbers: with thousands separators, everywhere.

One place for every number the app shows: text (:func:`num`), text that came from the
library with bare integers in it (:func:`group_digits`, for findings, reasons and
trigger descriptions such as ``tokens > 60000``), Streamlit widgets and table columns
(:data:`INT_FORMAT`, a sprintf format) and plotly axes and hover labels
(:data:`PLOTLY_INT`, a d3 format). No Streamlit here.
"""

from __future__ import annotations

import re

#: sprintf format of an integer with thousands separators (``st.slider``, ``NumberColumn``).
INT_FORMAT = "%,d"

#: d3 format of an integer with thousands separators (plotly ``tickformat``, ``%{y:,}``).
PLOTLY_INT = ","

# A bare integer of five or more digits: not part of a word, an id (call_12345), a
# decimal (0.12345), an already grouped number (12,345) or a version (1.23456).
_BARE = re.compile(r"(?<![\w.,])\d{4,}(?![\w.,]\d|\w)")


def num(value: int | float) -> str:
    """``8,667`` for 8667 (floats are rounded to a whole number first)."""
    return f"{round(value):,}"


def group_digits(text: str) -> str:
    """``text`` with every bare integer of four or more digits grouped: ``tokens > 60000``
    becomes ``tokens > 60,000``; ids such as ``call_12345`` are left alone."""
    return _BARE.sub(lambda m: f"{int(m.group()):,}", text)


def short(n: int) -> str:
    """``59.8k`` for 59,754, ``1.25M`` for 1,254,000; grouped as :func:`num` below 1,000."""
    if n < 1_000:
        return num(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def share(fraction: float) -> str:
    """A fraction as a whole percentage, ``<1%`` / ``>99%`` rather than a misleading 0 / 100."""
    if 0 < fraction < 0.01:
        return "<1%"
    if 0.99 < fraction < 1:
        return ">99%"
    return f"{fraction:.0%}"
