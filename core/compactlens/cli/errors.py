"""The command line's name, exit codes and errors: a :class:`CliError` is a usage or
input error, printed as one line (with the library's keyword hints as flags), exit code 2."""

from __future__ import annotations

from compactlens.model.errors import CompactlensError

PROG = "compactlens"

EXIT_OK = 0
EXIT_CANNOT_FIT = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it

#: How the library's hints about its keyword limits read on the command line.
_LIMIT_HINTS = {"pass max_bytes=": "pass --max-bytes", "pass max_string=": "pass --max-string"}


class CliError(CompactlensError):
    """A usage or input error: printed as one line, exit code 2."""


def cli_error_text(exc: Exception) -> str:
    """The one-line error text, with the library's keyword hints as CLI flags."""
    text = str(exc)
    for library, flag in _LIMIT_HINTS.items():
        text = text.replace(library, flag)
    return text
