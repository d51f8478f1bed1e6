"""compactlens inspector: the Streamlit app for compactlens, and its notebook-friendly figures.

Everything that computes (loading, configuration, runs, figures, reports, snippets) is a
plain function that does not import Streamlit; ``state``, ``components`` and ``pages``
are the Streamlit layer on top of them.
"""

from __future__ import annotations

__all__: list[str] = []
