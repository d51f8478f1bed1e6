"""Playwright end-to-end fixtures: the inspector on 127.0.0.1 and Debian's Chromium.

* ``app_server`` (session): ``python -m streamlit run app/streamlit_app.py`` on a free
  port of 127.0.0.1, waited for through ``/_stcore/health``, stopped at the end. Its
  log goes to ``test-artifacts/e2e-streamlit.log``. The app's upload limit
  (``COMPACTLENS_MAX_UPLOAD_MB``) is set to 1 MB so it can be tested with small files.
  Visitors' endpoints are turned on with 127.0.0.1 listed as a private host the server
  may reach (both are off by default), since the tests' model servers run there.
* ``browser`` (session): Chromium from ``COMPACTLENS_CHROMIUM`` (default
  ``/usr/bin/chromium``). A missing browser FAILS the tests with a clear message; set
  ``COMPACTLENS_SKIP_E2E=1`` to skip them instead.
* ``app`` (per test): a fresh browser context (so a fresh Streamlit session) wrapped in
  :class:`StreamlitApp`: navigation by the sidebar, waiting for reruns, uploads. Every
  request that is not to 127.0.0.1 is aborted and recorded, and fails the test at
  teardown (the app must work offline); every JavaScript dialog (``alert``...) is
  dismissed and recorded. ``app_factory`` makes more of them (new sessions).

On failure, the page as it is is saved as a full-page screenshot to
``test-artifacts/screenshots/<test name>.png``, and the screenshots taken after each
page visit of the test as ``<test name>--<n>-<page>.png``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from e2e_support import (
    APP_UPLOAD_LIMIT_MB,
    ARTIFACTS,
    CHROMIUM_ENV,
    RERUN_TIMEOUT_MS,
    SCREENSHOTS,
    SKIP_ENV,
    STARTUP_TIMEOUT_S,
    VIEWPORT,
    ServerHandle,
    StreamlitApp,
    chromium_path,
    e2e_skipped,
    find_chromium,
    guard_page,
    launch_chromium,
    slug,
    start_server,
    stop_server,
    wait_healthy,
)


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    if e2e_skipped():
        pytest.skip(f"{SKIP_ENV}=1: end-to-end browser tests skipped on request")
    resolved = find_chromium()
    if resolved is None:
        pytest.fail(
            f"no Chromium at {chromium_path()!r}: the end-to-end tests need Debian's Chromium. "
            f"Run `bash scripts/ensure_chromium.sh` (as root: apt-get install -y chromium), "
            f"set {CHROMIUM_ENV} to a Chromium binary, or set {SKIP_ENV}=1 to skip them.",
            pytrace=False,
        )
    return resolved


@pytest.fixture(scope="session")
def app_server(chromium_executable: str) -> Iterator[ServerHandle]:
    """The inspector on a free port of 127.0.0.1 for the whole session."""
    log = ARTIFACTS / "e2e-streamlit.log"
    proc, base_url = start_server(
        log,
        COMPACTLENS_MAX_UPLOAD_MB=str(APP_UPLOAD_LIMIT_MB),
        COMPACTLENS_VISITOR_ENDPOINTS="on",
        COMPACTLENS_ALLOWED_PRIVATE_HOSTS="127.0.0.1",
    )
    try:
        wait_healthy(base_url, proc, log, STARTUP_TIMEOUT_S)
        yield ServerHandle(base_url, log)
    finally:
        stop_server(proc)


@pytest.fixture(scope="session")
def browser(chromium_executable: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p, chromium_executable)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def app_factory(browser: Any, app_server: ServerHandle) -> Iterator[Callable[[], StreamlitApp]]:
    """Makes pages on the inspector, each in its own browser context (its own session)."""
    contexts: list[Any] = []
    made: list[StreamlitApp] = []

    def make() -> StreamlitApp:
        context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(RERUN_TIMEOUT_MS)
        wrapper = StreamlitApp(page, app_server.base_url)
        guard_page(wrapper)
        made.append(wrapper)
        return wrapper

    try:
        yield make
    finally:
        for context in contexts:
            context.close()
    # The app must work offline: nothing it serves may reach for another host.
    outside = sorted({url for page in made for url in page.external_requests})
    if outside:
        pytest.fail(f"the app requested URLs outside 127.0.0.1 (aborted): {outside}")


@pytest.fixture
def app(app_factory: Callable[[], StreamlitApp]) -> StreamlitApp:
    """A page on the inspector in a fresh browser context (a fresh Streamlit session)."""
    return app_factory()


# -- screenshots on failure ------------------------------------------------------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when not in ("setup", "call") or not report.failed:
        return
    wrapper = getattr(item, "funcargs", {}).get("app")
    if not isinstance(wrapper, StreamlitApp):
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    name = slug(item.name)
    saved: list[str] = []
    try:
        path = SCREENSHOTS / f"{name}.png"
        wrapper.page.screenshot(path=str(path), full_page=True, timeout=15_000)
        saved.append(str(path))
    except Exception as exc:  # the page may be gone; keep the visit screenshots anyway
        saved.append(f"(final screenshot failed: {exc})")
    for n, (page_name, png) in enumerate(wrapper.visits, start=1):
        path = SCREENSHOTS / f"{name}--{n:02d}-{slug(page_name)}.png"
        path.write_bytes(png)
        saved.append(str(path))
    report.sections.append(("e2e screenshots", "\n".join(saved)))
