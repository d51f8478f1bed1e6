"""On long transcripts the lab analyzes a run on request, not on every parameter change."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from apptest_helpers import go
from streamlit.testing.v1 import AppTest

from compactlens_inspector.components.analysis_summary import LIVE_ANALYSIS_MAX_MESSAGES


def _long_chat(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a support agent."}]
    for t in range(turns):
        out.append({"role": "user", "content": f"Ticket TCK-{100000 + t}: my order is late."})
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{t}",
                        "type": "function",
                        "function": {"name": "lookup_order", "arguments": f'{{"n": {t}}}'},
                    }
                ],
            }
        )
        out.append({"role": "tool", "tool_call_id": f"call_{t}", "content": f"ORD-{t:06d} late"})
        out.append({"role": "assistant", "content": f"Order ORD-{t:06d} ships tomorrow."})
    return out


def test_long_transcript_analysis_waits_for_the_button(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: Callable[..., AppTest]
) -> None:
    messages = _long_chat(LIVE_ANALYSIS_MAX_MESSAGES // 4 + 10)
    assert len(messages) > LIVE_ANALYSIS_MAX_MESSAGES
    folder = tmp_path / "samples"
    folder.mkdir()
    doc = {"title": "Long", "description": "Many turns.", "messages": messages}
    (folder / "long.json").write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(folder))

    at = app(sample="long", preset="truncation", budget="4000").run()
    at = go(at, "lab")
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert "Fact recall" not in labels
    assert "not run live" in " ".join(str(md.value) for md in at.markdown)
    at.button(key="lab_analyze").click().run()
    assert not at.exception
    assert "Fact recall" in [m.label for m in at.metric]
