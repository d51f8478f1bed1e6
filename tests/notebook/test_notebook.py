"""``examples/inspect.ipynb`` runs top to bottom in a fresh kernel and draws its figures.

The notebook is executed in memory (the committed file is never rewritten) from the
``examples`` folder, with the ``python3`` kernel: jupyter_client starts it with this
interpreter, and falls back to ipykernel's built-in spec when none is registered.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from compactlens import CharEstimator, MessageIndex, load_transcript

REPO_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO_ROOT / "examples" / "inspect.ipynb"
PLOTLY_MIME = "application/vnd.plotly.v1+json"


def _code_cells(nb: Any) -> list[Any]:
    return [c for c in nb.cells if c.cell_type == "code"]


def _text(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.fixture(scope="module")
def executed() -> Any:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # The "python3" kernel: jupyter_client runs it with this interpreter (sys.executable),
    # listening on 127.0.0.1 only.
    manager = KernelManager(kernel_name="python3", ip="127.0.0.1")
    client = NotebookClient(
        nb,
        km=manager,
        timeout=180,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    return nb


def test_the_committed_notebook_has_no_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    for cell in _code_cells(nb):
        assert cell.outputs == [], "clear the notebook's outputs before committing it"
        assert cell.execution_count is None


def test_every_cell_runs_without_error(executed: Any) -> None:
    cells = _code_cells(executed)
    assert cells and all(c.execution_count is not None for c in cells)
    errors = [o for c in cells for o in c.outputs if o.output_type == "error"]
    assert errors == []


def test_every_figure_cell_draws_a_plotly_figure(executed: Any) -> None:
    figure_cells = [c for c in _code_cells(executed) if "figure" in c.metadata.get("tags", [])]
    assert len(figure_cells) >= 6
    for cell in figure_cells:
        figs = [o.data[PLOTLY_MIME] for o in cell.outputs if PLOTLY_MIME in o.get("data", {})]
        assert len(figs) == 1, f"no plotly figure from: {cell.source}"
        traces = figs[0].get("data", [])
        assert traces, f"an empty figure from: {cell.source}"


def test_the_printed_numbers_are_the_engines(executed: Any) -> None:
    out = "\n".join(_text(c) for c in _code_cells(executed))
    ix = MessageIndex.build(
        load_transcript(REPO_ROOT / "sample_transcripts" / "coding_agent.json").messages,
        CharEstimator(),
    )
    expected = (
        f"{ix.total_messages} messages, {ix.total_groups} groups, "
        f"{ix.total_turns} turns, {ix.total_tokens:,} tokens, {len(ix.problems)} pairing problems"
    )
    assert expected in out
    assert re.search(r"^compacted - ", out, re.MULTILINE), out
    assert re.search(r"^cannot-fit - ", out, re.MULTILINE), out
