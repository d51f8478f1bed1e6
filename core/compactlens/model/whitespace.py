"""Whitespace as JavaScript's ``String.prototype.trim()`` sees it, and the summary text rule.

Python's ``str.strip()`` and JavaScript's ``trim()`` disagree on six characters:
``strip()`` removes U+001C..U+001F and U+0085 (NEL), which ``trim()`` keeps, and
keeps U+FEFF (byte order mark), which ``trim()`` removes. compactlens decides
whether a summary is empty, and trims it, with the JavaScript set everywhere (not
only under the deepagents profile), so a summary accepted by ``@deepagents/compaction``
is accepted here and the two agree on the text: a BOM-only summary is empty, a
NEL-only summary is not.
"""

from __future__ import annotations

from typing import Any

#: ECMAScript WhiteSpace (TAB, VT, FF, SP, NBSP, ZWNBSP and the Zs category) and
#: LineTerminator (LF, CR, LS, PS): what ``trim()`` removes.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """``text`` without leading and trailing whitespace, as JavaScript's ``trim()``."""
    return text.strip(JS_WHITESPACE)


def summary_text(value: Any) -> str:
    """The summary text a summarizer returned, trimmed; ``""`` when it is empty or not a string.

    A summary is empty when :func:`js_trim` leaves nothing.
    """
    return js_trim(value) if isinstance(value, str) else ""


__all__ = ["JS_WHITESPACE", "js_trim", "summary_text"]
