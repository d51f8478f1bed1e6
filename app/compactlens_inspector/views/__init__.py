"""Plain data for each screen: what a page, the HTML report or the export reads from a run,
a message, the context budget, a recorded compaction or the story mode.

Imports the packages below it (style, serving, lab) and the library; no Streamlit.
"""
