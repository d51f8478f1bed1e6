"""One money format for every cost compactlens shows: dollars to the cent."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from compactlens.engine import money, price

CENTS = re.compile(r"-?\$\d{1,3}(,\d{3})*\.\d{2}")


@given(st.floats(min_value=-1e7, max_value=1e7, allow_nan=False))
def test_a_cost_is_shown_to_the_cent_and_within_half_a_cent(amount: float) -> None:
    shown = money(amount)
    if amount != 0 and abs(amount) < 0.005:
        assert shown == "under $0.01"  # not zero, never a false $0.00
        return
    assert CENTS.fullmatch(shown), shown
    value = float(shown.replace("$", "").replace(",", ""))
    assert abs(value - amount) <= 0.005 + 1e-9 * abs(amount)


def test_examples_read_as_a_person_writes_them() -> None:
    assert money(0.4213) == "$0.42"
    assert money(0.4) == "$0.40"
    assert money(1234.567) == "$1,234.57"
    assert money(-0.4213) == "-$0.42"
    assert money(0) == "$0.00"
    assert money(0.004) == "under $0.01"


def test_a_price_per_million_keeps_the_digits_of_the_price_list() -> None:
    assert price(2.5) == "$2.50"
    assert price(0.075) == "$0.075"
    assert price(15) == "$15.00"
