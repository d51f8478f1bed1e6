"""The Analysis page's context window reaches the Cannot-fit debugger (review 5 N1): its
fixes never raise the target past the window, and no bar calls a run over the window
"Fits and safe" while the Analysis page warns that it is over."""

from __future__ import annotations

import re

from apptest_helpers import REPO_ROOT, go, no_exceptions, plain, texts

from compactlens_inspector.lab.config import encode_config, preset

BUNDLED = REPO_ROOT / "sample_transcripts"
WINDOW = 16_000


def _numbers(text: str, pattern: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(pattern, text)]


def test_the_debugger_keeps_the_fixes_under_the_analysis_window(app, monkeypatch) -> None:
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(BUNDLED))
    at = go(
        app(sample="cannot_fit_16k", cfg=encode_config(preset("reference", 12_000))).run(),
        "analysis",
    )
    no_exceptions(at)
    at.number_input(key="an_window").set_value(WINDOW).run()
    no_exceptions(at)
    assert at.session_state["cl_analysis"].context_window == WINDOW
    at = go(at, "cannot_fit")
    no_exceptions(at)
    body = plain(texts(at))
    # No fix raises the target past the window: without it, fix 1 raised it to 23,561.
    raised = _numbers(body, r"[Rr]aise the target (?:and the trigger )?to ([\d,]+) tokens")
    assert all(n <= WINDOW for n in raised), raised
    labels = [b.label for b in at.button if b.key and b.key.startswith("cf_apply_")]
    assert "Raise the target" not in labels, labels
    # The bar names the window and leads under it.
    bar = plain(at.error[0].value)
    assert bar.startswith("**Does not fit**")
    assert f"{WINDOW:,}-token context window" in bar
    step = bar.split("**Next step:** ", 1)[1]
    assert not re.search(r"[Rr]aise the target", step), step
    # Every listed fix, applied, gives a run that fits the window; none is called safe
    # while the history is over it.
    for key in [b.key for b in at.button if b.key and b.key.startswith("cf_apply_")][:2]:
        applied = go(
            app(sample="cannot_fit_16k", cfg=encode_config(preset("reference", 12_000))).run(),
            "analysis",
        )
        applied.number_input(key="an_window").set_value(WINDOW).run()
        applied = go(applied, "cannot_fit")
        applied.button(key=key).click().run()
        no_exceptions(applied)
        shown = plain(texts(applied))
        after = applied.session_state["cl_lab"]
        assert after.target_tokens is None or after.target_tokens <= WINDOW
        if "Fits and safe" in shown:
            assert "over the 16,000-token context window" not in shown


def test_the_story_judges_the_analysis_window_too(app, monkeypatch) -> None:
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(BUNDLED))
    at = go(app(sample="cannot_fit_16k").run(), "analysis")
    at.number_input(key="an_window").set_value(WINDOW).run()
    at = go(at, "story")
    at.segmented_control(key="story_step").set_value(5).run()
    no_exceptions(at)
    body = plain(texts(at))
    assert f"{WINDOW:,}-token context window" in body
    raised = _numbers(body, r"[Rr]aise the target (?:and the trigger )?to ([\d,]+) tokens")
    assert all(n <= WINDOW for n in raised), raised
