"""Share and demo: the sample and the parameters live in the URL, so a link reproduces a view."""

from __future__ import annotations

import pytest
from apptest_helpers import go, metric_int, no_exceptions, plain, texts

from compactlens_inspector.lab.config import decode_config, encode_config, preset


def _qp(at, key: str) -> str | None:
    value = at.query_params.get(key)
    if isinstance(value, list):
        return value[0] if value else None
    return value


def test_a_link_with_sample_preset_and_budget_reproduces_the_view(app, sample_doc) -> None:
    at = go(app(sample="unresolved", preset="truncation", budget="900").run(), "lab")
    no_exceptions(at)
    config = at.session_state["cl_lab"]
    assert config.stages[0]["trigger"]["n"] == 900
    assert metric_int(at, "Target") == 900
    # The URL now carries the full configuration instead of the preset.
    assert _qp(at, "sample") == "unresolved"
    assert decode_config(_qp(at, "cfg") or "") == config
    assert _qp(at, "preset") is None and _qp(at, "budget") is None
    # Opening that URL in a new session gives the same numbers.
    again = go(app(sample="unresolved", cfg=_qp(at, "cfg") or "").run(), "lab")
    assert metric_int(again, "Tokens after") == metric_int(at, "Tokens after")


def test_tokenizer_travels_in_the_url(app) -> None:
    at = go(app(tok="cl100k_base", cfg=encode_config(preset("truncation", 2000))).run(), "lab")
    no_exceptions(at)
    assert at.selectbox(key="sidebar_tokenizer").value == "cl100k_base"
    assert _qp(at, "tok") == "cl100k_base"
    at.selectbox(key="sidebar_tokenizer").set_value("estimate").run()
    assert _qp(at, "tok") is None


def test_broken_links_say_what_is_wrong(app) -> None:
    at = app(sample="nope").run()
    no_exceptions(at)
    assert "sample that does not exist: nope" in plain(at.warning[0].value)
    at = app(cfg="%%%").run()
    assert "cannot be read" in plain(at.warning[0].value)
    at = app(preset="nope").run()
    assert "preset that does not exist: nope" in plain(at.warning[0].value)
    # The app still works on the default sample.
    assert metric_int(go(at, "lab"), "Tokens before") > 0


def test_the_default_configuration_is_sized_to_the_linked_sample(app) -> None:
    for sample in ("unresolved", "coding_agent"):
        at = go(app(sample=sample).run(), "lab")
        no_exceptions(at)
        before = metric_int(at, "Tokens before")
        trigger = at.session_state["cl_lab"].trigger_tokens
        assert trigger is not None and trigger < before  # the default preview does something
        assert "compacted" in plain(texts(at))


def test_without_samples_every_page_asks_for_a_transcript(app, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(tmp_path))
    at = app().run()
    no_exceptions(at)
    for page in (
        "landing",
        "transcript",
        "lab",
        "diff",
        "timeline",
        "cannot_fit",
        "analysis",
        "sweep",
        "export",
    ):
        at = go(at, page)
        no_exceptions(at)
        assert not at.error, page
        assert any("No transcript is loaded" in i.value for i in at.info), page


def _packed(data: object) -> str:
    import base64
    import json
    import zlib

    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def test_a_short_link_that_unpacks_to_thousands_of_stages_is_refused(app) -> None:
    """Issue 27, finding 6: an 8,000-character link unpacked to 14,225 stages and more than
    300 s of CPU. Such a link is refused with a message, and the app goes on."""
    import time

    stage = {"type": "truncation", "max_n": 8000, "compact_to": 4000, "minimum_preserved": 4}
    many = _packed({"mode": "pipeline", "stages": [stage] * 14_225})
    assert len(many) <= 8000
    started = time.process_time()
    with pytest.raises(ValueError, match="unpacks to more than 64 KB"):
        decode_config(many)
    fewer = _packed({"mode": "pipeline", "stages": [stage] * 500})
    with pytest.raises(ValueError, match=r"stages\[64\]: more than 64 strategies"):
        decode_config(fewer)
    assert time.process_time() - started < 2.0
    at = app(cfg=many).run()
    no_exceptions(at)
    assert "unpacks to more than 64 KB" in plain(at.warning[0].value)
    assert metric_int(go(at, "lab"), "Tokens before") > 0
