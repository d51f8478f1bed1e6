"""Widget values in session state: seed a widget from the store, forget widgets by prefix.

Below the rest of :mod:`compactlens_inspector.state` because making another transcript
active re-seeds the widgets that show its budget.
"""

from __future__ import annotations

from typing import Any

import streamlit as st


def widget(key: str, value: Any) -> None:
    """Seed a widget's session-state value from the store when the widget is new.

    Widgets lose their state when a page does not render them; the store keeps the
    value and this puts it back, so a widget can have a stable ``key`` and no
    ``value=`` argument.
    """
    if key not in st.session_state:
        st.session_state[key] = value


def forget(prefix: str) -> None:
    """Drop every widget value whose key starts with ``prefix`` (to re-seed from the store)."""
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix)]:
        del st.session_state[key]
