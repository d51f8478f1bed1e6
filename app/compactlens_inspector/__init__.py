"""compactlens inspector: the Streamlit app for compactlens.

The package is in rooms, lowest first; each imports only the rooms before it:
``style`` (numbers, words, colours, inert text), ``serving`` (hosting policy, shared
caches, preflight, loader), ``lab`` (configuration, runs, replay), ``views`` (plain data
for each screen), ``exports`` (downloads, HTML report, snippet), ``state`` (session state,
cached products, the URL), ``components`` (reused widgets) and ``pages`` (one script per
page). The first five compute with plain functions and never import Streamlit; ``state``,
``components`` and ``pages`` are the Streamlit layer on top of them.
"""

from __future__ import annotations

__all__: list[str] = []
