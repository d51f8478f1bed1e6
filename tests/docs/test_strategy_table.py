"""The table of strategies in docs/guide.md is the strategy registry's, row for row.

Run this file as a script to print the table to paste into the guide:
``python tests/docs/test_strategy_table.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from compactlens.engine import STRATEGY_REGISTRY, StrategyInfo

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"
HEADER = (
    "| type | class | what it does | starts on | kind | parameters (builder default) |\n"
    "| --- | --- | --- | --- | --- | --- |"
)


def _kind(info: StrategyInfo) -> str:
    if info.composite:
        return "composite"
    return "simple, needs a summarizer" if info.needs_summarizer else "simple"


def _params(info: StrategyInfo) -> str:
    shown = [f"`{p.name}` ({json.dumps(p.default)})" for p in info.params]
    return ", ".join(shown) if shown else "-"


def render_table() -> str:
    rows = [
        f"| `{i.name}` | `{i.cls.__name__}` | {i.description} | {i.starts_on} | {_kind(i)} "
        f"| {_params(i)} |"
        for i in STRATEGY_REGISTRY
    ]
    return "\n".join([HEADER, *rows])


def test_the_guide_has_the_registrys_table_of_strategies() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    assert render_table() in guide, (
        "docs/guide.md's table of strategies differs from the registry; "
        "regenerate it with: python tests/docs/test_strategy_table.py"
    )


if __name__ == "__main__":
    print(render_table())
