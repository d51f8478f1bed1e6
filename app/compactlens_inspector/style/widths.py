"""How wide a table's columns must be so that no cell is cut, and what to shorten when a
table cannot be that wide.

A Streamlit table (glide-data-grid) sizes a column it is not told about from a sample of
its cells and leaves the outliers out: one long cell among short ones (an event's detail,
a long path) is drawn cut at the column's edge. :func:`fit_columns` measures every cell
instead, with the width each character has in the table's font (Source Sans, 14 px, as
Chromium draws it), and gives each column the pixels its widest cell needs. When the
columns together are wider than the room the table has, the widest text columns share
what is left (no column is narrowed below what the others need) and their longest cells
are shortened with an ellipsis, so what shows is whole words and the table scrolls
nowhere; the full text stays wherever the page shows the item itself. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactlens_inspector.style.numbers import num

#: Pixel width of each printable ASCII character in the tables' font (Source Sans 400,
#: 14 px), as Chromium's canvas measures it; other characters count as :data:`WIDE`.
_ASCII = (
    " 2.8 !4.05 \"5.96 #6.96 $6.96 %11.54 &8.53 '3.49 (4.24 )4.24 *5.85 +6.96 ,3.49 -4.35 "
    ".3.49 /4.9 06.96 16.96 26.96 36.96 46.96 56.96 66.96 76.96 86.96 96.96 :3.49 ;3.49 "
    "<6.96 =6.96 >6.96 ?5.95 @11.86 A7.6 B8.23 C7.99 D8.61 E7.38 F6.92 G8.64 H9.13 I3.68 "
    "J6.71 K8.11 L6.8 M10.18 N9.06 O9.3 P7.92 Q9.3 R7.97 S7.48 T7.5 U9.03 V7.21 W11 X7.18 "
    "Y6.66 Z7.55 [4.24 \\4.9 ]4.24 ^6.96 _7 `7.59 a7.06 b7.74 c6.38 d7.77 e6.94 f4.09 "
    "g7.06 h7.62 i3.44 j3.46 k6.93 l3.57 m11.61 n7.66 o7.59 p7.77 q7.77 r4.86 s5.87 t4.73 "
    "u7.62 v6.54 w10.07 x6.24 y6.54 z5.95 {4.24 |3.37 }4.24 ~6.96"
)
CHAR_PX: dict[str, float] = {" ": 2.8}
CHAR_PX.update({item[0]: float(item[1:]) for item in _ASCII.split()})
#: Any other character (accents, arrows, dashes, CJK): as wide as the widest common ones.
WIDE = 11.0
#: A cell's padding, left and right together (glide's ``cellHorizontalPadding`` is 8).
CELL_PAD = 16
#: What a column header needs besides its title: its padding and a little air (the menu
#: mark shows only under the pointer, over the title's end).
HEADER_PAD = 24
#: A little more than measured, so a font that renders a hair wider does not cut.
SLACK = 1.04
#: A text column is never narrowed below this to make room (about 18 characters).
MIN_TEXT_PX = 140
#: The room a full-width table has at the smallest supported window (1280x800 with the
#: sidebar open: 882 px in the main area, 848 in an expander): the columns of a table
#: never add up to more by default.
FULL_WIDTH_PX = 840
ELLIPSIS = "…"


def text_px(text: str) -> float:
    """How wide ``text`` is drawn on one line in a table cell, in pixels (whitespace runs
    are drawn as one space)."""
    return sum(CHAR_PX.get(ch, WIDE) for ch in " ".join(text.split())) * SLACK


def _px(ch: str) -> float:
    return CHAR_PX.get(ch, WIDE) * SLACK


def shorten(text: str, px: float) -> str:
    """``text`` cut with an ellipsis to fit ``px`` pixels; a word with no space (a path, an
    identifier) keeps its start and its end, which tell it apart, and loses the middle."""
    if text_px(text) <= px:
        return text
    flat = " ".join(text.split())
    room = px - text_px(ELLIPSIS)
    if " " not in flat:
        # Alternate: one character from the start, one from the end, while they fit.
        used, i, j = 0.0, 0, len(flat)
        while i < j:
            step = _px(flat[i]) if i <= len(flat) - j else _px(flat[j - 1])
            if used + step > room:
                break
            used += step
            if i <= len(flat) - j:
                i += 1
            else:
                j -= 1
        return flat[:i] + ELLIPSIS + flat[j:]
    used, end = 0.0, 0
    while end < len(flat) and used + _px(flat[end]) <= room:
        used += _px(flat[end])
        end += 1
    out = flat[:end]
    # End on a whole word when one fits; the ellipsis says the rest was left out.
    if end < len(flat) and flat[end] != " " and " " in out:
        out = out.rsplit(" ", 1)[0]
    return out.rstrip(" ,;:·-") + ELLIPSIS


def cell_text(value: Any) -> str:
    """A cell as the table shows it: integers grouped (``8,667``), nothing for a missing
    value, text as it is."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return num(value)
    return str(value)


@dataclass(frozen=True, slots=True)
class FittedTable:
    """Rows whose long text cells were shortened, and each column's width in pixels."""

    rows: list[dict[str, Any]]
    widths: dict[str, int]


def fit_columns(
    rows: Sequence[Mapping[str, Any]],
    *,
    room: int = FULL_WIDTH_PX,
    fixed: Sequence[str] = (),
    titles: Mapping[str, str] | None = None,
) -> FittedTable:
    """Each column's width so its widest cell and its title fit; when they add up to more
        than ``room``, the widest text columns are narrowed to one common width (never below
        :data:`MIN_TEXT_PX`) and their longer cells shortened. Columns in ``fixed`` (sized by
        the caller, or hidden) are neither measured nor changed; ``titles`` are the headers shown
    instead of column names."""
    names: dict[str, None] = {}
    header: dict[str, float] = {}
    for row in rows:
        for name in row:
            names.setdefault(name)
    need: dict[str, float] = {}
    text_cols: set[str] = set()
    for name in names:
        if name in fixed:
            continue
        cells = [row.get(name) for row in rows]
        widest = max((text_px(cell_text(v)) for v in cells), default=0.0)
        title = (titles or {}).get(name) or name
        header[name] = text_px(title) + HEADER_PAD
        need[name] = max(widest + CELL_PAD, header[name])
        if any(isinstance(v, str) for v in cells):
            text_cols.add(name)
    # Each width is rounded up by a pixel: keep those pixels out of the room.
    cap = _common_width(need, text_cols, room - len(need))
    # A narrowed column still shows its whole header and a readable start of its text.
    widths = {
        name: int(
            max(min(px, cap), min(px, max(header[name], MIN_TEXT_PX)))
            if name in text_cols and cap is not None
            else px
        )
        + 1
        for name, px in need.items()
    }
    if cap is None:
        return FittedTable(rows=[dict(row) for row in rows], widths=widths)
    narrowed = {n for n in text_cols if need[n] > cap}
    fitted = [
        {
            k: shorten(v, widths[k] - CELL_PAD) if k in narrowed and isinstance(v, str) else v
            for k, v in row.items()
        }
        for row in rows
    ]
    return FittedTable(rows=fitted, widths=widths)


def _common_width(need: Mapping[str, float], text_cols: set[str], room: int) -> float | None:
    """The width the widest text columns are narrowed to so every column fits ``room``;
    None when they fit already (or nothing can be narrowed)."""
    if sum(need.values()) <= room or not text_cols:
        return None
    others = sum(px for name, px in need.items() if name not in text_cols)
    wide = sorted((need[n] for n in text_cols), reverse=True)
    left = room - others
    # Water-filling: the k widest share what the narrower ones leave.
    for k in range(1, len(wide) + 1):
        rest = sum(wide[k:])
        cap = (left - rest) / k
        if k == len(wide) or cap >= wide[k]:
            return max(cap, MIN_TEXT_PX)
    return MIN_TEXT_PX


def by_column(rows: Sequence[Mapping[str, Any]], *, first: str, name: str) -> list[dict[str, Any]]:
    """``rows`` turned on their side: one row per column of ``rows`` (its name under
    ``first``), one column per row of ``rows`` (headed ``name`` and its number, ``#1``...),
    every value as the table shows it. For a few records with many long-named fields,
    which side by side would not fit any page."""
    names: dict[str, None] = {}
    for row in rows:
        for key in row:
            names.setdefault(key)
    return [
        {first: key, **{f"{name}{i}": cell_text(row.get(key)) for i, row in enumerate(rows, 1)}}
        for key in names
    ]
