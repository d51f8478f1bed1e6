"""What every page shares: the error boundary, the URL sync and the page header."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException

from compactlens_inspector import state
from compactlens_inspector.components.error_box import show_exception
from compactlens_inspector.style.safety import md_escape

#: Widgets shared by several pages (sidebar). Their values live in the store, so they are
#: re-seeded from it when the page changes (a widget on another page is another widget).
SHARED_PREFIXES = ("sb_", "sidebar_")
CURRENT_PAGE = "cl_current_page"


def page(render: Callable[[], None], name: str) -> None:
    """Run a page: any error becomes a clear box (never a traceback); then sync the URL."""
    if st.session_state.get(CURRENT_PAGE) != name:
        st.session_state[CURRENT_PAGE] = name
        for prefix in SHARED_PREFIXES:
            state.forget(prefix)
    try:
        render()
    except ScriptControlException:
        raise
    except Exception as exc:  # the page boundary: show it, do not crash
        show_exception(exc, what="Something went wrong on this page")
    try:
        state.sync_url()
    except ScriptControlException:
        raise
    except Exception:  # the URL is a convenience; never fail a page for it
        pass


def header(title: str, caption: str) -> None:
    st.title(title, anchor=False)
    st.caption(caption)
    state.init_from_url()
    notice = state.url_notice()
    if notice:
        st.warning(md_escape(notice), icon=":material/link_off:")


def need_transcript() -> None:
    st.info(
        "No transcript is loaded. Open **Load** to upload one, paste JSON or pick a sample.",
        icon=":material/upload_file:",
    )
    st.page_link(
        "compactlens_inspector/pages/load.py", label="Go to Load", icon=":material/upload:"
    )
