"""The strategy lab's model: the configuration (stages, triggers, presets, URL encoding,
sweep paths), runs over a prebuilt index and turn-by-turn replays.

:mod:`~compactlens_inspector.lab.config` is the one to import the configuration from.
Imports :mod:`~compactlens_inspector.style`, :mod:`~compactlens_inspector.serving` and the
library; no Streamlit.
"""
