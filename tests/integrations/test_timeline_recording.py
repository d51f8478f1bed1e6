"""A recording opens in the inspector: the Event timeline lists one entry per compaction."""

from __future__ import annotations

from pathlib import Path

import pytest
from integration_support import record_a_run
from streamlit.testing.v1 import AppTest

from compactlens import load_transcript

APP = Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py"
PAGES = "compactlens_inspector/pages/"


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _open(text: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=90).run()
    at.switch_page(f"{PAGES}load.py").run()
    at.text_area(key="load_paste").set_value(text)
    at.button(key="load_paste_button").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page(f"{PAGES}timeline.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.apptest
def test_the_timeline_lists_each_recorded_compaction(tmp_path: Path) -> None:
    path, compactions = record_a_run(tmp_path, 7)
    expected = load_transcript(path).compactions
    assert len(expected) == compactions >= 2
    at = _open(path.read_text(encoding="utf-8"))
    tables = [d.value for d in at.dataframe if "at message" in d.value.columns]
    assert tables, "no recorded-compactions table"
    rows = tables[0]
    assert list(rows["at message"]) == [c.index for c in expected]
    recorded = [
        f"{c.tokens_after:,}" if c.tokens_after is not None else "not recorded" for c in expected
    ]
    assert list(rows["tokens after (recorded)"]) == recorded
    at.selectbox(key="timeline_recorded").set_value(1).run()
    second = expected[1]
    metrics = {m.label: m.value for m in at.metric}
    said = " ".join(str(m.value) for m in at.markdown)
    assert f"→ {second.tokens_after:,} tokens" in said  # "Recorded by the agent: a → b tokens"
    assert metrics["Messages after"] == f"{len(second.after or ())}"


@pytest.mark.apptest
def test_a_plain_transcript_has_no_recorded_section(tmp_path: Path) -> None:
    at = _open('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]')
    assert not [d for d in at.dataframe if "at message" in d.value.columns]
