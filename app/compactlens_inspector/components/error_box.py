"""A clear error box: which file, where in it, and what is wrong. Never a traceback."""

from __future__ import annotations

import streamlit as st

from compactlens import TranscriptError
from compactlens_inspector.style.safety import md_code, md_escape


def transcript_error(source: str, location: str, message: str) -> None:
    """Show a loader error (file, location such as ``messages[3].role``, message)."""
    lines = [f"**Could not read** {md_code(source)}"]
    if location:
        lines.append(f"**Where:** {md_code(location)}")
    lines.append(f"**Problem:** {md_escape(message)}")
    st.error("  \n".join(lines), icon=":material/error:")


def show_exception(exc: BaseException, *, what: str = "This view failed") -> None:
    """A friendly box for any error caught at a page boundary."""
    if isinstance(exc, TranscriptError):
        transcript_error(exc.source, exc.location, exc.message)
        return
    from compactlens_inspector.lab.runs import redact

    st.error(
        f"**{md_escape(what)}:** {md_escape(type(exc).__name__)}: {md_escape(redact(str(exc)))}",
        icon=":material/error:",
    )
