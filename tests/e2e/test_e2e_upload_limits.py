"""Upload size is limited and configurable: the test server sets
``COMPACTLENS_MAX_UPLOAD_MB=1`` (the default is 50), so files of a few MB show both
checks: the uploader's (in the browser, before any byte is sent) and the app's own
(server side, for input that does not come through the uploader, such as pasted JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_support import APP_UPLOAD_LIMIT_MB, StreamlitApp

pytestmark = pytest.mark.e2e

MB = 1024 * 1024


def transcript_text(size: int) -> str:
    """A valid OpenAI Chat transcript of at least ``size`` bytes (only its size is wrong)."""
    chunk = "lorem ipsum dolor sit amet " * 400  # about 10 KB
    messages = []
    total = 0
    while total < size:
        role = "user" if len(messages) % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"message {len(messages)}: {chunk}"})
        total += len(chunk) + 40
    return json.dumps({"messages": messages})


def loaded_list(app: StreamlitApp) -> str:
    box = app.main().locator('[data-testid="stExpander"]').filter(has_text="Loaded in this")
    return str(box.first.inner_text()) if box.count() else ""


def test_an_upload_over_the_configured_limit_is_refused(app: StreamlitApp, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text(transcript_text(int(1.5 * MB)), encoding="utf-8")
    assert big.stat().st_size > APP_UPLOAD_LIMIT_MB * MB
    app.open("load")
    uploader = app.keyed("load_upload")
    # The limit the user is told about is the configured one, not the default.
    assert f"{APP_UPLOAD_LIMIT_MB}MBperfile" in uploader.inner_text().replace(" ", "")
    uploader.locator('input[type="file"]').set_input_files(str(big))
    refusal = uploader.get_by_text(f"File must be {APP_UPLOAD_LIMIT_MB:.1f}MB or smaller")
    refusal.wait_for()
    app.wait_idle()
    assert big.name not in loaded_list(app)
    assert big.name not in app.selected("sidebar_source")


def test_pasted_json_over_the_limit_gets_a_clear_message(app: StreamlitApp) -> None:
    app.open("load")
    box = app.keyed("load_paste").locator("textarea")
    box.fill(transcript_text(int(1.2 * MB)))
    # The text area sends its value when it loses focus. Let that rerun finish before
    # pressing the button, so the button's rerun never races the 1.2 MB value on a busy
    # machine (a merged click once left the test waiting for a run that never came).
    app.rerun(box.blur)
    app.click("load_paste_button")
    error = app.main().locator('[data-testid="stAlert"]').filter(has_text="pasted")
    text = str(error.first.inner_text())
    assert f"the limit is {APP_UPLOAD_LIMIT_MB} MB" in text, text
    assert "COMPACTLENS_MAX_UPLOAD_MB" in text, text
    assert "pasted.json" not in loaded_list(app)
