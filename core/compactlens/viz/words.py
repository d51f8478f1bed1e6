"""How figures (and the inspector) write numbers and parameter names.

The words and number formats live in :mod:`compactlens.engine.vocabulary` (one vocabulary
for every surface); this module gives figures what they use of it: :func:`num`,
:func:`group_digits`, :func:`share`, :func:`money` (every cost, to the cent),
:func:`price`, parameter words, and :data:`PLOTLY_INT`, the d3 format of plotly axes and
hover labels. Tables and code keep parameter names, which are what a
user types.
"""

from __future__ import annotations

from compactlens.engine.vocabulary import (
    PARAMETERS,
    STAGE_PARAMETERS,
    group_digits,
    money,
    num,
    param_words,
    plural,
    price,
    share,
)

#: d3 format of an integer with thousands separators (plotly ``tickformat``, ``%{y:,}``).
PLOTLY_INT = ","

#: Words for a parameter, whatever the stage.
PARAM_WORDS: dict[str, str] = {name: term.label for name, term in PARAMETERS.items()}

#: Words for a parameter of one stage type, where the general words would mislead.
STAGE_PARAM_WORDS: dict[tuple[str, str], str] = {
    key: term.label for key, term in STAGE_PARAMETERS.items()
}


def nice_step(span: float, parts: int) -> int:
    """A round whole-number step (1, 2, 2.5 or 5 times a power of ten, at least 1) that
    cuts ``span`` into at most ``parts`` pieces: for axis ticks and swept values, so a
    reader sees 0, 50, 100, 150 rather than 0, 56, 112, 168."""
    raw = max(span, 1) / max(parts, 1)
    power = 10 ** max(0, len(str(int(raw))) - 1)
    for factor in (1.0, 2.0, 2.5, 5.0):
        step = factor * power
        if step >= raw and step.is_integer():
            return int(step)
    return int(10 * power)


def part_words(label: str) -> str:
    """A budget part's label for a chart: a parameter name becomes words, other labels
    (already words, such as ``system messages``) stay."""
    return param_words(label) if label in PARAM_WORDS else label


__all__ = [
    "PARAM_WORDS",
    "PLOTLY_INT",
    "STAGE_PARAM_WORDS",
    "group_digits",
    "money",
    "nice_step",
    "num",
    "param_words",
    "part_words",
    "plural",
    "price",
    "share",
]
