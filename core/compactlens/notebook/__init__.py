"""Notebook tools: a live tuner and a cannot-fit debugger (the notebook extra: ``make lab``
or ``pip install -e '.[notebook]'`` from a clone; ipywidgets is imported when a panel is
built).

    from compactlens.notebook import tune, debug
    tuner = tune(transcript, strategy, budget=8_000)
    tuner                     # the panel: sliders, every stage parameter, status, decision map
    debug(result, strategy, transcript)   # the explanation, ranked fixes, Apply
    debug_compact(transcript, target_tokens=8_000)   # the same for a compact() call

Rich display (``_repr_html_``) and ``to_pandas()`` need no import: results, indexes,
transcripts, explanations and reports have them.
"""

from __future__ import annotations

from compactlens.notebook.compact_debugger import CompactDebugger, debug_compact
from compactlens.notebook.config import (
    AUTO_PROVIDER,
    PROFILE_CHOICES,
    PROVIDER_CHOICES,
    TuneSettings,
    Workbench,
)
from compactlens.notebook.debugger import Debugger, debug, fix_line
from compactlens.notebook.tuner import Tuner, tune

__all__ = [
    "AUTO_PROVIDER",
    "PROFILE_CHOICES",
    "PROVIDER_CHOICES",
    "CompactDebugger",
    "Debugger",
    "TuneSettings",
    "Tuner",
    "Workbench",
    "debug",
    "debug_compact",
    "fix_line",
    "tune",
]
