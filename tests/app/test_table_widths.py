"""Table columns sized from every cell (components/tables.py, style/widths.py): no cell
is wider than its column, a table stays within its room by shortening its longest text,
and a shortened cell says so with an ellipsis."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compactlens_inspector.style.widths import (
    CELL_PAD,
    ELLIPSIS,
    MIN_TEXT_PX,
    by_column,
    fit_columns,
    shorten,
    text_px,
)

words = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 /._-→", max_size=300
)


def test_one_long_cell_among_short_ones_sizes_its_column() -> None:
    rows = [{"#": i, "detail": ""} for i in range(9)]
    rows[0]["detail"] = "79 messages, 8,667 tokens"
    fitted = fit_columns(rows)
    assert fitted.widths["detail"] >= text_px("79 messages, 8,667 tokens") + CELL_PAD
    assert fitted.rows == rows  # it fits: nothing shortened


@given(cells=st.lists(st.tuples(words, words, st.integers(0, 10**9)), min_size=1, max_size=8))
def test_every_cell_fits_its_column_and_the_table_its_room(
    cells: list[tuple[str, str, int]],
) -> None:
    rows = [{"path": a, "detail": b, "tokens": n} for a, b, n in cells]
    fitted = fit_columns(rows, room=500)
    for row in fitted.rows:
        for name, value in row.items():
            shown = value if isinstance(value, str) else f"{value:,}"
            assert text_px(shown) + CELL_PAD <= fitted.widths[name] + 0.5, (name, shown)
    if sum(fitted.widths.values()) > 500:  # only when the text columns are at their floor
        assert all(fitted.widths[n] <= MIN_TEXT_PX + 1 for n in ("path", "detail"))
    for before, after in zip(rows, fitted.rows, strict=True):
        for name in ("path", "detail"):
            if after[name] != before[name]:
                assert after[name].endswith(ELLIPSIS) or ELLIPSIS in after[name]


def test_a_path_keeps_its_start_and_its_end_and_prose_ends_on_a_word() -> None:
    path = "/home/USER/projects/spotter/deps/opentelemetry_bandit/lib/bandit_handler.ex"
    short = shorten(path, 250)
    assert short.startswith("/home/") and short.endswith(".ex") and ELLIPSIS in short
    assert text_px(short) <= 250
    prose = "two consecutive assistant turns (messages 100 and 101); the API combines them"
    cut = shorten(prose, 200)
    assert cut.endswith(ELLIPSIS) and prose.startswith(cut[:-1]) and text_px(cut) <= 200
    assert prose[len(cut) - 1] == " "  # ends on a whole word


def test_a_table_on_its_side_has_one_column_per_record() -> None:
    rows = [{"#": 1, "at message": 12, "recall": "63%"}, {"#": 2, "at message": 1200}]
    assert by_column(rows, first="measure", name="#") == [
        {"measure": "#", "#1": "1", "#2": "2"},
        {"measure": "at message", "#1": "12", "#2": "1,200"},
        {"measure": "recall", "#1": "63%", "#2": ""},
    ]
