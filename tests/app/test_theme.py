"""The visual identity: one colour per meaning, the same in the theme, badges and gauge,
and readable (WCAG AA) where it is text."""

from __future__ import annotations

import tomllib

import pytest
from apptest_helpers import REPO_ROOT

from compactlens_inspector.components import badges
from compactlens_inspector.style.theme import DECISIONS, GAUGE_COLORS, NAMED, ROLES


def _luminance(hex_color: str) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_color.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _theme() -> dict[str, object]:
    with (REPO_ROOT / ".streamlit" / "config.toml").open("rb") as f:
        return dict(tomllib.load(f)["theme"])


def test_contrast_formula_matches_known_pairs() -> None:
    assert contrast("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert contrast("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)


def test_config_toml_sets_each_named_colour_to_its_meaning() -> None:
    theme = _theme()
    for name, accent in NAMED.items():
        assert str(theme[f"{name}Color"]).upper() == accent.fill.upper(), name
        assert str(theme[f"{name}TextColor"]).upper() == accent.text.upper(), name
        assert str(theme[f"{name}BackgroundColor"]).upper() == accent.tint.upper(), name
    # The named colour a decision's badge uses is the one set to that decision's accent.
    for action, accent in DECISIONS.items():
        assert NAMED[accent.badge] == accent or NAMED[accent.badge].fill == accent.fill, action


def test_kept_removed_summarized_are_three_different_accents() -> None:
    fills = {DECISIONS[a].fill for a in ("kept", "excluded", "summarized")}
    assert len(fills) == 3
    assert len({badges.DECISION_BADGE[a] for a in ("kept", "excluded", "summarized")}) == 3
    assert GAUGE_COLORS["summary"] == DECISIONS["summarized"].fill


@pytest.mark.parametrize("accent", [*DECISIONS.values(), *ROLES.values()])
def test_text_colours_are_readable_on_white_and_on_their_tint(accent) -> None:
    assert contrast(accent.text, "#FFFFFF") >= 4.5
    assert contrast(accent.text, accent.tint) >= 4.5


def test_body_text_and_primary_colour_are_readable() -> None:
    theme = _theme()
    assert contrast(str(theme["textColor"]), str(theme["backgroundColor"])) >= 7
    assert contrast(str(theme["primaryColor"]), "#FFFFFF") >= 4.5
    assert contrast(str(theme["linkColor"]), "#FFFFFF") >= 4.5
