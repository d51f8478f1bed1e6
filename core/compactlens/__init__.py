"""compactlens: a reference engine for LLM conversation compaction."""

from __future__ import annotations

__version__ = "0.1.0"
