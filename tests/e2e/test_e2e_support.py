"""The waiting helpers themselves, on pages that play the app's readiness signals
(``data-test-script-state`` on the ``stApp`` element) with known timing: a rerun is never
confused with one that was already in flight, a timeout says what it was waiting for, and
image errors are waited for by the page's own signal."""

from __future__ import annotations

import pytest
from e2e_support import StreamlitApp

pytestmark = pytest.mark.e2e

# A stand-in for the app: its script is running now and finishes after 300 ms.
_BUSY_PAGE = """
<div data-testid="stApp" data-test-script-state="running"></div>
<script>
  setTimeout(() => document.querySelector('[data-testid="stApp"]')
    .setAttribute('data-test-script-state', 'notRunning'), 300);
</script>
"""

# An action whose rerun starts 600 ms later and ends 300 ms after that.
_ACTION = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  setTimeout(() => app.setAttribute('data-test-script-state', 'running'), 600);
  setTimeout(() => {
    window.__actionRunDone = true;
    app.setAttribute('data-test-script-state', 'notRunning');
  }, 900);
}"""


def test_a_rerun_in_flight_when_armed_is_not_taken_for_the_actions(app: StreamlitApp) -> None:
    app.page.set_content(_BUSY_PAGE)
    app.rerun(lambda: app.page.evaluate(_ACTION), timeout=10_000)
    assert app.page.evaluate("() => window.__actionRunDone === true")


def test_a_timeout_says_what_it_waited_for(app: StreamlitApp) -> None:
    app.page.set_content(
        '<div data-testid="stApp" data-test-script-state="running">'
        '<div data-testid="stElementContainer" data-stale="true"></div></div>'
    )
    with pytest.raises(AssertionError) as info:
        app.wait_idle(timeout=1_000, what="the page to settle")
    message = str(info.value)
    assert message.startswith("timed out after 1 s waiting for the page to settle; app: ")
    assert "'script_state': 'running'" in message
    assert "'stale_elements': 1" in message
    assert "'runs_seen_since_armed': 'not armed'" in message


def test_image_errors_are_waited_for_without_a_pause(app: StreamlitApp) -> None:
    app.page.set_content('<img src="missing.png" onerror="window.__failed = true">')
    app.settle_images()
    assert app.page.evaluate("() => window.__failed === true")
