"""A row of metric cards of one width that wrap on a narrow screen, so a number is never
cut to ``8…`` (Streamlit's equal columns shrink their cards instead)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import streamlit as st

#: Wide enough for a label like "Summarized" and a value like "123,456".
CARD_WIDTH = 150


@dataclass(frozen=True, slots=True)
class Card:
    label: str
    value: str
    help: str | None = None
    #: A change shown under the value (``st.metric``'s delta), coloured as ``delta_color``.
    delta: str | None = None
    delta_color: Literal["normal", "inverse", "off"] = "normal"
    #: This card's width in pixels, or "content" (as wide as its label and value need);
    #: default: the row's.
    width: int | Literal["content"] | None = None


def metric_row(cards: Sequence[Card], *, key: str, width: int = CARD_WIDTH) -> None:
    with st.container(horizontal=True, wrap=True, key=key):
        for card in cards:
            st.metric(
                card.label,
                card.value,
                delta=card.delta,
                delta_color=card.delta_color,
                help=card.help,
                border=True,
                width=card.width or width,
            )
