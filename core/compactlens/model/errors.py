"""Errors that name where bad input is: the source, the location and what is wrong."""

from __future__ import annotations


class TranscriptError(ValueError):
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
