"""Post-mortem end to end in Chromium: upload a Claude Code log that compacted, see each
compaction on the timeline and the recall numbers the library computes for it."""

from __future__ import annotations

import pytest
from e2e_support import SAMPLES, StreamlitApp

from compactlens import load_transcript
from compactlens.analysis import postmortem

pytestmark = pytest.mark.e2e

SAMPLE = SAMPLES / "claude_code_compacted.jsonl"


def test_upload_a_compacted_claude_code_log_and_read_its_post_mortem(app: StreamlitApp) -> None:
    expected = postmortem(load_transcript(SAMPLE))
    assert len(expected.compactions) == 2
    app.open("load")
    app.upload(SAMPLE)
    assert app.selected("sidebar_source") == SAMPLE.name
    assert "claude-code" in app.main().inner_text()

    app.nav("Post-mortem")
    traces = app.chart_traces("pm_timeline")
    assert all(t["type"] == "bar" for t in traces)
    agent = next(t for t in traces if t["name"].startswith("agent"))
    assert agent["x"] == [round(c.agent.recall * 100, 1) for c in expected.compactions]  # type: ignore[union-attr]
    # Each bar names the tokens its side kept: the agent's beside compactlens'.
    assert [t.split(" · ")[1] for t in agent["text"]] == [
        f"{c.budget:,} tokens" for c in expected.compactions
    ]
    # The reference (merged with any strategy that kept the same, as its column is).
    ref = next(t for t in traces if "reference pipeline" in t["name"])
    assert ref["x"] == [round(c.strategies[0].recall * 100, 1) for c in expected.compactions]  # type: ignore[operator]
    for text, c in zip(ref["text"], expected.compactions, strict=True):
        assert text.endswith("not at equal size") is (not c.at_equal_size(c.strategies[0]))

    first = expected.compactions[0]
    assert first.agent is not None
    # The share in the metric, its count (the denominator) in the caption under it.
    assert app.metric("Agent recall").endswith("%")
    shown = f"({first.agent.survived:,} of {first.agent.extracted:,} facts)"
    assert shown in app.main().inner_text()
    assert "Primary request: invoice INV-2026-0419" in app.main().inner_text()
