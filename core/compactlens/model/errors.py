"""The one family of errors compactlens raises: every exception derives from
:class:`CompactlensError`, so ``except CompactlensError`` catches anything the library
raised. Each error also keeps the built-in base callers already catch (``ValueError`` for
bad input and configuration, ``TypeError`` for an argument of the wrong kind,
``RuntimeError`` for a missing resource or a misuse at run time, ``ImportError`` for a
missing optional dependency).

Errors about input name where the bad input is: the source, the location and what is wrong.
"""

from __future__ import annotations


class CompactlensError(Exception):
    """The root of every exception compactlens raises."""


class ConfigError(CompactlensError, ValueError):
    """A configuration, parameter or argument value is invalid: a strategy, trigger, guard,
    profile, limit or other setting, or an argument a call cannot take as it is (a group
    that is no longer kept, a count a tokenizer returned). The message names the setting
    (for example ``strategy.strategies[1].keep_last``) and what is wrong."""


class InputTypeError(CompactlensError, TypeError):
    """An argument is of a kind the library does not accept (for example a message that is
    neither a wire dict nor a :class:`~compactlens.Message`)."""


class UsageError(CompactlensError, RuntimeError):
    """A call that cannot be made in the current state (for example a session used after it
    was closed) or that needs something that is not available."""


class DataError(CompactlensError, ValueError):
    """Data handed back to the library to rebuild a value is malformed: a checkpoint record,
    a canonical message or part dict. The message says which field is wrong."""


class MissingDependencyError(CompactlensError, ImportError):
    """An optional dependency a feature needs is not installed; the message names the
    extra that brings it and the command that installs it (:func:`install_hint`)."""


def install_hint(extra: str) -> str:
    """How to install the ``extra`` of compactlens, as one phrase for an ImportError: the
    commands that work from a clone (the package is not on a registry yet)."""
    command = f"pip install -e '.[{extra}]'"
    if extra == "notebook":
        command = f"make lab (or {command})"
    return f"install the compactlens[{extra}] extra: from your clone of compactlens, {command}"


class TranscriptError(CompactlensError, ValueError):
    """A transcript could not be read.

    ``source`` names the file (or ``<bytes>``, ``<list>``), ``location`` is a path
    such as ``messages[12].content[3].type`` or ``line 7, column 3``, and
    ``message`` says what is wrong in plain words.
    """

    def __init__(self, message: str, *, source: str = "<input>", location: str = "") -> None:
        self.source = source
        self.location = location
        self.message = message
        where = f"{source}: {location}: " if location else f"{source}: "
        super().__init__(where + message)


__all__ = [
    "CompactlensError",
    "ConfigError",
    "DataError",
    "InputTypeError",
    "MissingDependencyError",
    "TranscriptError",
    "UsageError",
    "install_hint",
]
