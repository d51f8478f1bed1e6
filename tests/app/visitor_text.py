"""A hostile visitor string and a scan of an AppTest page for any place it renders as
Markdown (issue 27, finding 3) rather than as text.

Streamlit reads Markdown in element bodies (markdown, captions, alerts, subheaders),
metric labels and values, expander, tab, radio and button labels, and help texts; it
also links bare URLs and e-mail addresses and draws ``:icon:`` shortcodes in the
rendered text, whatever backslashes the source had. :func:`leaks` walks every element
proto of the page and reports each Markdown string in which a piece of :data:`HOSTILE`
would still form a link, an image, HTML, a colour directive, math or an icon; the
strings Streamlit shows as plain text (``st.text``, ``st.code``, selectbox options,
widget values) are skipped, and Plotly figures are checked for their HTML subset.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from google.protobuf.message import Message
from streamlit.testing.v1 import AppTest

URL = "http://127.0.0.1:9/"

#: Every construct Streamlit's Markdown turns into something other than text.
HOSTILE = (
    f"![x]({URL}t.png) [Sign in]({URL}) <img src=x onerror=alert(1)> "
    f'<a href="{URL}">Session expired</a> **bold** ` $x$ :red[red] :material/lock: '
    f"{URL}bare"
)

#: Pieces of HOSTILE that must not survive as active Markdown syntax (escapes removed).
_SYNTAX = ("![x](", "[Sign in](", "<img", "<a href", ":red[", "$x$", "](http")
#: Pieces that must not appear in the rendered text, where Streamlit links bare URLs and
#: draws icons after the Markdown is parsed.
_RENDERED = ("http://127.0.0.1", ":material/lock:")

#: (proto type, field) pairs Streamlit shows as plain text, never as Markdown.
_PLAIN = {
    ("Text", "body"),
    ("Code", "code_text"),
    ("Json", "body"),
    ("Selectbox", "options"),
    ("Selectbox", "raw_value"),
    ("MultiSelect", "options"),
    ("MultiSelect", "raw_values"),
    ("MultiSelect", "default"),
    ("TextInput", "value"),
    ("TextInput", "default"),
    ("TextInput", "placeholder"),
    ("TextArea", "value"),
    ("TextArea", "default"),
    ("TextArea", "placeholder"),
}
#: Fields that are never shown at all.
_HIDDEN = {"id", "form_id", "key", "url", "page_script_hash", "data_id"}


def _mask(text: str) -> str:
    """``text`` with backslash escapes and code spans blanked: what stays can form syntax."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and not text[i + 1].isalnum() and not text[i + 1].isspace():
            out.append("\x00\x00")
            i += 2
            continue
        if ch == "`":
            j = i
            while j < n and text[j] == "`":
                j += 1
            run = text[i:j]
            end = text.find(run, j)
            while end != -1 and (text[end + len(run) : end + len(run) + 1] == "`"):
                end = text.find(run, end + len(run) + 1)
            if end != -1:
                out.append("\x01" * (end + len(run) - i))
                i = end + len(run)
                continue
            out.append(run)
            i = j
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _rendered_text(text: str) -> str:
    """The text Markdown would show outside code spans: escapes resolved."""
    masked = _mask(text)
    kept = []
    i = 0
    while i < len(text):
        if masked[i] == "\x00":
            kept.append(text[i + 1])
            i += 2
            continue
        kept.append(" " if masked[i] == "\x01" else text[i])
        i += 1
    return "".join(kept)


def markdown_leaks(text: str) -> list[str]:
    """The pieces of HOSTILE that ``text`` (read as Streamlit Markdown) still renders."""
    masked = _mask(text)
    found = [s for s in _SYNTAX if s in masked]
    shown = _rendered_text(text)
    return found + [s for s in _RENDERED if s in shown]


def _strings(msg: Message, path: str = "") -> Iterator[tuple[str, str, str]]:
    for field, value in msg.ListFields():
        values = value if isinstance(value, list) or hasattr(value, "extend") else [value]
        for v in values:
            if isinstance(v, Message):
                yield from _strings(v, f"{path}.{field.name}")
            elif isinstance(v, str):
                yield msg.DESCRIPTOR.name, field.name, v


def _nodes(node: Any) -> Iterator[Any]:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _nodes(child)


def _plotly_leaks(spec: str) -> list[str]:
    bad: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            low = value.lower()
            bad.extend(f"plotly: {value[:80]!r}" for tag in ("<a ", "<img") if tag in low)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(json.loads(spec))
    return bad


def leaks(at: AppTest) -> list[str]:
    """Every rendered string of the page in which a piece of HOSTILE is live Markdown."""
    out: list[str] = []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        if not isinstance(proto, Message):
            continue
        for kind, field, value in _strings(proto):
            if field in _HIDDEN or (kind, field) in _PLAIN:
                continue
            if kind == "PlotlyChart" and field == "spec":
                out.extend(_plotly_leaks(value))
                continue
            bad = markdown_leaks(value)
            if bad:
                out.append(f"{kind}.{field} renders {bad}: {value[:160]!r}")
    return out
