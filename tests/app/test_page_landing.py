"""Landing page: a bundled transcript, its budget, one click to compact, before/after."""

from __future__ import annotations

from apptest_helpers import metric, metric_int, no_exceptions, plain, texts

from compactlens import CharEstimator, MessageIndex
from compactlens.formats import from_caller
from compactlens_inspector.lab.config import LabConfig


def test_landing_opens_on_a_bundled_sample_without_a_key(app, sample_doc) -> None:
    at = app().run()
    no_exceptions(at)
    doc = sample_doc("coding_agent")
    ix = MessageIndex.build(from_caller(doc["messages"]).messages, CharEstimator())
    assert at.selectbox(key="landing_sample").value == "coding_agent"
    assert metric(at, "Messages") == str(len(doc["messages"]))
    tokens = next(m for m in at.metric if m.label == "Tokens")
    # The exact count, as every other surface writes it (the review saw "97.2k").
    assert tokens.value == f"{ix.total_tokens:,}"
    assert "Press **Compact**" in texts(at)


def test_one_click_compacts_and_shows_before_and_after(app) -> None:
    at = app().run()
    before_total = at.slider(key="landing_budget").max
    budget = before_total // 2
    at.slider(key="landing_budget").set_value(budget)
    at.button(key="landing_compact").click().run()
    no_exceptions(at)
    assert metric_int(at, "Before") == before_total
    after = metric_int(at, "After")
    assert after <= budget < before_total
    assert "compacted" in plain(texts(at))
    lab = at.session_state["cl_lab"]
    assert isinstance(lab, LabConfig)
    assert lab.label == "reference" and lab.trigger_tokens == budget


def test_a_budget_below_what_is_protected_reports_cannot_fit(app) -> None:
    at = app().run()
    at.slider(key="landing_budget").set_value(100)
    at.button(key="landing_compact").click().run()
    no_exceptions(at)
    assert metric_int(at, "After") > 100
    assert "cannot-fit" in plain(texts(at))


def test_picking_another_sample_loads_it(app, sample_doc) -> None:
    at = app().run()
    at.selectbox(key="landing_sample").set_value("tiny").run()
    no_exceptions(at)
    assert metric(at, "Messages") == str(len(sample_doc("tiny")["messages"]))
    assert at.query_params.get("sample") in ("tiny", ["tiny"])
