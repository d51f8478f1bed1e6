"""Every page renders without an error box, and the pages the flows do not visit work:
the Overview's one-click compaction, the transcript charts, the event timeline and the
sweep. (Requests off 127.0.0.1 fail any e2e test at teardown; see conftest.)"""

from __future__ import annotations

import pytest
from e2e_support import SAMPLES, StreamlitApp, number

from compactlens import CharEstimator, MessageIndex, load_transcript

pytestmark = pytest.mark.e2e

PAGES = (
    "Load",
    "Transcript",
    "Strategy lab",
    "Diff",
    "Event timeline",
    "Cannot-fit debugger",
    "Analysis",
    "Sweep & compare",
    "Export",
)


def assert_no_error_box(app: StreamlitApp, where: str) -> None:
    exceptions = app.main().locator('[data-testid="stException"]')
    assert exceptions.count() == 0, f"{where}: {exceptions.first.inner_text()}"
    broken = app.main().locator('[data-testid="stAlert"]').filter(has_text="went wrong")
    assert broken.count() == 0, f"{where}: {broken.first.inner_text()}"
    assert app.page_errors == [], f"{where}: {app.page_errors}"


def test_every_page_renders(app: StreamlitApp) -> None:
    app.open("")
    assert_no_error_box(app, "Overview")
    for title in PAGES:
        app.nav(title)
        assert_no_error_box(app, title)


def test_overview_compacts_in_one_click(app: StreamlitApp) -> None:
    total = MessageIndex.build(
        load_transcript(SAMPLES / "coding_agent.json").messages, CharEstimator()
    ).total_tokens
    app.open("?sample=coding_agent")
    budget = number(app.keyed("landing_budget").get_by_test_id("stSliderThumbValue").inner_text())
    assert 0 < budget < total
    app.click("landing_compact")
    assert "compacted" in app.status_text()
    assert number(app.metric("Before")) == total
    assert number(app.metric("After")) <= budget
    assert app.chart_traces("landing_decision_map")


def test_charts_timeline_and_sweep_draw(app: StreamlitApp) -> None:
    app.open("transcript?sample=coding_agent&preset=truncation&budget=4000")
    app.choose_segment("tx_view", "Charts")
    for key in ("tx_chart_groups", "tx_chart_cumulative", "tx_chart_composition", "tx_chart_exact"):
        assert app.chart_traces(key), f"{key} drew nothing"

    app.nav("Event timeline")
    events = app.chart_traces("timeline_chart")
    assert events, "the event timeline drew nothing"

    app.nav("Sweep & compare")
    points = app.chart_traces("sweep_chart")
    assert points and max(t["points"] for t in points) >= 2
    assert_no_error_box(app, "Sweep & compare")
