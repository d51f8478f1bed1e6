"""The tuner in a real JupyterLab: open ``examples/tune.ipynb`` in Chromium, run it, move
the trigger slider and see the status the library computes.

JupyterLab runs on a free port of 127.0.0.1 with a token, no browser, and a temporary root
holding a copy of the notebook and the one sample it reads; its config, data-less runtime
and workspace folders are temporary too. Every wait is on the page's own signals (the
kernel's execution indicator, the tuner's status badge), with generous timeouts.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from e2e_support import (
    ARTIFACTS,
    LOOPBACK_HOSTS,
    REPO_ROOT,
    SAMPLES,
    STARTUP_TIMEOUT_S,
    VIEWPORT,
    free_port,
    stop_server,
    tail,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from compactlens import (
    ExtractiveSummarizer,
    PipelineStrategy,
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    load_transcript,
    tokens_exceed,
)
from compactlens.engine import tokens_at_most

pytestmark = pytest.mark.e2e

#: Kernel start, imports and the first run on a busy 2-core machine.
RUN_TIMEOUT_MS = 180_000
STATUS = ".compactlens-tuner [data-role='status']"


@dataclass(frozen=True)
class Lab:
    url: str
    token: str
    log: Path


@pytest.fixture(scope="module")
def lab(chromium_executable: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("lab-root")
    shutil.copy(REPO_ROOT / "examples" / "tune.ipynb", root / "tune.ipynb")
    (root / "sample_transcripts").mkdir()
    shutil.copy(SAMPLES / "coding_agent.json", root / "sample_transcripts" / "coding_agent.json")
    home = tmp_path_factory.mktemp("lab-home")
    _settings(home / "settings")
    token = secrets.token_hex(16)
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
    }
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / "e2e-jupyterlab.log"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        "--ServerApp.terminals_enabled=False",
        # Containers often run as root; JupyterLab refuses that unless told.
        *(["--allow-root"] if os.geteuid() == 0 else []),
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(f"{url}/api/status?token={token}", proc, log)
        yield Lab(url, token, log)
    finally:
        stop_server(proc)


def _settings(folder: Path) -> None:
    """User settings: start the notebook's kernel without asking, and never fetch news or
    look for updates (the test runs offline)."""
    files = {
        "@jupyterlab/notebook-extension/tracker": {"autoStartDefaultKernel": True},
        "@jupyterlab/apputils-extension/notification": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
    }
    for name, values in files.items():
        path = folder / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


def _wait_up(status_url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited ({proc.returncode}):\n{tail(log)}")
        try:
            with urllib.request.urlopen(status_url, timeout=5) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer in {STARTUP_TIMEOUT_S:.0f} s:\n{tail(log)}")


@pytest.fixture
def page(browser: Any, lab: Lab) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(RUN_TIMEOUT_MS)
    outside: list[str] = []

    def route(route: Any) -> None:
        parsed = urlparse(route.request.url)
        if parsed.scheme in ("data", "blob") or parsed.hostname in LOOPBACK_HOSTS:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    try:
        yield page
    except BaseException:
        raise
    finally:
        if outside:
            print("JupyterLab asked for (aborted):", sorted(set(outside)))
        ARTIFACTS.mkdir(exist_ok=True)
        try:
            page.screenshot(path=str(ARTIFACTS / "e2e-jupyterlab.png"), full_page=True)
        except Exception as exc:  # the page may be gone; the log still says what happened
            print(f"screenshot failed: {exc}")
        context.close()


#: True once a kernel is idle with a client connected (asked from the page, so the
#: browser keeps running while the test waits).
_KERNEL_CONNECTED = """async (token) => {
  const reply = await fetch(`/api/kernels?token=${token}`);
  if (!reply.ok) return false;
  const kernels = await reply.json();
  return kernels.some((k) => k.execution_state === 'idle' && k.connections >= 1);
}"""


def _wait_kernel_connected(page: Any, lab: Lab) -> None:
    """Until the notebook's kernel is idle with the page connected to it (the page's own
    indicator says idle before any kernel exists, so it cannot tell)."""
    page.wait_for_function(_KERNEL_CONNECTED, arg=lab.token, polling=500)


#: True once a code cell has been queued or run (its prompt shows ``*`` or a number).
_STARTED = """() => Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'))
  .some((p) => /\\[(\\*|\\d+)\\]/.test(p.textContent))"""


#: True once every code cell has run (each prompt shows a number).
_ALL_DONE = """() => {
  const prompts = Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'));
  return prompts.length > 0 && prompts.every((p) => /\\[\\d+\\]/.test(p.textContent));
}"""

#: True when the tuner's status badge says ``want``.
_STATUS_IS = """([sel, want]) => document.querySelector(sel)?.textContent.trim() === want"""


def _run_all(page: Any, attempts: int = 4) -> None:
    """Run > Run All Cells, until a cell is queued: while JupyterLab is still activating
    its plugins (slow on a busy machine) the command can be a no-op, so a click that
    queues nothing within 30 s is repeated."""
    for _ in range(attempts):
        page.locator(".jp-NotebookPanel .jp-Cell").first.click()
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_function(_STARTED, timeout=30_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    pytest.fail(f"Run All Cells queued no cell in {attempts} attempts")


def _expected(trigger: int, target: int) -> str:
    over = tokens_exceed(trigger)
    pipeline = PipelineStrategy(
        ToolResultCompactionStrategy(trigger=over),
        SummarizationStrategy(ExtractiveSummarizer(), trigger=over),
        TruncationStrategy(trigger=over, minimum_preserved=4),
        target=tokens_at_most(target),
    )
    transcript = load_transcript(SAMPLES / "coding_agent.json")
    return apply_compaction(transcript.messages, pipeline).status


def test_run_the_tuning_notebook_and_move_a_slider(page: Any, lab: Lab) -> None:
    # The notebook ends with the tuner's target (and trigger) at 2,500, set from code.
    ran = _expected(2500, 2500)  # the trigger follows the target
    above_all = _expected(10**9, 2500)
    assert ran != above_all, "the slider must change something this test can see"

    page.goto(f"{lab.url}/lab/tree/tune.ipynb?token={lab.token}")
    _wait_kernel_connected(page, lab)
    _run_all(page)
    page.wait_for_function(_ALL_DONE, polling=500)
    page.wait_for_function(_STATUS_IS, arg=[STATUS, ran])
    # The decision map under the status, drawn by JupyterLab's plotly renderer.
    page.locator(".compactlens-tuner .js-plotly-plot").first.wait_for()

    # The trigger slider to its maximum (the whole transcript): nothing fires.
    handle = page.locator(".compactlens-tuner .widget-slider .noUi-handle").first
    handle.focus()
    handle.press("End")
    page.wait_for_function(_STATUS_IS, arg=[STATUS, above_all])
    readout = page.locator(".compactlens-tuner .widget-slider .widget-readout").first
    assert int(readout.inner_text().replace(",", "")) >= 8000
