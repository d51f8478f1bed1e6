"""A corpus worker that kills its own process for one file (imported by spawned workers)."""

from __future__ import annotations

import os
from typing import Any

from compactlens.analysis import CorpusRow
from compactlens.analysis.corpus import process_file


def crash_on_poison(path: str, key: str, config: dict[str, Any]) -> CorpusRow:
    if "poison" in key:
        os._exit(13)  # the worker process dies without a Python exception
    return process_file(path, key, config)
