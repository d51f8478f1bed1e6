"""Serving the inspector to many people: the hosting policy (which endpoint gets which key,
limits on paid calls per session and per server, the guard on where a visitor's endpoint
may be reached), the process-wide caches bounded by bytes, the operator's preflight
check and the transcript loader with its upload limit.

Imports only :mod:`compactlens_inspector.style` and the library; no Streamlit (the
preflight check reads Streamlit's secrets files inside a function, the way the app does).
"""
