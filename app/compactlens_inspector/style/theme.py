"""The inspector's visual identity in one place (no Streamlit here).

Three accents carry meaning everywhere: **kept**, **removed** (excluded) and
**summarized**, with two supporting ones for **collapsed** and **inserted** (the summary
text). Badges use Streamlit's named colours, which ``.streamlit/config.toml`` sets to
these same values (``tests/app/test_theme.py`` checks the two agree), so a "removed"
badge, a removed bar in a chart and a removed row in a diff are one red.

Every accent used as text on white passes WCAG AA (4.5:1); the lighter fills are only
used behind dark text or as chart areas. The fills are the library's figure colours
(:mod:`compactlens.viz`), so charts, notebooks and the inspector agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from compactlens.viz import DECISION_COLORS, KIND_COLORS, ROLE_COLORS


@dataclass(frozen=True, slots=True)
class Accent:
    """One meaning's colours: ``fill`` for bars and areas, ``text`` for words on white,
    ``tint`` for a light background, ``badge`` Streamlit's named colour that shows it."""

    fill: str
    text: str
    tint: str
    badge: str


#: The decisions of a compaction (the engine's actions), one accent each.
DECISIONS: dict[str, Accent] = {
    "kept": Accent(fill=DECISION_COLORS["kept"], text="#3D4B5C", tint="#EEF1F5", badge="gray"),
    "excluded": Accent(
        fill=DECISION_COLORS["excluded"], text="#B3361B", tint="#FDECE7", badge="red"
    ),
    "summarized": Accent(
        fill=DECISION_COLORS["summarized"], text="#5B3FE0", tint="#F0EDFF", badge="violet"
    ),
    "collapsed": Accent(
        fill=DECISION_COLORS["collapsed"], text="#8A5300", tint="#FEF4E4", badge="orange"
    ),
    "inserted": Accent(
        fill=DECISION_COLORS["inserted"], text="#1C7A4C", tint="#E6F6EE", badge="green"
    ),
}

#: Words for the decisions where a person reads them ("excluded" is "removed").
DECISION_WORDS: dict[str, str] = {
    "kept": "kept",
    "excluded": "removed",
    "summarized": "summarized",
    "collapsed": "collapsed",
    "inserted": "summary",
}

#: Who speaks: the colour of a role's label and avatar.
ROLES: dict[str, Accent] = {
    "system": Accent(fill=ROLE_COLORS["system"], text="#3D4452", tint="#F1F2F5", badge="gray"),
    "developer": Accent(
        fill=ROLE_COLORS["developer"], text="#3D4452", tint="#F1F2F5", badge="gray"
    ),
    "user": Accent(fill=ROLE_COLORS["user"], text="#1F5288", tint="#EBF3FB", badge="blue"),
    "assistant": Accent(
        fill=ROLE_COLORS["assistant"], text="#1C7A4C", tint="#E6F6EE", badge="green"
    ),
    "tool": Accent(fill=ROLE_COLORS["tool"], text="#8A5300", tint="#FEF4E4", badge="orange"),
}

#: The Material icon shown beside each role (bundled with Streamlit: no request).
ROLE_ICONS: dict[str, str] = {
    "system": ":material/settings:",
    "developer": ":material/code:",
    "user": ":material/person:",
    "assistant": ":material/smart_toy:",
    "tool": ":material/build:",
}

#: The context gauge's segments, in the order ``/context`` shows them.
GAUGE_COLORS: dict[str, str] = {
    "system": KIND_COLORS["system"],
    "tools": KIND_COLORS["tool_call"],
    "user": KIND_COLORS["user"],
    "assistant": KIND_COLORS["assistant_text"],
    "summary": KIND_COLORS["summary"],
    "free": "#E7EBF0",
}

#: Streamlit's named colours as ``.streamlit/config.toml`` sets them: ``<name>Color`` is
#: the fill, ``<name>TextColor`` the text, ``<name>BackgroundColor`` the tint.
NAMED: dict[str, Accent] = {
    "red": DECISIONS["excluded"],
    "violet": DECISIONS["summarized"],
    "orange": DECISIONS["collapsed"],
    "green": DECISIONS["inserted"],
    "gray": DECISIONS["kept"],
    "blue": ROLES["user"],
}


def decision_badge(action: str) -> str:
    """The named colour of a decision's badge (gray for one we do not know)."""
    accent = DECISIONS.get(action)
    return accent.badge if accent is not None else "gray"


def role_badge(role: str) -> str:
    accent = ROLES.get(role)
    return accent.badge if accent is not None else "gray"
