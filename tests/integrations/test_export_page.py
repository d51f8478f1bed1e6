"""The Export page's "Use in your agent" selector shows the snippet the library generates."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from compactlens_inspector.lab.config import encode_config, preset

APP = Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py"


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("COMPACTLENS_SAMPLES", raising=False)


def _export(cfg: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["cfg"] = cfg
    at.query_params["sample"] = "coding_agent"
    at.run()
    at.switch_page("compactlens_inspector/pages/export.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _snippet(at: AppTest) -> str:
    found = [
        str(c.value) for c in at.code if "compactlens" in str(c.value) and "import" in str(c.value)
    ]
    assert found, "no snippet shown"
    return found[0]


def _assigned(code: str, name: str) -> Any:
    """The literal value ``code`` assigns to ``name``."""
    for node in ast.parse(code).body:
        if isinstance(node, ast.Assign) and [
            t.id for t in node.targets if isinstance(t, ast.Name)
        ] == [name]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} is not assigned")


@pytest.mark.apptest
def test_choosing_a_framework_shows_its_snippet_with_the_configuration() -> None:
    config = preset("truncation", 2000)
    at = _export(encode_config(config))
    assert "strategy_from_config(CONFIG" in _snippet(at)
    at.selectbox(key="export_framework").set_value("langchain").run()
    assert not at.exception
    code = _snippet(at)
    assert "compaction_middleware(compactor)" in code
    assert _assigned(code, "CONFIG") == config.strategy_config()
    assert _assigned(code, "GUARDS") == config.guard_set().to_dict()
    assert "Python snippet · LangChain" in "\n".join(str(m.value) for m in at.markdown)
    at.selectbox(key="export_framework").set_value("agent-framework").run()
    assert "CompactlensStrategy(compactor)" in _snippet(at)


@pytest.mark.apptest
def test_a_compact_one_shot_exports_a_one_shot_compactor() -> None:
    config = replace(preset("truncation", 2000), mode="compact")
    at = _export(encode_config(config))
    at.selectbox(key="export_framework").set_value("pydantic-ai").run()
    assert not at.exception
    code = _snippet(at)
    assert "compaction_capability(compactor)" in code
    assert f"target_tokens={config.compact.target_tokens}," in code
    assert "Compactor.from_one_shot(" in code
