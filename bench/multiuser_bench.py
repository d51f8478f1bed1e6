"""Many users at once: one inspector server, several concurrent Chromium sessions.

Goal (issue 18): on this 2-core machine, with 8 people using one server, a parameter
change shows its updated numbers within 2 s (p95), and the server's memory stays flat
(no growth per session once the sessions have ended: per-session state is released).

The script starts the app on a free port of 127.0.0.1 (as the end-to-end tests do) and
runs the sessions in waves. Each wave opens ``--sessions`` browser sessions at once,
each in its own thread with its own Chromium (Debian's): half open a bundled sample in
the Strategy lab through the URL, half upload their own generated transcript (a new
content hash per session and wave, so every upload is a cold parse and index). Then,
until the wave's time is up, each session types a new stage-1 trigger threshold (a
value never used before, so no run comes from the cache), waits for the app's
readiness signals (the rerun has finished, nothing stale, no status widget) and pauses
``--think`` seconds, as a person would. The time from pressing Enter to the page being
ready is one sample.

A sampler reads the server's resident memory (``/proc/<pid>/status`` VmRSS) every
second. After each wave the sessions close and the script waits for the server to drop
them (``--server.disconnectedSessionTTL``, set short here) before reading the memory
"after release". A second wave of new sessions with new uploads shows whether memory
grows per session (it should come back to the same level after each wave).

A team's server does not run its visitors' browsers: here they share its 2 cores. So the
Chromiums run at low priority (``nice -n 19``, ``--browser-nice``) and the server at
normal priority, and the server's own part of each change is measured apart: a small
``sitecustomize`` on the server's ``PYTHONPATH`` (written by this script, bench only)
logs every script run: when its rerun request arrived, when the run ended and the CPU
time of the script thread. "Server-side" below is request arrival to end of run; the
rest of a change's time is the browser (sending, drawing) and the wire.

With ``--split-cores`` the server runs on core 0 alone and this script, its drivers and
its Chromiums on the other cores (CPU affinity): closer to a team's server, whose
visitors' browsers run elsewhere, so the server-side times show what a server with one
core of its own does for eight people. Its results go to a section of their own.

Usage: ``python bench/multiuser_bench.py [--minutes 10] [--sessions 8] [--waves 3]
[--split-cores] [--no-write]``; ``--quick`` is the smoke test (2 sessions, 1 short
wave). Results replace the block between ``<!-- multiuser-bench:start/end -->`` (with
``--split-cores``: ``<!-- multiuser-split:start/end -->``) in ``docs/benchmarks_ui.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import re
import statistics
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
ROOT = _HERE.parent
for extra in (_HERE, ROOT / "tests" / "e2e"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from bench_timing import replace_section  # noqa: E402
from e2e_support import (  # noqa: E402
    VIEWPORT,
    StreamlitApp,
    find_chromium,
    guard_page,
    launch_chromium,
    start_server,
    stop_server,
    wait_healthy,
)
from generate import DATA_DIR, generate_messages  # noqa: E402

GOAL_P95_S = 2.0
DOCS = ROOT / "docs" / "benchmarks_ui.md"
RESULTS = DATA_DIR / "multiuser_results.json"
SECTION = "## Many users at once (issue 18)"
SPLIT_SECTION = "## Many users at once, the server on a core of its own (issue 18)"
START, END = "<!-- multiuser-bench:start -->", "<!-- multiuser-bench:end -->"
SPLIT_START, SPLIT_END = "<!-- multiuser-split:start -->", "<!-- multiuser-split:end -->"
#: The environment variable that tells the server-side hook where to log script runs.
RUN_LOG_ENV = "COMPACTLENS_BENCH_RUN_LOG"
#: The hook, written as ``sitecustomize.py`` into a folder on the server's PYTHONPATH.
#: It patches Streamlit once its runtime is imported (a thread waits for the modules),
#: logs one JSON line per script run, and does nothing without ``RUN_LOG_ENV``.
SERVER_HOOK = """
import gc, json, os, sys, threading, time

LOG = os.environ.get("COMPACTLENS_BENCH_RUN_LOG")
# Time in the cyclic garbage collector by generation (seconds, collections), process-wide.
GC = {"seconds": [0.0, 0.0, 0.0], "count": [0, 0, 0], "started": None}


def _gc(phase, info):
    if phase == "start":
        GC["started"] = time.perf_counter()
    elif GC["started"] is not None:
        GC["seconds"][info["generation"]] += time.perf_counter() - GC["started"]
        GC["count"][info["generation"]] += 1
        GC["started"] = None


def _install():
    while "streamlit.runtime.app_session" not in sys.modules or (
        "streamlit.runtime.scriptrunner.script_runner" not in sys.modules
    ):
        time.sleep(0.2)
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    lock, arrived = threading.Lock(), {}
    request, run = AppSession.request_rerun, ScriptRunner._run_script

    def write(record):
        with lock, open(LOG, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\\n")

    def request_rerun(self, client_state):
        with lock:
            arrived.setdefault(self.id, time.monotonic())
        return request(self, client_state)

    def run_script(self, rerun_data):
        with lock:
            came = arrived.pop(self._session_id, None)
        start, cpu = time.monotonic(), time.thread_time()
        try:
            return run(self, rerun_data)
        finally:
            end = time.monotonic()
            record = {"session": self._session_id, "arrived": came, "start": start,
                      "end": end, "cpu": time.thread_time() - cpu,
                      "fragment": bool(getattr(rerun_data, "fragment_id", None)),
                      "gc_seconds": list(GC["seconds"]), "gc_count": list(GC["count"]),
                      "gc_frozen": gc.get_freeze_count()}
            state = sys.modules.get("compactlens_inspector.state")
            stats = getattr(state, "shared_cache_stats", None)
            if callable(stats):
                try:
                    record["caches"] = stats()
                except Exception as exc:
                    record["caches"] = {"error": repr(exc)}
            write(record)
            if os.environ.get("COMPACTLENS_BENCH_GC_FREEZE") and not GC.get("frozen"):
                GC["frozen"] = True
                gc.freeze()

    AppSession.request_rerun = request_rerun
    ScriptRunner._run_script = run_script


if LOG:
    gc.callbacks.append(_gc)
    threading.Thread(target=_install, daemon=True).start()
"""
SAMPLES = ("coding_agent", "support_long", "shopping_assistant", "cannot_fit_16k")
#: Turns of the generated uploads (about 4 messages a turn): 600 to 2,400 messages.
UPLOAD_TURNS = (150, 300, 450, 600)
QUICK_TURNS = 40
TIMEOUT_MS = 180_000
POLL_MS = 16
SESSION_TTL_S = 5
#: How long everyone waits for all sessions to open (a loaded machine is slow to start 8
#: browsers); the timed part starts when all are open, or at this bound.
OPEN_TIMEOUT_S = 900.0
STAGE_BOX = "sb_stage0_trigger_n_tokens"


@dataclass
class Session:
    name: str
    sample: str = ""
    upload: Path | None = None
    opened_s: float = 0.0
    changes_s: list[float] = field(default_factory=list)
    error: str = ""


@dataclass
class Wave:
    sessions: list[Session]
    rss_before_mb: float = 0.0
    rss_peak_mb: float = 0.0
    rss_end_mb: float = 0.0
    rss_released_mb: float = 0.0
    wall_s: float = 0.0
    server_cpu_s: float = 0.0
    browser_cpu_s: float = 0.0
    metrics_open: dict[str, float] = field(default_factory=dict)
    metrics_released: dict[str, float] = field(default_factory=dict)
    #: Server-side, per script run in the timed part: request arrival to end (s), and
    #: the script thread's CPU (s); the shared caches as the last run of the wave saw them.
    server_latency_s: list[float] = field(default_factory=list)
    server_run_cpu_s: list[float] = field(default_factory=list)
    caches: dict[str, Any] = field(default_factory=dict)
    #: Time (s) and collections of the server's garbage collector per generation in the wave.
    gc_seconds: list[float] = field(default_factory=list)
    gc_count: list[int] = field(default_factory=list)
    #: Objects the server hid from the collector (``gc.freeze``) at the end of the wave.
    gc_frozen: int = 0


# -- the server side and the browsers' priority ---------------------------------------------------


def write_hook(folder: Path) -> Path:
    """The folder holding the server-side hook (``sitecustomize.py``)."""
    hook = folder / "server_hook"
    hook.mkdir(parents=True, exist_ok=True)
    (hook / "sitecustomize.py").write_text(SERVER_HOOK.lstrip(), encoding="utf-8")
    return hook


def niced_chromium(chromium: str, folder: Path, nice: int) -> str:
    """An executable that starts ``chromium`` at ``nice`` (0: the browser itself)."""
    if nice <= 0:
        return chromium
    wrapper = folder / "chromium-nice.sh"
    wrapper.write_text(f'#!/bin/sh\nexec nice -n {nice} "{chromium}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return str(wrapper)


def split_cores(server_pid: int) -> tuple[set[int], set[int]]:
    """Pin the server (every thread it has; later ones inherit) to core 0 and this
    process (its threads, drivers and browsers to come) to the other cores."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        raise SystemExit("--split-cores needs at least 2 cores")
    server, rest = {cores[0]}, set(cores[1:])
    os.sched_setaffinity(0, rest)
    for task in Path(f"/proc/{server_pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(int(task.name), server)
    return server, rest


def read_runs(log: Path, since: float, until: float) -> list[dict[str, Any]]:
    """The server's script runs that started in ``[since, until]`` (monotonic seconds)."""
    if not log.is_file():
        return []
    runs = []
    for line in log.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and since <= record.get("start", -1.0) <= until:
                runs.append(record)
    return runs


def runs_of_wave(log: Path, began: float, sessions: Sequence[Session]) -> list[dict[str, Any]]:
    """The server's script runs of a wave that just ended: those that started between its
    start and now. A change the browser counted near the end (issued before the wave's
    nominal end, answered after it) has its run there too; the run's line is written when
    the script run ends, so wait (at most 10 s) until there are as many runs as counted
    changes."""
    ended = time.monotonic()
    wanted = sum(len(s.changes_s) for s in sessions)
    deadline = ended + 10.0
    while True:
        runs = read_runs(log, began, ended)
        if len(runs) >= wanted or time.monotonic() > deadline:
            return runs
        threading.Event().wait(0.1)


# -- the server's memory ---------------------------------------------------------------------------


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the browsers this script started)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Sampler(threading.Thread):
    """Reads the server's RSS every ``interval`` seconds until stopped."""

    def __init__(self, pid: int, interval: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self.browser_cpu = 0.0  # CPU seconds of the browsers, summed per second sampled
        self._last: dict[int, float] = {}
        self._halt = threading.Event()
        self._start = time.monotonic()

    def run(self) -> None:
        while not self._halt.is_set():
            self.samples.append((time.monotonic() - self._start, rss_mb(self.pid)))
            self._count_browsers()
            self._halt.wait(self.interval)

    def _count_browsers(self) -> None:
        now = {p: cpu_seconds(p) for p in descendants(os.getpid()) if p != self.pid}
        self.browser_cpu += sum(max(0.0, t - self._last.get(p, 0.0)) for p, t in now.items())
        self._last = now

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)

    def peak_since(self, t0: float) -> float:
        return max((mb for t, mb in self.samples if t >= t0), default=0.0)

    def now(self) -> float:
        return time.monotonic() - self._start


def server_metrics(base_url: str) -> dict[str, float]:
    """Streamlit's ``/_stcore/metrics``: active sessions, and per kind of store (session
    state, cache_resource, uploads...) what ``cache_memory_bytes`` reports (entry counts
    unless ``server.enableExpensiveMemoryStats``)."""
    url = f"{base_url}/_stcore/metrics?families=active_sessions&families=cache_memory_bytes"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    out: dict[str, float] = {}
    try:
        with opener.open(url, timeout=30) as response:
            text = response.read().decode("utf-8", "replace")
    except OSError as exc:
        return {"error": float("nan"), f"unreadable: {exc}": float("nan")}
    for line in text.splitlines():
        if line.startswith("active_sessions "):
            out["active_sessions"] = float(line.split()[-1])
        elif line.startswith("cache_memory_bytes{"):
            kind = re.search(r'cache_type="([^"]*)"', line)
            name = kind.group(1) if kind else "other"
            out[name] = out.get(name, 0.0) + float(line.split()[-1])
    return out


# -- one session -----------------------------------------------------------------------------------


def upload_file(folder: Path, wave: int, index: int, turns: int) -> Path:
    """A generated transcript of its own (seed and marker differ per session and wave)."""
    messages = generate_messages(turns, seed=1000 * (wave + 1) + index)
    first = dict(messages[0])
    first["content"] = f"{first['content']} [multi-user benchmark wave {wave} session {index}]"
    path = folder / f"multiuser_w{wave}_s{index}.json"
    doc = {"title": f"multi-user session {index}", "messages": [first, *messages[1:]]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def plan_sessions(count: int, wave: int, folder: Path, quick: bool = False) -> list[Session]:
    sessions = []
    for i in range(count):
        if i % 2 == 0:
            sample = SAMPLES[(i // 2 + wave) % len(SAMPLES)]
            sessions.append(Session(f"w{wave}-s{i} sample {sample}", sample=sample))
        else:
            turns = QUICK_TURNS if quick else UPLOAD_TURNS[(i // 2) % len(UPLOAD_TURNS)]
            path = upload_file(folder, wave, i, turns)
            sessions.append(Session(f"w{wave}-s{i} upload {path.name}", upload=path))
    return sessions


def change_threshold(app: StreamlitApp, value: int) -> float:
    """Type ``value`` into stage 1's trigger and press Enter; seconds until the page is ready."""
    app.open_expander(app.builder(), "1. ")  # the lab builder, in the page body
    box = app.keyed(STAGE_BOX).locator("input")
    app.wait_idle(timeout=TIMEOUT_MS, what="quiet before a change")
    box.fill(str(value))
    start = time.perf_counter()
    app.rerun(lambda: box.press("Enter"), timeout=TIMEOUT_MS, polling=POLL_MS)
    return time.perf_counter() - start


def _open(app: StreamlitApp, path: str) -> None:
    """Load ``path`` (a new session) and wait for its first run, with the long timeout
    (the helpers' 60 s is too short for 8 browsers starting at once on 2 busy cores)."""
    app.page.goto(f"{app.base_url}/{path}", timeout=TIMEOUT_MS)
    app.page.locator('[data-testid="stSidebarNav"]').wait_for(timeout=TIMEOUT_MS)
    app.wait_idle(timeout=TIMEOUT_MS, what=f"the first run of {path!r}")


def open_session(app: StreamlitApp, session: Session) -> None:
    start = time.perf_counter()
    if session.upload is not None:
        _open(app, "load")
        chooser = app.keyed("load_upload").locator('input[type="file"]')
        path = str(session.upload)
        app.rerun(lambda: chooser.set_input_files(path), timeout=TIMEOUT_MS, what="the upload")
        link = app.page.locator('[data-testid="stSidebarNav"] a').filter(has_text="Strategy lab")
        app.rerun(lambda: link.first.click(), timeout=TIMEOUT_MS, what="the lab")
    else:
        _open(app, f"lab?sample={session.sample}")
    session.opened_s = time.perf_counter() - start


def drive(
    session: Session,
    base_url: str,
    chromium: str,
    ready: threading.Barrier,
    stop_at: list[float],
    think_s: float,
    salt: int,
) -> None:
    """One person: open, wait for everyone, then change the parameter until the time is up."""
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw, chromium)
            context = browser.new_context(viewport=VIEWPORT)
            try:
                page = context.new_page()
                page.set_default_timeout(TIMEOUT_MS)
                app = StreamlitApp(page, base_url)
                guard_page(app)
                try:
                    open_session(app, session)
                finally:
                    with contextlib.suppress(threading.BrokenBarrierError):
                        ready.wait(timeout=OPEN_TIMEOUT_S)
                value = 4_000 + salt
                while time.monotonic() < stop_at[0]:
                    value += 997  # never a value seen before: each change is a new plan
                    session.changes_s.append(change_threshold(app, value))
                    pause = min(think_s, max(0.0, stop_at[0] - time.monotonic()))
                    threading.Event().wait(pause)
                if app.external_requests:
                    session.error = f"requests off 127.0.0.1: {app.external_requests[:3]}"
            finally:
                context.close()
                browser.close()
    except Exception as exc:  # recorded and reported: one broken session is a finding
        session.error = f"{type(exc).__name__}: {str(exc)[:300]}"


def run_wave(
    wave: int,
    sessions: list[Session],
    base_url: str,
    chromium: str,
    seconds: float,
    think_s: float,
) -> tuple[dict[str, float], float]:
    """Run the wave; Streamlit's metrics halfway through (every session open) and when
    the timed part began (monotonic seconds)."""
    ready = threading.Barrier(len(sessions) + 1)
    stop_at = [float("inf")]
    threads = [
        threading.Thread(
            target=drive,
            args=(s, base_url, chromium, ready, stop_at, think_s, 100_000 * wave + 10_000 * i),
            daemon=True,
        )
        for i, s in enumerate(sessions)
    ]
    for t in threads:
        t.start()
    with contextlib.suppress(threading.BrokenBarrierError):
        ready.wait(timeout=OPEN_TIMEOUT_S)
    began = time.monotonic()
    stop_at[0] = began + seconds
    threading.Event().wait(seconds / 2)
    halfway = server_metrics(base_url)
    for t in threads:
        t.join(timeout=seconds + OPEN_TIMEOUT_S)
    return halfway, began


def wait_released(sampler: Sampler, settle_s: float, base_url: str, chromium: str) -> float:
    """The server's RSS once the closed sessions are dropped: their TTL plus ``settle_s``,
    then one short probe session (any rerun lets the app release what closed sessions
    left behind), closed again. Without ``chromium`` (quick mode) no probe."""
    threading.Event().wait(SESSION_TTL_S + settle_s)
    if not chromium:
        return rss_mb(sampler.pid)
    probe = Session("probe", sample=SAMPLES[0])
    drive(probe, base_url, chromium, threading.Barrier(1), [0.0], 0.0, 0)
    threading.Event().wait(SESSION_TTL_S + 1.0)
    return rss_mb(sampler.pid)


# -- the report ------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


def summarize(waves: list[Wave], sampler: Sampler, args: argparse.Namespace) -> dict[str, Any]:
    changes = [c for w in waves for s in w.sessions for c in s.changes_s]
    opened = [s.opened_s for w in waves for s in w.sessions if s.opened_s]
    server = [x for w in waves for x in w.server_latency_s]
    cpu = [x for w in waves for x in w.server_run_cpu_s]
    return {
        "sessions": args.sessions,
        "waves": len(waves),
        "minutes": args.minutes,
        "think_s": args.think,
        "browser_nice": args.browser_nice,
        "cache_mb": args.cache_mb,
        "split_cores": args.split_cores,
        "changes": len(changes),
        "p50_s": percentile(changes, 0.50),
        "p95_s": percentile(changes, 0.95),
        "max_s": max(changes, default=float("nan")),
        "mean_s": statistics.fmean(changes) if changes else float("nan"),
        "server_runs": len(server),
        "server_p50_s": percentile(server, 0.50),
        "server_p95_s": percentile(server, 0.95),
        "server_cpu_p50_s": percentile(cpu, 0.50),
        "server_cpu_p95_s": percentile(cpu, 0.95),
        "open_p50_s": percentile(opened, 0.50),
        "open_max_s": max(opened, default=float("nan")),
        "errors": [f"{s.name}: {s.error}" for w in waves for s in w.sessions if s.error],
        "waves_detail": [
            {k: v for k, v in asdict(w).items() if k != "sessions"}
            | {
                "per_session_changes": [len(s.changes_s) for s in w.sessions],
                "changes_s": [c for s in w.sessions for c in s.changes_s],
            }
            for w in waves
        ],
        "rss_series": [(round(t, 1), round(mb, 1)) for t, mb in sampler.samples[:: args.every]],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "load_before": args.load_before,
        "load_after": os.getloadavg()[0],
    }


def _cache_flag(r: dict[str, Any]) -> str:
    split = " --split-cores" if r.get("split_cores") else ""
    return split + (f" --cache-mb {r['cache_mb']}" if r.get("cache_mb") else "")


def _pair(values: Sequence[float]) -> str:
    return f"{percentile(values, 0.5):.2f} / {percentile(values, 0.95):.2f} s"


def _caches(caches: dict[str, Any]) -> str:
    """The shared caches as the server's last run of a wave saw them: MB / budget, entries."""
    if not caches or "error" in caches:
        return "n/a"
    used = sum(c.get("bytes", 0) for c in caches.values() if isinstance(c, dict))
    budget = sum(c.get("budget", 0) for c in caches.values() if isinstance(c, dict))
    entries = sum(c.get("entries", 0) for c in caches.values() if isinstance(c, dict))
    return f"{used / 2**20:.0f} / {budget / 2**20:.0f} MB, {entries} entries"


def render(results: dict[str, Any]) -> str:
    r = results
    nice = r.get("browser_nice", 0)
    where = (
        f"the Chromiums at `nice -n {nice}`, the server at normal priority"
        if nice
        else "the Chromiums and the server at the same priority"
    )
    shared = (
        f"The browsers share the server's {os.cpu_count()} cores here ({where}); on a team's "
        "server they run on people's own machines, so the server-side time is shown apart."
    )
    if r.get("split_cores"):
        shared = (
            "The server runs on core 0 alone; this script, its drivers and the Chromiums "
            f"on the other core{'s' if (os.cpu_count() or 2) > 2 else ''} (CPU affinity), as "
            "a team's server whose visitors' browsers run elsewhere. The browser-side "
            f"times are those of {r['sessions']} Chromiums sharing what is left."
        )
    lines = [
        SPLIT_SECTION if r.get("split_cores") else SECTION,
        "",
        f"Written by `python bench/multiuser_bench.py --minutes {r['minutes']:g} --waves "
        f"{r['waves']}{_cache_flag(r)}` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {r['machine']}; "
        f"load average {r['load_before']:.1f} when it started, {r['load_after']:.1f} when it "
        "ended, counting this script's own browsers).",
        "",
        f"One server, {r['sessions']} concurrent Chromium sessions per wave, {r['waves']} "
        f"waves of new sessions; each person changes the stage-1 trigger threshold, waits "
        f"for the page to be ready, then pauses {r['think_s']:g} s. {shared}",
        "",
        "| measure | value | goal |",
        "|---|---:|---:|",
        f"| parameter change -> updated numbers in the browser, p50 | {r['p50_s']:.2f} s | |",
        f"| parameter change -> updated numbers in the browser, p95 | {r['p95_s']:.2f} s | "
        f"<= {GOAL_P95_S:.0f} s |",
        f"| slowest change | {r['max_s']:.2f} s | |",
        f"| changes measured | {r['changes']} | |",
        f"| server side: rerun request arrived -> script run ended, p50 / p95 "
        f"({r['server_runs']} runs) | {r['server_p50_s']:.2f} / {r['server_p95_s']:.2f} s | |",
        f"| server CPU per script run (its thread), p50 / p95 | {r['server_cpu_p50_s']:.3f} / "
        f"{r['server_cpu_p95_s']:.3f} s | |",
        f"| session opened (sample or upload, to the lab), p50 / max | "
        f"{r['open_p50_s']:.1f} / {r['open_max_s']:.1f} s | |",
        "",
        "Per wave (browser: Enter to ready; server: request to end of run):",
        "",
        "| wave | changes | browser p50 / p95 | server p50 / p95 "
        "| server CPU per run p50 / p95 | garbage collector (full collections) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for i, w in enumerate(r["waves_detail"]):
        gc_s, gc_n = w.get("gc_seconds") or [0.0], w.get("gc_count") or [0, 0, 0]
        lines.append(
            f"| {i + 1} | {len(w['changes_s'])} | {_pair(w['changes_s'])} | "
            f"{_pair(w['server_latency_s'])} | {_pair(w['server_run_cpu_s'])} | "
            f"{sum(gc_s):.1f} s ({gc_n[-1]}) |"
        )
    lines += [
        "",
        "Server memory (RSS, MB) per wave, and the shared caches after it:",
        "",
        "| wave | before | peak | end of the wave (browsers closed) "
        "| after the server dropped the sessions | shared caches (used / budget) |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    for i, w in enumerate(r["waves_detail"]):
        lines.append(
            f"| {i + 1} | {w['rss_before_mb']:.0f} | {w['rss_peak_mb']:.0f} | "
            f"{w['rss_end_mb']:.0f} | {w['rss_released_mb']:.0f} | {_caches(w['caches'])} |"
        )
    lines += [
        "",
        "Where the CPU went (cores busy on average over each wave, this machine has "
        f"{os.cpu_count()}):",
        "",
        "| wave | seconds | the server | the Chromium sessions (this script's) "
        "| server CPU per change (opening included) |",
        "|---:|---:|---:|---:|---:|",
    ]
    for i, w in enumerate(r["waves_detail"]):
        wall = max(w["wall_s"], 1e-9)
        per_change = w["server_cpu_s"] / max(1, sum(w["per_session_changes"]))
        lines.append(
            f"| {i + 1} | {w['wall_s']:.0f} | {w['server_cpu_s'] / wall:.2f} | "
            f"{w['browser_cpu_s'] / wall:.2f} | {per_change:.2f} s |"
        )
    lines += [
        "",
        "Streamlit's own count (`/_stcore/metrics`, entries per store) halfway through each "
        "wave and after its sessions were dropped:",
        "",
        "| wave | active sessions | session-state entries | cache_resource entries "
        "| uploaded bytes |",
        "|---:|---|---|---|---|",
    ]
    for i, w in enumerate(r["waves_detail"]):
        o, d = w["metrics_open"], w["metrics_released"]

        def pair(name: str, o: dict[str, float] = o, d: dict[str, float] = d) -> str:
            return f"{o.get(name, 0):.0f} -> {d.get(name, 0):.0f}"

        lines.append(
            f"| {i + 1} | {pair('active_sessions')} | {pair('st_session_state')} | "
            f"{pair('st_cache_resource')} | {pair('UploadedFileManager')} |"
        )
    lines += ["", "Findings (written from the numbers above):", ""]
    lines += [f"- {f}" for f in findings(r)]
    if r["errors"]:
        lines += ["", "Sessions that failed:", ""] + [f"- {e}" for e in r["errors"]]
    return "\n".join(lines) + "\n"


def findings(r: dict[str, Any]) -> list[str]:
    waves = r["waves_detail"]
    met = r["p95_s"] <= GOAL_P95_S
    out = [
        f"The p95 goal ({GOAL_P95_S:.0f} s, in the browser) is "
        f"{'met' if met else 'not met'} on this run; server-side the p95 is "
        f"{r['server_p95_s']:.2f} s."
    ]
    cores = os.cpu_count() or 1
    busy = [w["browser_cpu_s"] / max(w["wall_s"], 1e-9) for w in waves]
    server = [w["server_cpu_s"] / max(w["wall_s"], 1e-9) for w in waves]
    if busy and server:
        out.append(
            f"At most {max(busy):.1f} of the {cores} cores went to the browsers and "
            f"{max(server):.1f} to the server."
        )
    released = all(
        w["metrics_released"].get("st_session_state", 0) == 0
        and w["metrics_released"].get("UploadedFileManager", 0) == 0
        and w["metrics_released"].get("active_sessions", 0) == 0
        for w in waves
    )
    out.append(
        "Per-session state was released after every wave (no session, no session-state "
        "entry and no uploaded byte left)."
        if released
        else "Per-session state was NOT fully released after a wave (see the table)."
    )
    if len(waves) > 1:
        after = [w["rss_released_mb"] for w in waves]
        growth = [b - a for a, b in itertools.pairwise(after)]
        out.append(
            "Server memory after release changed by "
            + ", ".join(f"{g:+.0f} MB" for g in growth)
            + " from one wave to the next (new sessions, new uploads and new runs each wave; "
            "the shared caches are bounded by bytes, see the last column)."
        )
    return out


# -- main ------------------------------------------------------------------------------------------


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="total time of the waves")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--waves", type=int, default=3)
    parser.add_argument(
        "--browser-nice", type=int, default=19, help="nice value of the Chromiums (0: none)"
    )
    parser.add_argument(
        "--cache-mb",
        type=int,
        default=0,
        help="the server's COMPACTLENS_CACHE_MB (0: its default); a small budget fills "
        "within the run, so the waves after show whether memory stays flat",
    )
    parser.add_argument(
        "--split-cores",
        action="store_true",
        help="the server on core 0 alone, the browsers and this script on the others",
    )
    parser.add_argument("--think", type=float, default=1.0, help="pause after each change (s)")
    parser.add_argument("--quick", action="store_true", help="smoke test: 2 sessions, 10 s")
    parser.add_argument("--no-write", action="store_true", help="do not touch the docs")
    parser.add_argument("--json", type=Path, default=RESULTS, help="raw results file")
    args = parser.parse_args(argv)
    if args.quick:
        args.sessions, args.waves, args.minutes, args.no_write = 2, 1, 1 / 6, True
    args.every = max(1, int(args.minutes * 60 / 120))  # about 120 points in the series
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    args.load_before = os.getloadavg()[0]
    chromium = find_chromium()
    if chromium is None:
        print("no Chromium: run `bash scripts/ensure_chromium.sh`", file=sys.stderr)
        return 2
    folder = DATA_DIR / "multiuser"
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "streamlit.log"
    run_log = folder / "script_runs.jsonl"
    run_log.unlink(missing_ok=True)
    hook = write_hook(folder)
    path = os.pathsep.join(p for p in (str(hook), os.environ.get("PYTHONPATH", "")) if p)
    chromium = niced_chromium(chromium, folder, args.browser_nice)
    ttl = ("--server.disconnectedSessionTTL", str(SESSION_TTL_S))
    env = {RUN_LOG_ENV: str(run_log), "PYTHONPATH": path}
    if args.cache_mb:
        env["COMPACTLENS_CACHE_MB"] = str(args.cache_mb)
    proc, base_url = start_server(log, *ttl, **env)
    if args.split_cores:
        split_cores(proc.pid)
    sampler = Sampler(proc.pid)
    waves: list[Wave] = []
    try:
        wait_healthy(base_url, proc, log, 120.0)
        sampler.start()
        seconds = args.minutes * 60 / args.waves
        for n in range(args.waves):
            sessions = plan_sessions(args.sessions, n, folder, args.quick)
            wave = Wave(sessions, rss_before_mb=rss_mb(proc.pid))
            t0, cpu0, browsers0 = sampler.now(), cpu_seconds(proc.pid), sampler.browser_cpu
            wave.metrics_open, began = run_wave(
                n, sessions, base_url, chromium, seconds, args.think
            )
            timed = runs_of_wave(run_log, began, sessions)
            wave.server_latency_s = [r["end"] - (r["arrived"] or r["start"]) for r in timed]
            wave.server_run_cpu_s = [r["cpu"] for r in timed]
            wave.wall_s = sampler.now() - t0
            wave.server_cpu_s = cpu_seconds(proc.pid) - cpu0
            wave.browser_cpu_s = sampler.browser_cpu - browsers0
            wave.rss_peak_mb = sampler.peak_since(t0)
            wave.rss_end_mb = rss_mb(proc.pid)
            settle = 10.0 if not args.quick else 1.0
            probe = "" if args.quick else chromium
            wave.rss_released_mb = wait_released(sampler, settle, base_url, probe)
            wave.metrics_released = server_metrics(base_url)
            last = read_runs(run_log, began, time.monotonic())
            wave.caches = last[-1].get("caches", {}) if last else {}
            wave.gc_frozen = last[-1].get("gc_frozen", 0) if last else 0
            if timed:
                first, final = timed[0], last[-1]
                wave.gc_seconds = [
                    b - a for a, b in zip(first["gc_seconds"], final["gc_seconds"], strict=True)
                ]
                wave.gc_count = [
                    b - a for a, b in zip(first["gc_count"], final["gc_count"], strict=True)
                ]
            waves.append(wave)
            done = sum(len(x.changes_s) for x in sessions)
            print(
                f"wave {n + 1}: {done} changes, RSS {wave.rss_released_mb:.0f} MB", file=sys.stderr
            )
    finally:
        stop_server(proc)
        sampler.stop()
    results = summarize(waves, sampler, args)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    text = render(results)
    print(text)
    if not args.no_write:
        start, end = (SPLIT_START, SPLIT_END) if args.split_cores else (START, END)
        replace_section(DOCS, f"{start}\n{text.rstrip()}\n{end}", start, end)
    return 0 if not results["errors"] and results["changes"] else 1


if __name__ == "__main__":
    sys.exit(main())
