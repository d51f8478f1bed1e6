"""Numbers as JavaScript's ``JSON.stringify`` writes them.

``@deepagents/compaction`` estimates tokens from the length of ``JSON.stringify(messages)``;
Python's ``json.dumps`` writes the same text except for numbers: ``1.0`` is ``1`` in
JavaScript, ``1e-07`` is ``1e-7``, ``1e+16`` is ``10000000000000000``, ``-0.0`` is ``0``,
``NaN`` and ``Infinity`` are ``null``, and an integer past 2**53 is the nearest double
(``2**64`` is ``18446744073709552000``). :func:`js_number` is ECMAScript's
``Number::toString`` (the shortest round-trip digits, which Python's ``repr`` also finds)
and :func:`number_length_delta` how much longer or shorter a JSON value's text is when
JavaScript writes it.
"""

from __future__ import annotations

import math
from typing import Any

#: Integers JavaScript holds exactly (``Number.MAX_SAFE_INTEGER`` + 1).
SAFE_INTEGER = 2**53


def js_number(value: float) -> str:
    """``String(value)`` in JavaScript, as ``JSON.stringify`` writes it (``null`` for NaN
    and the infinities)."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exp) if exp else 0)  # digits before the decimal point
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        text = digits + "0" * (point - k)
    elif 0 < point <= 21:
        text = f"{digits[:point]}.{digits[point:]}"
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        e = point - 1
        head = digits[0] + (f".{digits[1:]}" if k > 1 else "")
        text = f"{head}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text


def _python_text(value: float | int) -> str:
    """The number as ``json.dumps`` writes it."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _js_text(value: float | int) -> str:
    if isinstance(value, int):
        if -SAFE_INTEGER < value < SAFE_INTEGER:
            return str(value)
        try:
            return js_number(float(value))
        except OverflowError:  # past the largest double: Infinity, written as null
            return "null"
    return js_number(value)


def number_length_delta(value: Any) -> int:
    """JavaScript's ``JSON.stringify(value)`` length minus ``json.dumps(value)``'s: the
    difference of every number written the two ways (strings and structure agree)."""
    delta = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, float) or (
            isinstance(item, int) and not isinstance(item, bool) and abs(item) >= SAFE_INTEGER
        ):
            delta += len(_js_text(item)) - len(_python_text(item))
    return delta
