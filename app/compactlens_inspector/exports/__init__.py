"""What leaves the inspector as a file: the export downloads, the self-contained HTML
report and the Python snippet that reproduces a run.

Imports the packages below it (style, serving, lab, views) and the library; no Streamlit.
"""
