"""Writing a user's output file atomically: the one way the library replaces a file.

The text goes to a temporary file in the target's folder, is flushed to disk (``fsync``)
and renamed over the target (``os.replace``), so a write that fails part way (a full
disk, a file size limit, an interrupt, a value that cannot be encoded) leaves the target
as it was, even when the output is the input file itself, and removes the temporary
file. A target that existed keeps its permission bits; a new file gets the mode
``open()`` would give it (``0o666`` less the umask). A symbolic link is written through
(its target is replaced, the link stays), and a target that is not a regular file (a
terminal, ``/dev/null``, a pipe) is written directly, as there is nothing to replace.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO, TextIO, cast

#: Prefix and suffix of the temporary files (hidden, and easy to recognise if a crash of
#: the whole machine leaves one behind).
TEMP_PREFIX = "."
TEMP_SUFFIX = ".tmp"


def new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0666 less the process umask (read from
    /proc on Linux, so the umask is never changed, not even for a moment)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):  # pragma: no cover - not Linux
        pass
    current = os.umask(0o022)  # pragma: no cover
    os.umask(current)  # pragma: no cover
    return 0o666 & ~current  # pragma: no cover


def _target(path: str | os.PathLike[str]) -> Path:
    """The file to replace: ``path``, or the file a symbolic link at ``path`` points to."""
    given = Path(path)
    return Path(os.path.realpath(given)) if given.is_symlink() else given


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable (best effort: not every platform opens a folder)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


@contextmanager
def _replacing(
    path: str | os.PathLike[str],
    open_fd: Callable[[int], IO[Any]],
    direct: Callable[[Path], IO[Any]],
) -> Iterator[IO[Any]]:
    target = _target(path)
    try:
        existing = os.stat(target)
    except FileNotFoundError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        with direct(target) as handle:  # a device or a pipe: nothing to replace
            yield handle
        return
    mode = stat.S_IMODE(existing.st_mode) & 0o777 if existing is not None else new_file_mode()
    folder = target.parent
    fd, name = tempfile.mkstemp(
        prefix=TEMP_PREFIX + target.name + ".", suffix=TEMP_SUFFIX, dir=folder
    )
    temporary = Path(name)
    try:
        os.fchmod(fd, mode)  # mkstemp makes 0600
        handle = open_fd(fd)
    except BaseException:
        os.close(fd)
        temporary.unlink(missing_ok=True)
        raise
    try:
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync_directory(folder)


@contextmanager
def atomic_text_file(
    path: str | os.PathLike[str], *, encoding: str = "utf-8", newline: str | None = None
) -> Iterator[TextIO]:
    """A text file object whose content replaces ``path`` when the block ends without an
    error; on an error ``path`` is left untouched and the temporary file removed."""
    with _replacing(
        path,
        lambda fd: os.fdopen(fd, "w", encoding=encoding, newline=newline),
        lambda target: open(target, "w", encoding=encoding, newline=newline),
    ) as handle:
        yield cast(TextIO, handle)


@contextmanager
def atomic_binary_file(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """As :func:`atomic_text_file`, for bytes."""
    with _replacing(
        path,
        lambda fd: os.fdopen(fd, "wb"),
        lambda target: open(target, "wb"),
    ) as handle:
        yield cast(BinaryIO, handle)


def write_atomically(
    path: str | os.PathLike[str], data: str | bytes, *, encoding: str = "utf-8"
) -> None:
    """Replace the file at ``path`` with ``data`` (text is encoded with ``encoding``), all
    or nothing; raises ``OSError`` (the target unchanged) when the write fails."""
    if isinstance(data, str):
        with atomic_text_file(path, encoding=encoding) as text:
            text.write(data)
    else:
        with atomic_binary_file(path) as binary:
            binary.write(data)


__all__ = ["atomic_binary_file", "atomic_text_file", "new_file_mode", "write_atomically"]
