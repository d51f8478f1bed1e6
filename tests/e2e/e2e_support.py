"""Helpers for the Playwright end-to-end tests and the UI benchmark (no fixtures here).

:func:`start_server` serves the inspector on a free port of 127.0.0.1 and
:func:`wait_healthy` waits for ``/_stcore/health``; :func:`launch_chromium` starts
Debian's Chromium; :class:`StreamlitApp` wraps a Playwright page with
Streamlit-aware helpers (navigation by the sidebar, waiting for reruns, uploads,
metrics); :func:`guard_page` aborts and records every request that is not to
127.0.0.1 and records JavaScript dialogs and page errors.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
SAMPLES = REPO_ROOT / "sample_transcripts"

CHROMIUM_ENV = "COMPACTLENS_CHROMIUM"
SKIP_ENV = "COMPACTLENS_SKIP_E2E"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: The app's upload limit (``COMPACTLENS_MAX_UPLOAD_MB``) in the tests; the default is 50.
APP_UPLOAD_LIMIT_MB = 1

#: Generous: the machine has 2 cores and other test suites run at the same time.
STARTUP_TIMEOUT_S = 90.0
RERUN_TIMEOUT_MS = 60_000
#: How long a download built on the click may take (see :meth:`StreamlitApp.download`).
DOWNLOAD_TIMEOUT_MS = 180_000
#: How long a selectbox choice may take to start its run before it counts as missed.
CHOICE_TIMEOUT_MS = 15_000
VIEWPORT = {"width": 1400, "height": 1000}

LOOPBACK_HOSTS = frozenset({"127.0.0.1"})


def chromium_path() -> str:
    return os.environ.get(CHROMIUM_ENV, DEFAULT_CHROMIUM)


def number(text: str) -> int:
    """``46,971`` as 46971; of ``46,971 → 1,234`` the last number."""
    found = re.findall(r"\d[\d,]*", text)
    assert found, f"no number in {text!r}"
    return int(found[-1].replace(",", ""))


def find_chromium() -> str | None:
    """The Chromium executable to use, or None when there is none."""
    path = chromium_path()
    resolved = path if os.path.isabs(path) else shutil.which(path)
    if resolved and os.path.isfile(resolved) and os.access(resolved, os.X_OK):
        return resolved
    return None


def e2e_skipped() -> bool:
    return os.environ.get(SKIP_ENV, "") == "1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def streamlit_command(port: int, *extra: str) -> list[str]:
    """The command that serves the inspector on 127.0.0.1:``port`` (no watcher, no stats)."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(REPO_ROOT / "app" / "streamlit_app.py"),
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--server.runOnSave",
        "false",
        *extra,
    ]


def server_env(**overrides: str) -> dict[str, str]:
    """The environment of the app: no API key (so nothing can call a model), no proxy."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL") and not k.startswith("STREAMLIT_")
    }
    env["NO_PROXY"] = "127.0.0.1,localhost"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(overrides)
    return env


def wait_healthy(base_url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    """Poll ``/_stcore/health`` until it answers ``ok``; fail with the log if it never does."""
    deadline = time.monotonic() + timeout
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"streamlit exited with code {proc.returncode} before it was healthy; "
                f"log {log}:\n{tail(log)}"
            )
        try:
            with opener.open(base_url + "/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"streamlit was not healthy after {timeout:.0f} s; log {log}:\n{tail(log)}")


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class ServerHandle:
    base_url: str
    log: Path


def start_server(log: Path, *extra: str, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            streamlit_command(port, *extra),
            cwd=REPO_ROOT,
            env=server_env(**env),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return proc, f"http://127.0.0.1:{port}"


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


# -- the page wrapper ------------------------------------------------------------------------------

# Counts the reruns Streamlit starts: stApp's data-test-script-state becomes "running".
# The observer's callback runs after the mutations, so a short run may already be over
# when it reads the attribute; the record's old value ("running") still proves the run.
_OBSERVE_RUNS = """() => {
  window.__clRuns = 0;
  window.__clFinished = 0;
  if (!window.__clObserver) {
    window.__clObserver = new MutationObserver((records) => {
      for (const r of records) {
        const now = r.target.getAttribute('data-test-script-state');
        if (now === 'running' || r.oldValue === 'running') window.__clRuns++;
      }
    });
    window.__clObserver.observe(document.documentElement, {
      subtree: true, attributes: true, attributeOldValue: true,
      attributeFilter: ['data-test-script-state'],
    });
  }
}"""

# Counts the script runs the server reports finished: every ForwardMsg frame on Streamlit's
# websocket is read for its top-level field 6 (``script_finished``, a varint). A run whose
# "running" and "finished" states React renders in one batch never shows "running" in the
# DOM, so the observer above misses it; the server's own message does not. Installed
# before the app's scripts (an init script), so it sees every socket the app opens.
_COUNT_FINISHED = """(() => {
  const Native = window.WebSocket;
  if (!Native || Native.__clWrapped) return;
  window.__clFinished = 0;
  window.__clLastFinished = 0;
  const varint = (b, i) => {
    let v = 0, shift = 0;
    for (;;) {
      const x = b[i++];
      v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return [v, i];
      shift += 7;
    }
  };
  const count = (b) => {
    let i = 0;
    while (i < b.length) {
      let tag; [tag, i] = varint(b, i);
      const field = Math.floor(tag / 8), wire = tag & 7;
      if (wire === 0) { [, i] = varint(b, i); if (field === 6) return true; }
      else if (wire === 2) { let n; [n, i] = varint(b, i); i += n; }
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return false;
    }
    return false;
  };
  const Wrapped = function (...args) {
    const ws = new Native(...args);
    ws.addEventListener('message', (e) => {
      if (e.data instanceof ArrayBuffer && count(new Uint8Array(e.data))) {
        window.__clFinished++;
        window.__clLastFinished = performance.now();
      }
    });
    return ws;
  };
  Wrapped.prototype = Native.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Wrapped[k] = Native[k];
  Wrapped.__clWrapped = true;
  window.WebSocket = Wrapped;
})();"""

# Runs started or finished since the counter was armed (0: the action started none yet).
_RUNS_SINCE_ARMED = "() => (window.__clRuns || 0) + (window.__clFinished || 0)"

# What the page is waiting on, for a timeout's message (never retried: a wait that times
# out fails with this picture of the app).
_WAITING_ON = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const status = document.querySelector('[data-testid="stStatusWidget"]');
  return {
    script_state: app ? app.getAttribute('data-test-script-state') : 'no stApp element',
    runs_seen_since_armed: window.__clRuns === undefined ? 'not armed' : window.__clRuns,
    runs_finished_since_armed: window.__clFinished,
    stale_elements: document.querySelectorAll(
      '[data-testid="stElementContainer"][data-stale="true"]').length,
    skeletons: document.querySelectorAll(
      '[data-testid="stElementContainer"] > [data-testid="stSkeleton"]').length,
    status_widget: status ? (status.innerText || 'shown').trim().slice(0, 80) : null,
    connection: app ? app.getAttribute('data-test-connection-state') : null,
  };
}"""

# Images that are still loading (an <img onerror> fires only once its load has failed).
_IMAGES_SETTLED = """() => Array.from(document.images).every((img) => img.complete)"""

# Resolves after the tasks queued so far have run (two macrotask turns and a frame), so
# an event queued by a finished load (an image's error) has been dispatched.
_FLUSH_TASKS = """() => new Promise((resolve) => {
  setTimeout(() => requestAnimationFrame(() => setTimeout(resolve, 0)), 0);
})"""

_IDLE = """(needRun) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  // A run is proven by the DOM's "running" state, or by the server's "finished" message
  // once the app has had a moment (100 ms) to render what came before it.
  const finished = window.__clFinished > 0 && performance.now() - window.__clLastFinished > 100;
  if (needRun && !(window.__clRuns > 0 || finished)) return false;
  if (document.querySelector('[data-testid="stElementContainer"][data-stale="true"]')) return false;
  // Lazily loaded widgets show a skeleton until their code has arrived.
  if (document.querySelector('[data-testid="stElementContainer"] > [data-testid="stSkeleton"]')) {
    return false;
  }
  return !document.querySelector('[data-testid="stStatusWidget"]');
}"""


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:120] or "page"


@dataclass
class StreamlitApp:
    """A Playwright page on the inspector, with Streamlit-aware helpers."""

    page: Any = field(repr=False)
    base_url: str
    dialogs: list[str] = field(default_factory=list, repr=False)
    external_requests: list[str] = field(default_factory=list, repr=False)
    page_errors: list[str] = field(default_factory=list, repr=False)
    visits: list[tuple[str, bytes]] = field(default_factory=list, repr=False)
    #: Keep a screenshot of each page visited (for a failure's report); a test that visits
    #: many pages and says which one failed turns it off (each costs a full-page capture).
    keep_visits: bool = True

    def __post_init__(self) -> None:
        self.page.add_init_script(_COUNT_FINISHED)

    # -- waiting --------------------------------------------------------------------------------

    def wait_idle(
        self,
        *,
        need_run: bool = False,
        timeout: float = RERUN_TIMEOUT_MS,
        polling: int = 100,
        what: str = "the app to be idle",
    ) -> None:
        """Wait until no script runs, nothing is stale and no status widget is shown.

        With ``need_run``, also until a rerun has started since :meth:`rerun` armed the
        counter. ``polling`` is the check interval in ms (the benchmark uses a short one).
        A timeout fails (it is never retried) with ``what`` and the app's state: script
        state, runs seen since armed, stale elements, skeletons, the status widget.
        """
        try:
            self.page.wait_for_function(_IDLE, arg=need_run, timeout=timeout, polling=polling)
        except PlaywrightTimeout:
            raise AssertionError(self.timeout_message(what, timeout, need_run)) from None

    def timeout_message(self, what: str, timeout: float, need_run: bool = False) -> str:
        """What a timed-out wait was waiting for, and the app as it is now."""
        try:
            state = self.page.evaluate(_WAITING_ON)
        except Exception as exc:  # the page itself may be gone
            state = f"(could not read the page: {type(exc).__name__}: {exc})"
        needed = " after a new rerun" if need_run else ""
        return f"timed out after {timeout / 1000:.0f} s waiting for {what}{needed}; app: {state}"

    def arm_rerun(self) -> None:
        """Start counting reruns (``wait_idle(need_run=True)`` waits for one to finish)."""
        self.page.evaluate(_OBSERVE_RUNS)

    def rerun(
        self,
        action: Callable[[], Any],
        *,
        timeout: float = RERUN_TIMEOUT_MS,
        polling: int = 100,
        what: str = "the rerun of an action",
    ) -> None:
        """Do ``action`` and wait for the rerun it starts to finish.

        First waits until the app is idle, so the counter is armed with no earlier run in
        flight: a run still going (or one about to end) can neither be counted as this
        action's nor absorb its rerun.
        """
        self.wait_idle(timeout=timeout, polling=polling, what=f"quiet before {what}")
        self.arm_rerun()
        action()
        self.wait_idle(need_run=True, timeout=timeout, polling=polling, what=what)

    def settle_images(self, page: Any = None, timeout: float = RERUN_TIMEOUT_MS) -> None:
        """Wait until every image has loaded or failed and the events that queued (an
        ``onerror``) have been dispatched: the page's own signal, not a fixed pause."""
        target = page if page is not None else self.page
        try:
            target.wait_for_function(_IMAGES_SETTLED, timeout=timeout, polling=50)
        except PlaywrightTimeout:
            pending = target.evaluate(
                "() => Array.from(document.images).filter(i => !i.complete).map(i => i.src)"
            )
            raise AssertionError(
                f"timed out after {timeout / 1000:.0f} s waiting for images to load or fail: "
                f"{pending}"
            ) from None
        target.evaluate(_FLUSH_TASKS)

    # -- navigation -----------------------------------------------------------------------------

    def open(self, path: str = "") -> None:
        """Load ``base_url/path`` (a new Streamlit session) and wait for the first run."""
        self.page.goto(f"{self.base_url}/{path.lstrip('/')}")
        self.page.locator('[data-testid="stApp"]').wait_for(timeout=RERUN_TIMEOUT_MS)
        self.page.locator('[data-testid="stSidebarNav"]').wait_for(timeout=RERUN_TIMEOUT_MS)
        # The page's main area is drawn by the first run: its heading (or any element) shows.
        self.main().locator('[data-testid="stElementContainer"]').first.wait_for(
            timeout=RERUN_TIMEOUT_MS
        )
        self.wait_idle(what=f"the first run of {path or 'the home page'!r}")
        self.record_visit(path or "home")

    def nav(self, title: str, heading: str | None = None) -> None:
        """Go to a page by its sidebar link (client-side: the session and its state stay).

        Waits for the page's title heading (``heading``, default the link's title).
        """
        link = self.nav_link(title)
        self.rerun(lambda: link.first.click(), what=f"the page {title!r} to run")
        self.main().get_by_role("heading", name=heading or title, exact=True).wait_for(
            timeout=RERUN_TIMEOUT_MS
        )
        self.record_visit(title)

    def nav_link(self, title: str) -> Any:
        """The sidebar navigation link(s) whose text ends with ``title``."""
        return self.page.locator('[data-testid="stSidebarNav"] a').filter(
            has_text=re.compile(rf"{re.escape(title)}\s*$")
        )

    def record_visit(self, name: str) -> None:
        """Keep a screenshot of the page just visited (written only if the test fails)."""
        if not self.keep_visits:
            return
        # A screenshot is a debugging aid, never a failure.
        with contextlib.suppress(Exception):
            self.visits.append((name, self.page.screenshot(full_page=True, timeout=10_000)))

    # -- widgets --------------------------------------------------------------------------------

    def keyed(self, key: str) -> Any:
        """The element container of the widget or element with Streamlit ``key``."""
        return self.page.locator(f".st-key-{key}")

    def choose(self, key: str, option: str) -> None:
        """Pick ``option`` (its label) in the selectbox with ``key`` and wait for the rerun
        (nothing happens when it is already the chosen one)."""
        box = self.keyed(key).get_by_role("combobox")
        # Act only once the app is idle (no stale widget that a rerun is about to replace).
        self.wait_idle(what=f"quiet before opening the selectbox {key!r}")
        if box.input_value() == option:
            return
        # Type the option's label into the box: it filters the list to the match, which
        # Enter then chooses. Clicking an option of a list that is still animating open
        # missed under load (Playwright saw it as unstable, then detached: 1 in 7 with a
        # CPU hog); so did typing into a box only focused, not clicked (1 in 14). Clicked
        # and typed: 24 of 24 under the same hog.
        what = f"the rerun after choosing {option!r}"
        self.wait_idle(what=f"quiet before {what}")
        self.arm_rerun()
        # An Enter that reaches the list before it has highlighted the match closes it
        # and chooses nothing (seen once in CI: no run started in 60 s). Such a miss shows
        # as no run at all, so the choice is made again; a run that is only slow to start
        # is still counted (the counter stays armed), and choosing the same option again
        # starts no second run.
        for attempt in range(3):
            self._pick(key, box, option)
            try:
                self.wait_idle(need_run=True, timeout=CHOICE_TIMEOUT_MS, what=what)
                break
            except AssertionError:
                if attempt == 2 or self.page.evaluate(_RUNS_SINCE_ARMED) > 0:
                    break
        self.wait_idle(need_run=True, what=what)
        chosen = box.input_value()
        if chosen != option:
            raise AssertionError(f"the selectbox {key!r} shows {chosen!r}, not {option!r}")

    def _pick(self, key: str, box: Any, option: str) -> None:
        """Open the selectbox ``box``, filter it to ``option`` and choose it (no wait)."""
        box.click()
        box.fill(option)
        listbox = self.page.get_by_role("listbox")
        exact = listbox.get_by_role("option", name=option, exact=True)
        try:
            exact.wait_for(state="visible", timeout=RERUN_TIMEOUT_MS)
        except PlaywrightTimeout:
            raise AssertionError(
                self.timeout_message(f"the option {option!r} of the selectbox {key!r}", 60_000)
            ) from None
        first = str(listbox.get_by_role("option").first.inner_text()).strip()
        if first == option:
            box.press("Enter")
        else:  # another label starts the same way: choose the exact one by pointer
            exact.click()

    def choose_segment(self, key: str, option: str) -> None:
        """Press ``option`` of the segmented control with ``key`` and wait for the rerun."""
        button = self.keyed(key).get_by_role("radio", name=option, exact=True)
        self.rerun(lambda: button.click())

    def toggle(self, key: str) -> bool:
        """Flip the toggle (or checkbox) with ``key``, wait for the rerun; its new state."""
        box = self.keyed(key).locator('input[type="checkbox"]')
        box.wait_for(state="attached")
        self.rerun(
            lambda: self.keyed(key).locator("label").first.click(),
            what=f"the rerun after flipping {key!r}",
        )
        return bool(box.is_checked())

    def set_number(self, key: str, value: int) -> None:
        """Type ``value`` into the number input with ``key`` and wait for the rerun
        (nothing happens when it already holds ``value``)."""
        box = self.keyed(key).locator("input")
        self.wait_idle(what=f"quiet before typing into {key!r}")
        if box.input_value() == str(value):
            return
        # fill() only types; Enter commits (one rerun, armed before it).
        box.fill(str(value))
        self.rerun(lambda: box.press("Enter"), what=f"the rerun after entering {value} in {key!r}")

    def click(self, key: str) -> None:
        """Click the button with ``key`` and wait for the rerun."""
        self.rerun(
            lambda: self.keyed(key).locator("button").click(),
            what=f"the rerun after clicking {key!r}",
        )

    def open_expander(self, scope: Any, title: str) -> None:
        """Open the expander titled ``title`` inside ``scope`` (no rerun: client side)."""
        details = scope.locator('[data-testid="stExpander"] details').filter(
            has=self.page.locator("summary").filter(has_text=title)
        )
        if details.first.get_attribute("open") is None:
            details.first.locator("summary").first.click()
        self.page.wait_for_function(
            "(el) => el.hasAttribute('open')", arg=details.first.element_handle()
        )

    def apply_preset(self, label: str, budget: int) -> None:
        """In the lab's strategy builder: pick preset ``label``, its budget, apply it."""
        self.open_expander(self.builder(), "Presets")
        self.choose("sb_preset", label)
        self.set_number("sb_budget", budget)
        self.click("sb_apply")

    def selected(self, key: str) -> str:
        """The label shown by the selectbox with ``key``."""
        return str(self.keyed(key).get_by_role("combobox").input_value())

    def upload(self, *files: Path) -> None:
        """Choose ``files`` in the Load page's uploader and wait for the rerun."""
        chooser = self.keyed("load_upload").locator('input[type="file"]')
        names = ", ".join(f.name for f in files)
        self.rerun(
            lambda: chooser.set_input_files([str(f) for f in files]),
            what=f"the rerun after uploading {names}",
        )

    def metric(self, label: str, scope: Any = None) -> str:
        """The value shown by the metric card labelled ``label``."""
        root = scope if scope is not None else self.page
        card = root.locator('[data-testid="stMetric"]').filter(
            has=self.page.locator('[data-testid="stMetricLabel"]').get_by_text(label, exact=True)
        )
        return str(card.first.locator('[data-testid="stMetricValue"]').inner_text()).strip()

    def status_text(self) -> str:
        """The run's status line (the alert that carries the status badge)."""
        alerts = (
            self.main()
            .locator('[data-testid="stAlert"]')
            .filter(has_text=re.compile(r"compacted|unchanged|cannot-fit"))
        )
        return str(alerts.first.inner_text())

    def chart_traces(self, key: str) -> list[dict[str, Any]]:
        """The traces plotly drew for the chart with ``key``: name, type, points, x, y and
        the text written on each point (empty when the trace has none)."""
        plot = self.keyed(key).locator(".js-plotly-plot")
        plot.wait_for()
        data = plot.evaluate(
            """(el) => (el.data || []).map(t => ({
                name: t.name || '',
                type: t.type || '',
                points: Array.isArray(t.x) ? t.x.length : 0,
                x: Array.isArray(t.x) ? t.x.slice(0, 5000) : [],
                y: Array.isArray(t.y) ? t.y.slice(0, 5000) : [],
                text: Array.isArray(t.text) ? t.text.slice(0, 5000) : [],
            }))"""
        )
        assert isinstance(data, list)
        return data

    def download(self, key: str, folder: Path) -> Path:
        """Click the download button with ``key``; the file it saved in ``folder``.

        A button whose file is built on the click (the HTML report: its analysis, figures
        and plotly.js) answers only once the server has built it, which on a busy 2-core
        machine running two browsers took over a minute: the wait is for the download
        event itself, up to :data:`DOWNLOAD_TIMEOUT_MS`."""
        button = self.keyed(key).locator("button")
        expect(button).to_be_enabled(timeout=RERUN_TIMEOUT_MS)
        with self.page.expect_download(timeout=DOWNLOAD_TIMEOUT_MS) as info:
            button.click()
        dl = info.value
        assert dl.failure() is None, dl.failure()
        path = folder / dl.suggested_filename
        dl.save_as(str(path))
        return path

    def main(self) -> Any:
        return self.page.locator('[data-testid="stMain"]')

    def sidebar(self) -> Any:
        return self.page.locator('[data-testid="stSidebar"]')

    def builder(self) -> Any:
        """The Strategy lab's builder (the left column of the page body)."""
        return self.keyed("lab_builder")


def guard_page(app: StreamlitApp) -> None:
    """Abort (and record) requests off 127.0.0.1; record and dismiss dialogs, page errors."""

    def route(route: Any) -> None:
        url = route.request.url
        parsed = urlparse(url)
        if parsed.scheme in ("data", "blob") or parsed.hostname in LOOPBACK_HOSTS:
            route.continue_()
        else:
            app.external_requests.append(url)
            route.abort()

    def on_dialog(dialog: Any) -> None:
        app.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    app.page.route("**/*", route)
    app.page.on("dialog", on_dialog)
    app.page.on("pageerror", lambda exc: app.page_errors.append(str(exc)))


def launch_chromium(playwright: Any, executable: str | None = None) -> Any:
    """Debian's Chromium (``COMPACTLENS_CHROMIUM``), headless, with no background traffic."""
    return playwright.chromium.launch(
        executable_path=executable or chromium_path(), args=CHROMIUM_ARGS
    )
