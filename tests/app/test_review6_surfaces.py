"""Review 6 (surfaces): every surface colours and words a run by its verdict. Sweep
markers by verdict level, and "In plain words" does not open with a bare "The target
was met." over a run that has costs."""

from __future__ import annotations

import json

from apptest_helpers import go, no_exceptions, plain
from streamlit.testing.v1 import AppTest

from compactlens.analysis.verdict import HEADLINES, LEVEL_COLORS
from compactlens_inspector.lab.config import encode_config, preset


def _markers(at: AppTest) -> dict[str, str]:
    """Marker trace name -> colour of the page's one chart."""
    (chart,) = at.get("plotly_chart")
    spec = json.loads(chart.proto.spec)
    return {t["name"]: t["marker"]["color"] for t in spec["data"] if t.get("mode") == "markers"}


def test_sweep_markers_are_the_verdicts_colour_and_headline(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "sweep")
    at.number_input(key="sweep_from").set_value(1000)
    at.number_input(key="sweep_to").set_value(4000)
    at.number_input(key="sweep_steps").set_value(4).run()
    no_exceptions(at)
    verdicts = set(at.dataframe[0].value["verdict"])
    assert "Fits, with costs" in verdicts  # the case under test
    by_headline = {words: LEVEL_COLORS[level] for level, words in HEADLINES.items()}
    # Before: one green "compacted" trace beside "Fits, with costs" rows.
    assert _markers(at) == {v: by_headline[v] for v in verdicts}


def test_in_plain_words_of_a_run_with_costs_points_to_the_verdict(app) -> None:
    at = go(app(cfg=encode_config(preset("truncation", 2000))).run(), "cannot_fit")
    no_exceptions(at)
    shown = [plain(str(m.value)) for m in at.markdown]
    met = [t for t in shown if t.startswith("The target was met")]
    assert met, shown
    assert met[0].startswith("The target was met; the verdict above names its costs")
