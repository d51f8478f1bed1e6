"""The notebook tools in a real JupyterLab, as a user meets them: open
``examples/tune.ipynb`` in Chromium and run it, move the tuner's target and see the tokens
change, switch to the dark theme and see the cards and the figure follow it, save, and open
the saved notebook where no kernel can start and still see the result; open
``examples/debug_cannot_fit.ipynb``, pick a fix in the debugger's list and apply it.

JupyterLab runs on 127.0.0.1 (a free port of 8680-8689) with no token, no browser, and a
temporary root holding copies of the notebooks and the samples they read; its config,
runtime, settings and workspace folders are temporary too. Every wait is on JupyterLab's
own signals (the kernel's state from its REST API, the cells' execution prompts, the
tuner's status badge), with generous timeouts for a busy machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
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
    stop_server,
    tail,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from compactlens import (
    CharEstimator,
    ExtractiveSummarizer,
    MessageIndex,
    PipelineStrategy,
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    load_transcript,
    tokens_exceed,
)
from compactlens.engine import CompactionResult, tokens_at_most
from compactlens.notebook import debug

pytestmark = pytest.mark.e2e

#: Kernel start, imports and the first run on a busy 2-core machine.
RUN_TIMEOUT_MS = 240_000
#: The ports of this test's JupyterLab (one free one is taken).
PORTS = range(8680, 8690)
TUNER = ".compactlens-tuner"
STATUS = f"{TUNER} [data-role='status']"
TOKENS = f"{TUNER} [data-role='tokens']"
NOTEBOOKS = ("tune.ipynb", "debug_cannot_fit.ipynb")


@dataclass(frozen=True)
class Lab:
    url: str
    root: Path
    log: Path


def _free_port_in_range() -> int:
    for port in PORTS:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.fail(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


@pytest.fixture(scope="module")
def lab(chromium_executable: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("lab-root")
    for name in NOTEBOOKS:
        shutil.copy(REPO_ROOT / "examples" / name, root / name)
    (root / "sample_transcripts").mkdir()
    for sample in ("coding_agent.json", "cannot_fit_16k.json"):
        shutil.copy(SAMPLES / sample, root / "sample_transcripts" / sample)
    home = tmp_path_factory.mktemp("lab-home")
    _settings(home / "settings")
    port = _free_port_in_range()
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
        # No token: the server listens on 127.0.0.1 only, for this test.
        "--IdentityProvider.token=",
        "--ServerApp.password=",
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
        _wait_up(f"{url}/api/status", proc, log)
        yield Lab(url, root, log)
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
def pages(browser: Any, lab: Lab) -> Iterator[Any]:
    """Makes pages on the lab, each in its own browser context; ``no_kernel=True`` makes
    one that cannot start a kernel (a reader of a saved notebook). Requests leaving
    127.0.0.1 are aborted. Each page's screenshot is kept in test-artifacts/."""
    made: list[tuple[str, Any, Any]] = []

    def make(name: str, *, no_kernel: bool = False) -> Any:
        context = browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        page.set_default_timeout(RUN_TIMEOUT_MS)

        def route(route: Any) -> None:
            request = route.request
            parsed = urlparse(request.url)
            starts_kernel = request.method == "POST" and parsed.path.startswith(
                ("/api/sessions", "/api/kernels")
            )
            if no_kernel and starts_kernel:
                route.abort()
            elif parsed.scheme in ("data", "blob") or parsed.hostname in LOOPBACK_HOSTS:
                route.continue_()
            else:
                print("JupyterLab asked for (aborted):", request.url)
                route.abort()

        page.route("**/*", route)
        made.append((name, context, page))
        return page

    try:
        yield make
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        for name, context, page in made:
            try:
                page.screenshot(path=str(ARTIFACTS / f"e2e-jupyterlab-{name}.png"))
            except Exception as exc:  # the page may be gone; the log still says what happened
                print(f"screenshot {name} failed: {exc}")
            context.close()


#: True once a kernel is idle with a client connected (asked from the page, so the
#: browser keeps running while the test waits).
_KERNEL_CONNECTED = """async () => {
  const reply = await fetch('/api/kernels');
  if (!reply.ok) return false;
  const kernels = await reply.json();
  return kernels.some((k) => k.execution_state === 'idle' && k.connections >= 1);
}"""


def _wait_kernel_connected(page: Any) -> None:
    """Until the notebook's kernel is idle with the page connected to it (the page's own
    indicator says idle before any kernel exists, so it cannot tell)."""
    page.wait_for_function(_KERNEL_CONNECTED, polling=500)


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


#: True once no code cell shows an execution count (the committed outputs are cleared).
_ALL_CLEARED = """() => Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'))
  .every((p) => !/\\[(\\*|\\d+)\\]/.test(p.textContent))"""


def _menu(page: Any, top: str, *path: str) -> None:
    """Open menu ``top`` of the menu bar and click down ``path`` (submenus open on click)."""
    page.get_by_role("menuitem", name=top, exact=True).click()
    for name in path:
        label = page.locator(".lm-Menu-itemLabel").filter(has_text=re.compile(f"^{name}$"))
        page.locator(".lm-Menu .lm-Menu-item").filter(has=label).last.click()


def _run_all(page: Any, attempts: int = 4) -> None:
    """Clear the committed outputs, then Run > Run All Cells until a cell is queued: while
    JupyterLab is still activating its plugins (slow on a busy machine) a command can be a
    no-op, so a try that queues nothing within 30 s is repeated."""
    for _ in range(attempts):
        page.locator(".jp-NotebookPanel .jp-Cell").first.click()
        _menu(page, "Edit", "Clear Outputs of All Cells")
        try:
            page.wait_for_function(_ALL_CLEARED, timeout=30_000)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            continue
        _menu(page, "Run", "Run All Cells")
        try:
            page.wait_for_function(_STARTED, timeout=30_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    pytest.fail(f"Run All Cells queued no cell in {attempts} attempts")


#: Shuts every kernel down through the server's REST API, as the page's own client does
#: (with the XSRF token of its cookie); resolves to how many were running.
_SHUT_DOWN_KERNELS = """async () => {
  const xsrf = document.cookie.match(/(?:^|; )_xsrf=([^;]+)/)?.[1];
  const headers = xsrf ? {'X-XSRFToken': decodeURIComponent(xsrf)} : {};
  const kernels = await (await fetch('/api/kernels')).json();
  for (const k of kernels) {
    const reply = await fetch(`/api/kernels/${k.id}`, {method: 'DELETE', headers});
    if (!reply.ok) throw new Error(`shutting down ${k.id}: ${reply.status}`);
  }
  return kernels.length;
}"""

#: True once the server runs no kernel.
_NO_KERNEL = """async () => (await (await fetch('/api/kernels')).json()).length === 0"""


def _shut_down_kernels(page: Any) -> None:
    assert page.evaluate(_SHUT_DOWN_KERNELS) >= 1
    page.wait_for_function(_NO_KERNEL, polling=500)


def _pipeline(trigger: int, target: int) -> PipelineStrategy:
    """The pipeline of tune.ipynb with the tuner's trigger and target."""
    over = tokens_exceed(trigger)
    return PipelineStrategy(
        ToolResultCompactionStrategy(trigger=over),
        SummarizationStrategy(ExtractiveSummarizer(), trigger=over),
        TruncationStrategy(trigger=over, minimum_preserved=4),
        target=tokens_at_most(target),
    )


def _expected(trigger: int, target: int) -> CompactionResult:
    transcript = load_transcript(SAMPLES / "coding_agent.json")
    return apply_compaction(transcript.messages, _pipeline(trigger, target))


def _tokens(result: CompactionResult) -> str:
    return f"{result.tokens_before:,} → {result.tokens_after:,} tokens"


def _open_and_run(page: Any, lab: Lab, name: str) -> None:
    page.goto(f"{lab.url}/lab/tree/{name}?reset")  # only this notebook open
    _wait_kernel_connected(page)
    _run_all(page)
    page.wait_for_function(_ALL_DONE, polling=500)


#: The relative luminance (0 black, 1 white) of an element's computed background.
_BACKGROUND_LUMINANCE = """(sel) => {
  const el = document.querySelector(sel);
  const [r, g, b, a] = getComputedStyle(el).backgroundColor.match(/[\\d.]+/g).map(Number);
  if (a === 0) return 1;  // transparent: not a dark background of its own
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}"""


def test_tune_move_the_target_go_dark_save_and_reopen_without_a_kernel(
    pages: Any, lab: Lab
) -> None:
    # The notebook ends with the tuner's target (and trigger) at 2,500, set from code.
    ran = _expected(2500, 2500)
    moved = _expected(7000, 7000)  # the trigger follows the target
    assert ran.tokens_after != moved.tokens_after, "the move must change the tokens"

    page = pages("tune")
    _open_and_run(page, lab, "tune.ipynb")
    page.wait_for_function(_STATUS_IS, arg=[STATUS, ran.status])
    assert page.locator(TOKENS).inner_text() == _tokens(ran)
    # The decision map under the panel, drawn by JupyterLab's plotly renderer.
    tuner_cell = page.locator(".jp-CodeCell", has=page.locator(TUNER))
    tuner_cell.locator(".js-plotly-plot").first.wait_for()

    # The target slider (the second) to 7,000, typed into its readout as a user can.
    readout = page.locator(f"{TUNER} .widget-slider .widget-readout").nth(1)
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("7000")
    page.keyboard.press("Enter")
    page.wait_for_function(
        """([sel, want]) => document.querySelector(sel)?.textContent.trim() === want""",
        arg=[TOKENS, _tokens(moved)],
    )
    trigger = page.locator(f"{TUNER} .widget-slider .widget-readout").nth(0)
    assert trigger.inner_text().replace(",", "") == "7000"
    # The static copy of the card is hidden while the panel is live.
    assert not page.locator(".compactlens-snapshot").first.is_visible()

    # The dark theme: the budget bar and the figure follow it.
    _menu(page, "Settings", "Theme", "JupyterLab Dark")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    bar = f"{TUNER} [data-role='budget']"
    page.wait_for_function(f"() => ({_BACKGROUND_LUMINANCE})({json.dumps(bar)}) < 0.35")
    paper = tuner_cell.locator(".js-plotly-plot .main-svg").first
    assert paper.evaluate("(el) => getComputedStyle(el).backgroundColor") == "rgba(0, 0, 0, 0)"
    page.screenshot(path=str(ARTIFACTS / "e2e-jupyterlab-tune-dark.png"))

    # Save, then open the saved notebook where no kernel can start.
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => !document.querySelector('.jp-mod-current.jp-mod-dirty, .lm-TabBar-tab.jp-mod-dirty')"
    )
    saved = (lab.root / "tune.ipynb").read_text(encoding="utf-8")
    assert _tokens(moved) in json.dumps(json.loads(saved), ensure_ascii=False)
    # No kernel: the one that ran is shut down, and the reader's page cannot start one.
    _shut_down_kernels(page)
    reader = pages("tune-saved", no_kernel=True)
    reader.goto(f"{lab.url}/lab/tree/tune.ipynb?reset")
    snapshot = reader.locator(".compactlens-snapshot")
    snapshot.locator("[data-role='status']").wait_for()
    assert snapshot.locator("[data-role='status']").inner_text().strip() == moved.status
    assert snapshot.locator("[data-role='tokens']").inner_text().strip() == _tokens(moved)
    reader_cell = reader.locator(".jp-CodeCell", has=snapshot)
    reader_cell.locator(".js-plotly-plot").first.wait_for()


def test_debugger_pick_a_fix_and_apply_it(pages: Any, lab: Lab) -> None:
    dump = load_transcript(SAMPLES / "cannot_fit_16k.json")
    strategy = TruncationStrategy(trigger=tokens_exceed(16000), minimum_preserved=4)
    stuck = apply_compaction(dump.messages, strategy, CharEstimator())
    index = MessageIndex.build(dump.messages, CharEstimator())
    # The fixes as the widget lists them: the notebook's own call, the one rule for what is
    # shown (a fix that loses most facts is hidden), judged by the verdict of their run.
    fixes = list(debug(stuck, strategy, index).fixes)
    assert fixes, "the debugger lists a fix"
    pick = len(fixes) - 1  # the last one listed (the first when there is one)

    page = pages("debug")
    _open_and_run(page, lab, "debug_cannot_fit.ipynb")
    panel = page.locator(".compactlens-debugger")
    choice = panel.locator("select")
    choice.wait_for()
    # Every fix is one line of the list box, and the list does not run under the button.
    assert choice.locator("option").count() == len(fixes)
    box = choice.bounding_box()
    button = panel.get_by_role("button", name="Apply the selected fix").bounding_box()
    assert box is not None and button is not None and box["y"] + box["height"] <= button["y"]

    choice.select_option(index=pick)
    panel.get_by_role("button", name="Apply the selected fix").click()
    applied = panel.locator("text=applied").first
    applied.wait_for()
    page.wait_for_function(
        """([sel, want]) => document.querySelector(sel)?.textContent.includes(want)""",
        arg=[".compactlens-debugger", f"applied {fixes[pick].plain_summary}"],
    )
    after = panel.locator("[data-role='tokens']").last
    assert after.inner_text().endswith(f"{fixes[pick].tokens_after:,} tokens")
