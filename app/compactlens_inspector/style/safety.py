"""Keep transcript content inert wherever it is shown.

Transcript text is shown with ``st.text`` / ``st.code`` (never as HTML). When a user
opts into Markdown rendering, :func:`neutralize_markdown` first escapes raw HTML,
turns links with a script-capable scheme (``javascript:``, ``vbscript:``, ``data:``,
``file:``) into plain text, and stops remote images from loading. Labels that mix our
own Markdown with visitor text go through :func:`md_escape` (or :func:`md_code` for a
code span): every string a visitor controls (anything from a transcript or its file name,
query parameters, a shared configuration, error messages that quote them) is shown as
text wherever Streamlit reads Markdown: bodies, captions, alerts, metric labels and
values, expander, tab, radio and button labels, help. Plain-text places (``st.text``,
``st.code``, selectbox options, table cells) take the text as it is; table cells go
through :func:`sheet_safe` so a CSV copied or downloaded from a table cannot hold a
spreadsheet formula; chart text through :func:`plot_text`. No Streamlit here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

#: Characters with a meaning in Markdown or Streamlit's Markdown extensions.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:^=&])")

# A scheme, allowing the whitespace and control characters browsers strip inside one.
_ALLOWED_SCHEMES = ("http", "https", "mailto")
_SCHEME = re.compile(r"^[\s\x00-\x1f]*([a-zA-Z][a-zA-Z0-9+.\-\s\x00-\x1f]*):")
_INLINE_LINK = re.compile(
    r"(!?)\[([^\]\n]*)\]\(\s*(<[^>\n]*>|(?:[^()\s]|\([^()\s]*\))*)([^)\n]*)\)"
)
_REF_DEF = re.compile(r"^( {0,3}\[[^\]\n]+\]:\s*)(\S+)(.*)$", re.MULTILINE)
_AUTOLINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.\-]*:[^>\s]*)>")
_BARE_SCRIPT = re.compile(r"(?i)\b(j\s*a\s*v\s*a\s*s\s*c\s*r\s*i\s*p\s*t|vbscript|data|file)(\s*):")


def _safe_url(url: str) -> bool:
    url = html.unescape(url.strip().strip("<>").replace("\\", "")).strip()
    match = _SCHEME.match(url)
    if match is None:
        # No scheme: a relative link or an anchor. Refuse protocol-relative links.
        return not url.startswith("//")
    scheme = re.sub(r"[\s\x00-\x1f]", "", match.group(1)).lower()
    return scheme in _ALLOWED_SCHEMES


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def _segments(text: str) -> list[tuple[bool, str]]:
    """Split Markdown into (is_code, text) pieces: fenced blocks and inline code spans are
    literal in CommonMark, everything else is prose that may hold HTML or links."""
    out: list[tuple[bool, str]] = []
    prose: list[str] = []
    code: list[str] = []
    fence = ""
    for line in text.splitlines(keepends=True):
        match = _FENCE.match(line)
        if not fence:
            if match:
                out.append((False, "".join(prose)))
                prose = []
                fence = match.group(1)
                code = [line]
            else:
                prose.append(line)
        else:
            code.append(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                out.append((True, "".join(code)))
                code = []
                fence = ""
    if fence:
        out.append((True, "".join(code)))
    out.append((False, "".join(prose)))
    pieces: list[tuple[bool, str]] = []
    for is_code, chunk in out:
        if is_code or not chunk:
            if chunk:
                pieces.append((True, chunk))
            continue
        last = 0
        for m in _CODE_SPAN.finditer(chunk):
            pieces.append((False, chunk[last : m.start()]))
            pieces.append((True, m.group(0)))
            last = m.end()
        pieces.append((False, chunk[last:]))
    return [(c, t) for c, t in pieces if t]


def _neutralize_prose(text: str) -> str:
    def inline(match: re.Match[str]) -> str:
        bang, label, url, rest = match.group(1), match.group(2), match.group(3), match.group(4)
        if bang:
            return f"[image: {label}]"
        if _safe_url(url):
            return f"[{label}]({url}{rest})"
        return f"{label} (blocked link)"

    def refdef(match: re.Match[str]) -> str:
        if _safe_url(match.group(2)):
            return match.group(0)
        return f"{match.group(1)}#{match.group(3)}"

    def autolink(match: re.Match[str]) -> str:
        if _safe_url(match.group(1)):
            return match.group(0)
        return "(blocked link)"

    out = _INLINE_LINK.sub(inline, text)
    out = _AUTOLINK.sub(autolink, out)
    out = _REF_DEF.sub(refdef, out)
    # Raw HTML and entities become literal text; backslash escapes are plain CommonMark.
    out = out.replace("&", "\\&").replace("<", "\\<").replace(">", "\\>")
    return _BARE_SCRIPT.sub(lambda m: f"{m.group(1)}\u200b{m.group(2)}:", out)


def neutralize_markdown(text: str) -> str:
    """Markdown that renders the text but can run nothing and load nothing.

    * raw HTML and character references are escaped (``<script>`` shows as text);
    * inline links, autolinks and reference definitions whose URL is not
      http(s)/mailto or relative lose their URL ("(blocked link)");
    * images never load: ``![alt](url)`` becomes the text ``[image: alt]``;
    * any remaining ``javascript:`` / ``vbscript:`` / ``data:`` / ``file:`` scheme
      text is broken with a zero-width space so it can never act as a URL.

    Code blocks and code spans are left as they are: Markdown shows them literally.
    """
    return "".join(
        chunk if is_code else _neutralize_prose(chunk) for is_code, chunk in _segments(text)
    )


#: WORD JOINER: invisible and zero-width; put where a pattern Streamlit applies to the
#: rendered text (not to the Markdown source, so backslashes do not stop it) would match.
_JOINER = "\u2060"
# Bare URLs and e-mail addresses (GFM autolink literals), icons and emoji shortcodes
# (``:material/lock:``, ``:smile:``), all found in the already escaped text.
_AUTOLINK_START = re.compile(r"(?i)(https?|ftp|mailto|xmpp|www)(?=\\[:.])")
_SHORTCODE = re.compile(r"(\\:)(?=(?:\\?[\w+\-/])+\\:)")
_EMAIL_AT = re.compile(r"(?<=[\w.+\-])@")


def md_escape(text: str) -> str:
    """``text`` as literal Markdown that renders as exactly that text (one line).

    Every Markdown special character is backslash-escaped (links, images, HTML, emphasis,
    ``:color[...]`` directives, ``$`` math: none of them form), and an invisible word
    joiner keeps bare URLs, e-mail addresses and ``:icon:`` shortcodes from turning into
    links or icons. Whitespace runs become one space. What shows has no backslashes.
    """
    flat = " ".join(text.split())
    out = _MD_SPECIAL.sub(r"\\\1", flat)
    out = _AUTOLINK_START.sub(lambda m: m.group(1) + _JOINER, out)
    out = _SHORTCODE.sub(lambda m: m.group(1) + _JOINER, out)
    return _EMAIL_AT.sub(_JOINER + "@", out)


def md_code(text: str) -> str:
    """``text`` as a Markdown code span (monospace, shown verbatim, one line), whatever
    backticks it holds: use it instead of wrapping :func:`md_escape` in backticks, whose
    backslashes a code span would show."""
    flat = " ".join(text.split())
    if not flat:
        return ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def plot_text(text: str) -> str:
    """``text`` for a Plotly title, label or hover text: its HTML subset (``<a href>``,
    ``<b>``...) escaped, so tags show as text; Plotly turns the entities back into ``<``."""
    return html.escape(text, quote=False)


#: First characters that make a spreadsheet read a cell as a formula, and the quote that
#: marks an escaped cell: the CLI's CSV rule (``compactlens.analysis.corpus.csv_escape``).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def sheet_cell(value: Any) -> Any:
    """A table cell that a spreadsheet cannot read as a formula: text starting with
    ``= + - @``, a tab, a CR or ``'`` gets a leading ``'``, as in the CLI's CSV files;
    numbers and everything else as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def sheet_safe(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with every text cell through :func:`sheet_cell` (for ``st.dataframe``,
    whose toolbar downloads and copies the cells as CSV / TSV)."""
    return [{k: sheet_cell(v) for k, v in row.items()} for row in rows]


def clip(text: str, limit: int) -> tuple[str, bool]:
    """The first ``limit`` characters of ``text`` and whether anything was cut."""
    if limit <= 0 or len(text) <= limit:
        return text, False
    return text[:limit], True
