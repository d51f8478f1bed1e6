"""Post-mortem page: the timeline of recorded compactions, recall numbers that match the
library, the agent's summary shown inert, and a clear message when there is none."""

from __future__ import annotations

from pathlib import Path

from apptest_helpers import REPO_ROOT, go, metric, no_exceptions, plain, texts

from compactlens import load_transcript
from compactlens.analysis import postmortem, reference_pipeline
from compactlens_inspector.style.wording import source_words
from compactlens_inspector.views.message import prose
from compactlens_inspector.views.postmortem import recall_share, timeline_figure

SAMPLE = REPO_ROOT / "sample_transcripts" / "claude_code_compacted.jsonl"


def _table_with(at, column: str):  # type: ignore[no-untyped-def]
    """The table that has ``column`` (plain tables carry no key in AppTest); the
    post-mortem table, which shows one column per compaction and one row per measure, is
    turned back to one row per compaction (its cells are text, as shown)."""
    for d in at.dataframe:
        if column in d.value.columns:
            return d.value
        if "measure" in d.value.columns and column in set(d.value["measure"]):
            return d.value.set_index("measure").T
    raise AssertionError([list(d.value.columns) for d in at.dataframe])


def _paste(at, text: str):  # type: ignore[no-untyped-def]
    at = go(at, "load")
    at.text_area(key="load_paste").set_value(text)
    at.button(key="load_paste_button").click().run()
    no_exceptions(at)
    return go(at, "postmortem")


def test_every_compaction_is_on_the_timeline_with_recall(app) -> None:
    at = _paste(app().run(), SAMPLE.read_text(encoding="utf-8"))
    no_exceptions(at)
    expected = postmortem(load_transcript(SAMPLE), [("ref", reference_pipeline)])
    rows = _table_with(at, "agent recall")
    assert list(rows["at message"]) == [f"{c.recorded.index:,}" for c in expected.compactions]
    agent = [recall_share(c.agent) for c in expected.compactions]
    assert list(rows["agent recall"]) == agent
    ref = [recall_share(c.strategies[0]) for c in expected.compactions]
    # The lab holds the reference preset here: one set of columns for both.
    name = "lab configuration and reference pipeline (same result)"
    assert list(rows[f"{name}: recall"]) == ref
    equal = ["yes" if c.at_equal_size(c.strategies[0]) else "no" for c in expected.compactions]
    assert list(rows[f"{name}: at the agent's size"]) == equal
    assert "lab configuration: recall" not in rows.columns
    assert not any("None" in str(v) for v in rows.to_numpy().ravel())
    assert any(c.key == "pm_timeline" for c in at.get("plotly_chart"))
    first = expected.compactions[0]
    assert first.agent is not None
    assert metric(at, "Agent recall") == recall_share(first.agent)
    counted = f"({first.agent.survived} of {first.agent.extracted} facts)"
    assert any(counted in plain(str(c.value)) for c in at.caption)  # the count under the share
    assert first.recorded.summary is not None
    assert prose(first.recorded.summary) in [str(m.value) for m in at.markdown]
    # Picking the second compaction shows its numbers.
    at.selectbox(key="pm_pick").set_value(1).run()
    no_exceptions(at)
    second = postmortem(load_transcript(SAMPLE)).compactions[1]
    assert metric(at, "History replaced") == f"{len(second.history)} msgs"
    # Columns that kept the same thing are one ("Lab configuration and reference pipeline
    # (same result)").
    recalls = [m.label for m in at.metric if m.label.startswith("Recall · ")]
    assert len(recalls) == len(set(recalls))
    ref_label = next(m.label for m in at.metric if "reference pipeline" in m.label.lower())
    assert metric(at, ref_label) == recall_share(second.strategies[0])
    counted = f"({second.strategies[0].survived} of {second.strategies[0].extracted} facts)"
    assert any(counted in plain(str(c.value)) for c in at.caption)
    # Both sizes beside the recall; a strategy that cannot get as small as the agent says so.
    body = plain(texts(at))
    assert f"(the agent: {second.budget:,})" in body
    if not second.at_equal_size(second.strategies[0]):
        assert any("Not at equal size" in w.value for w in at.warning)


def test_a_transcript_without_compactions_says_so(app) -> None:
    at = go(app().run(), "postmortem")
    no_exceptions(at)
    assert "records no compaction" in texts(at)


def test_summary_text_is_shown_inert(app, tmp_path: Path) -> None:
    hostile = "<script>alert(1)</script> [x](javascript:alert(2))"
    lines = [
        '{"type":"user","sessionId":"s","message":{"role":"user","content":"fix /srv/a.py"}}',
        '{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto"}}',
        '{"type":"user","isCompactSummary":true,"sessionId":"s",'
        f'"message":{{"role":"user","content":"{hostile}"}}}}',
    ]
    at = _paste(app().run(), "\n".join(lines))
    no_exceptions(at)
    shown = [str(m.value) for m in at.markdown]
    assert prose(hostile) in shown  # escaped: shown literally, nothing runs or links
    assert "<script>" not in "".join(shown)
    assert "](javascript:" not in "".join(shown)


def test_codex_rollout_and_inspect_log_show_their_compactions(app) -> None:
    fixtures = REPO_ROOT / "tests" / "fixtures" / "formats"
    for name in ("codex_rollout.jsonl", "inspect_log.json"):
        path = fixtures / name
        at = _paste(app().run(), path.read_text(encoding="utf-8"))
        no_exceptions(at)
        expected = postmortem(load_transcript(path), [("ref", reference_pipeline)])
        rows = _table_with(at, "agent recall")
        assert list(rows.index) == [f"#{c.number}" for c in expected.compactions], name
        source = source_words(expected.compactions[0].recorded.source)
        assert f"Agent ({source})" in plain(texts(at)), name
        agent = [recall_share(c.agent) for c in expected.compactions]
        assert list(rows["agent recall"]) == agent, name


def test_the_recall_chart_shows_each_size_and_marks_unequal_sizes() -> None:
    """Each bar carries its recall and the tokens it kept; a strategy that could not get as
    small as the agent is hatched and says "not at equal size" (its recall does not compare)."""
    pm = postmortem(load_transcript(SAMPLE), [("reference pipeline", reference_pipeline)])
    fig = timeline_figure(pm)
    agent, ref = fig.data
    assert agent.name.startswith("agent")
    assert "reference pipeline" in ref.name and "=" not in ref.name
    for n, c in enumerate(pm.compactions):
        assert c.agent is not None
        assert agent.text[n] == f"{recall_share(c.agent)} · {c.budget:,} tokens"
        o = c.strategies[0]
        unequal = not c.at_equal_size(o)
        assert ref.text[n].startswith(f"{recall_share(o)} · {o.tokens_after:,} tokens")
        assert ref.text[n].endswith("not at equal size") is unequal
        assert (ref.marker.pattern.shape[n] == "/") is unequal
        assert agent.marker.pattern.shape[n] == ""
    # The sample's reference cannot get as small as the agent: the chart says so.
    assert any(not c.at_equal_size(c.strategies[0]) for c in pm.compactions)
    assert "not at equal size" in fig.layout.title.text
