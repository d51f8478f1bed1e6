"""A sidebar that breathes: the builder only in the lab (in its page body), a one-line
configuration with a link elsewhere, and a transcript picker that lists the bundled samples too."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptest_helpers import SAMPLES, go, no_exceptions, plain, widget_keys

from compactlens_inspector.components.sidebar import PICKER_PX, SAMPLE_PREFIX
from compactlens_inspector.pages.load import SAMPLE_SELECT_PX
from compactlens_inspector.style.widths import text_px

REPO_ROOT = Path(__file__).resolve().parents[2]
OTHER_PAGES = ("transcript", "diff", "timeline", "cannot_fit", "analysis", "sweep", "export")


def _builder_keys(at) -> list[str]:
    """Keys of the builder's widgets drawn in ``at`` (the page, or a block of it: ``sb_*``)."""
    kinds = ("selectbox", "number_input", "button", "radio", "checkbox", "text_input", "toggle")
    widgets = [w for kind in (*kinds, "segmented_control") for w in at.get(kind)]
    return [k for k in widget_keys(widgets) if k.startswith("sb_")]


def _lab_links(at) -> list[str]:
    return [str(e.proto.page) for e in at.get("page_link") if "lab" in str(e.proto.page)]


def test_the_lab_has_the_builder(app) -> None:
    at = go(app(sample="coding_agent").run(), "lab")
    no_exceptions(at)
    assert at.number_input(key="sb_budget") is not None
    assert "sb_mode" in _builder_keys(at)


def test_the_lab_builder_is_in_the_body_and_its_sidebar_shows_no_configuration(app) -> None:
    # The builder and preview are one fragment in the body; the sidebar is not re-drawn by
    # a parameter change, so it must show nothing that depends on the configuration.
    at = go(app(sample="coding_agent").run(), "lab")
    no_exceptions(at)
    assert not _builder_keys(at.sidebar)
    assert {"sidebar_source", "sidebar_tokenizer"} <= set(widget_keys(at.sidebar.selectbox))
    assert not [c for c in at.sidebar.caption if c.value.startswith("**Strategy:**")]
    assert {"sb_mode", "sb_stage0_type", "sb_summarizer"} <= set(_builder_keys(at.main))


@pytest.mark.parametrize("name", OTHER_PAGES)
def test_other_pages_show_one_line_and_a_link_to_the_lab(app, name: str) -> None:
    at = go(app(sample="coding_agent").run(), name)
    no_exceptions(at)
    assert not _builder_keys(at), f"{name} shows the strategy builder"
    line = [c.value for c in at.sidebar.caption if c.value.startswith("**Strategy:**")]
    assert len(line) == 1 and len(line[0]) < 150
    assert _lab_links(at)


def test_the_picker_lists_bundled_samples_and_loads_the_one_picked(app) -> None:
    at = app(sample="coding_agent").run()
    picker = at.selectbox(key="sidebar_source")
    others = sorted(n for n in SAMPLES if n != "coding_agent")
    assert [o for o in picker.options if "· sample" in o] == [f"{n} · sample" for n in others]
    picker.set_value(SAMPLE_PREFIX + "tiny").run()
    no_exceptions(at)
    active = at.session_state["cl_active"]
    assert at.session_state["cl_sources"][active].sample == "tiny"
    # Loaded now: listed once, by its file name, and no longer as a sample to load.
    options = at.selectbox(key="sidebar_source").options
    assert "tiny.json" in options and "tiny · sample" not in options


def test_the_transcript_picker_and_the_sample_select_show_whole_labels(
    app, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Long names lose their middle to fit the select (the review saw
    "claude_code__ae4a77f8-aedd-4l" and "Cannot fit: a huge log dump as the latest too");
    the Load page gives the whole title of a shortened sample under its select. The
    bundled samples, whose names and titles are the long ones."""
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(REPO_ROOT / "sample_transcripts"))
    at = go(app(sample="coding_agent").run(), "load")
    no_exceptions(at)
    picker = at.sidebar.selectbox(key="sidebar_source").options
    assert len(picker) > 3 and all(text_px(label) <= PICKER_PX for label in picker), picker
    assert any("…" in label for label in picker)  # a bundled sample's long file name
    select = at.selectbox(key="load_sample")
    assert all(text_px(label) <= SAMPLE_SELECT_PX for label in select.options), select.options
    select.set_value("cannot_fit_16k").run()
    captions = [plain(c.value) for c in at.caption]
    assert "Cannot fit: a huge log dump as the latest tool result" in captions
