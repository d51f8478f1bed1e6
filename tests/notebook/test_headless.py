"""Every notebook in ``examples/`` runs headless the way users run it: ``jupyter nbconvert
--to notebook --execute`` and ``papermill`` with default settings (both use the
asynchronous kernel client), each run finishing into a file under 1 MB (the figures travel
as plotly's mimetype, never with plotly.js inside a widget's output).

On a quiet machine every run takes under 60 s (walkthrough.ipynb, the slowest, about 40 s);
the limit here is twice that so a busy 2-core machine does not fail it, while a run that
stalls on a widget's output (the old failure: the whole timeout on the tuner's cell) does.

The committed notebooks are never rewritten: the executed copies go to a temporary folder.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "examples"
NOTEBOOKS = sorted(p.name for p in EXAMPLES.glob("*.ipynb"))
LIMIT_SECONDS = 120
LIMIT_BYTES = 1_000_000
PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _nbconvert(name: str, out_dir: Path) -> Path:
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute"]
    command += ["--output-dir", str(out_dir), str(EXAMPLES / name)]
    try:
        done = subprocess.run(
            command, cwd=EXAMPLES, capture_output=True, text=True, timeout=LIMIT_SECONDS
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"nbconvert --execute {name} did not finish within {LIMIT_SECONDS} s")
    assert done.returncode == 0, done.stderr[-4000:]
    return out_dir / name


def _papermill(name: str, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / name
    command = [sys.executable, "-m", "papermill", "--no-progress-bar", "-k", "python3"]
    command += [str(EXAMPLES / name), str(executed)]
    try:
        done = subprocess.run(
            command, cwd=EXAMPLES, capture_output=True, text=True, timeout=LIMIT_SECONDS
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"papermill {name} did not finish within {LIMIT_SECONDS} s")
    assert done.returncode == 0, done.stderr[-4000:]
    return executed


def _output_models(nb: Any) -> dict[str, Any]:
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    return {k: m["state"] for k, m in state.items() if m.get("model_name") == "OutputModel"}


def _check_small_with_output(name: str, executed: Path) -> Any:
    size = executed.stat().st_size
    assert size < LIMIT_BYTES, f"{name} executed is {size:,} bytes"
    nb = nbformat.read(executed, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert outputs, f"{name} produced no output"
    assert [o for o in outputs if o.output_type == "error"] == []
    return nb


def _check_tuner(nb: Any) -> None:
    """The tuner cell: the widget panel (its plain text the result, not ``VBox(...)``), a
    static copy of its card for a reader without a kernel, and the decision map as
    plotly's mimetype; no widget output holds HTML (plotly.js)."""
    cells = [c for c in nb.cells if "tuner" in c.metadata.get("tags", [])]
    assert len(cells) == 1, "tune.ipynb has a cell tagged tuner"
    data = [o.get("data", {}) for o in cells[0].outputs]
    views = [d for d in data if WIDGET_MIME in d]
    assert len(views) == 1, "the tuner cell shows one widget panel"
    assert views[0]["text/plain"].startswith("compactlens tuner: <CompactionResult: ")
    cards = [d["text/html"] for d in data if "compactlens-snapshot" in d.get("text/html", "")]
    assert len(cards) == 1 and 'data-role="status"' in cards[0]
    charts = [d[PLOTLY_MIME] for d in data if PLOTLY_MIME in d]
    assert len(charts) == 1 and charts[0].get("data"), "the decision map under the panel"
    for model in _output_models(nb).values():
        for output in model.get("outputs", []):
            assert "text/html" not in output.get("data", {}), "no HTML (plotly.js) in a widget"


@pytest.mark.slow
@pytest.mark.timeout(2 * LIMIT_SECONDS * len(NOTEBOOKS) + 60)
def test_nbconvert_and_papermill_execute_every_notebook_into_a_small_file(
    tmp_path: Path,
) -> None:
    """One run at a time, in one test: kernels started side by side (two test workers at
    once) once left one nbconvert waiting for its kernel past the limit."""
    assert "tune.ipynb" in NOTEBOOKS
    for name in NOTEBOOKS:
        stem = name.split(".")[0]
        for runner in (_nbconvert, _papermill):
            nb = _check_small_with_output(name, runner(name, tmp_path / runner.__name__ / stem))
            if name == "tune.ipynb":
                _check_tuner(nb)
