"""Reading a transcript from a path, bytes, text or a parsed JSON value.

The input is decoded (UTF-8, a byte-order mark, the first sample of an Inspect ``.eval``
zip, inflated in bounded chunks up to the size limit), parsed as JSON or JSON lines,
checked against the limits (size, nesting depth, string length, numbers Python can
carry), its container found, its format detected (unless the caller names it) and its
recorded compactions read. Bad input raises
:class:`~compactlens.model.errors.TranscriptError` naming the source, a location and the
problem; what is left out with a note instead (:attr:`Transcript.warnings`) is the last
line of a JSON-lines file cut off mid-line, and content a format's reader found but could
not load (its ``Split.notes``).
"""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import math
import os
import re
import sys
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any

from compactlens.formats import claude_code as claude_code_format
from compactlens.formats import get_format
from compactlens.formats.base import ConversionWarning
from compactlens.formats.detect import detect
from compactlens.model.errors import TranscriptError
from compactlens.model.gc_pause import gc_paused
from compactlens.model.recorded import RecordedCompaction
from compactlens.transcript.base import Transcript
from compactlens.transcript.container import (
    PathKey,
    _container,
    _fail,
    _located_note,
    _relocated,
    _system_message,
)
from compactlens.transcript.recorded import _recorded, _subagent_compaction

DEFAULT_MAX_BYTES = 200 * 1024 * 1024
DEFAULT_MAX_DEPTH = 200
DEFAULT_MAX_STRING = 32 * 1024 * 1024


def _line_col(data: bytes | str, offset: int) -> tuple[int, int]:
    newline: Any = b"\n" if isinstance(data, bytes) else "\n"
    line = data.count(newline, 0, offset) + 1
    start = data.rfind(newline, 0, offset) + 1
    return line, offset - start + 1


#: The compression methods an ``.eval`` member may use: the ones zipfile inflates in
#: bounded steps (bzip2 and LZMA inflate a whole compressed chunk at once).
_ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
_ZIP_CHUNK = 1024 * 1024


def _member(archive: zipfile.ZipFile, name: str, source: str, max_bytes: int) -> bytes:
    """The bytes of member ``name``, inflated one bounded chunk at a time: reading stops
    once they pass ``max_bytes``, whatever size the member declares (a zip bomb declares
    a small one)."""
    info = archive.getinfo(name)
    if info.compress_type not in _ZIP_METHODS:
        raise _fail(
            f"{name} is compressed with zip method {info.compress_type}; only stored and "
            "deflate members are read (Inspect writes deflate)",
            source,
        )
    if info.flag_bits & 0x1:
        raise _fail(f"{name} is encrypted", source)
    if info.file_size > max_bytes:
        raise _fail(
            f"{name} is {info.file_size} bytes, over the limit of {max_bytes} bytes "
            "(pass max_bytes= to raise it)",
            source,
        )
    # zipfile stops at the declared size (and then fails its CRC check): let it read on,
    # so that a member declaring too little meets the limit here, and compare the sizes
    # afterwards.
    bounded = copy.copy(info)
    bounded.file_size = sys.maxsize
    data = bytearray()
    with archive.open(bounded) as member:
        while chunk := member.read(_ZIP_CHUNK):
            data += chunk
            if len(data) > max_bytes:
                raise _fail(
                    f"{name} inflates to more than {max_bytes} bytes (it declares "
                    f"{info.file_size}), over the limit of {max_bytes} bytes "
                    "(pass max_bytes= to raise it)",
                    source,
                )
    if len(data) != info.file_size:
        raise _fail(
            f"a damaged zip archive: {name} declares {info.file_size} bytes but holds {len(data)}",
            source,
        )
    return bytes(data)


def _eval_sample(data: bytes, source: str, max_bytes: int) -> bytes:
    """The first sample of an Inspect ``.eval`` log (a zip of ``samples/<id>_epoch_<n>.json``)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = sorted(
                n for n in archive.namelist() if n.startswith("samples/") and n.endswith(".json")
            )
            if not names:
                raise _fail(
                    "a zip archive with no samples/<id>_epoch_<n>.json (an Inspect .eval log "
                    "holds its samples there)",
                    source,
                )
            return _member(archive, names[0], source, max_bytes)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, zlib.error) as exc:
        raise _fail(f"a damaged zip archive: {exc}", source) from None


def _decode(data: bytes, source: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    if not data.strip():
        raise _fail("the input is empty", source)
    if data[:4] == b"PK\x03\x04":
        data = _eval_sample(data, source, max_bytes)
    if data[:2] == b"\x1f\x8b":
        raise _fail("the input is gzip-compressed data; decompress it first", source)
    for bom, codec in (
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe\x00\x00", "utf-32"),
        (b"\x00\x00\xfe\xff", "utf-32"),
        (b"\xff\xfe", "utf-16"),
        (b"\xfe\xff", "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError as exc:
                raise _fail(f"not valid {codec} text: {exc.reason}", source) from None
    nul = data.find(b"\x00", 0, 65536)
    if nul >= 0:
        line, col = _line_col(data, nul)
        raise _fail(
            f"binary data, not a text transcript (NUL byte at offset {nul})",
            source,
            f"line {line}, column {col}",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and b"\n" in data[: exc.start]:
            # Lines cut off inside a character (a log being written): the cut line is
            # found, and left out, when the lines are read; its bytes stay countable.
            tail = data[exc.start :].decode("utf-8", "surrogateescape")
            return data[: exc.start].decode("utf-8") + tail
        line, col = _line_col(data, exc.start)
        bad = data[exc.start : exc.start + 1].hex()
        raise _fail(
            f"not UTF-8 text: invalid byte 0x{bad} ({exc.reason})",
            source,
            f"line {line}, column {col}",
        ) from None


def _as_path(src: Any) -> Path | None:
    """``src`` as a file path: a path object, or a short one-line string that is not JSON
    text; None for any other input (bytes, JSON text, a parsed value)."""
    if (
        isinstance(src, str)
        and src.lstrip()[:1] not in ("{", "[")
        and "\n" not in src
        and len(src) < 4096
    ):
        return Path(src)
    return Path(src) if isinstance(src, os.PathLike) else None


def _read(src: Any, source: str | None, max_bytes: int) -> tuple[str, str | None, Any]:
    """(source name, text or None, parsed value when ``src`` is already JSON)."""
    path = _as_path(src)
    if path is not None:
        name = source or str(path)
        try:
            size = path.stat().st_size
            if path.is_dir():
                raise _fail("is a directory, not a transcript file", name)
            if size > max_bytes:
                raise _fail(
                    f"the file is {size} bytes, over the limit of {max_bytes} bytes "
                    "(pass max_bytes= to raise it)",
                    name,
                )
            data = path.read_bytes()
        except FileNotFoundError:
            raise _fail("no such file", name) from None
        except PermissionError:
            raise _fail("permission denied", name) from None
        except OSError as exc:
            raise _fail(f"cannot read the file: {exc.strerror or exc}", name) from None
        if len(data) > max_bytes:
            raise _fail(f"the file is over the limit of {max_bytes} bytes", name)
        return name, _decode(data, name, max_bytes), None
    if isinstance(src, bytes | bytearray | memoryview):
        data = bytes(src)
        name = source or "<bytes>"
        if len(data) > max_bytes:
            raise _fail(
                f"the input is {len(data)} bytes, over the limit of {max_bytes} bytes", name
            )
        return name, _decode(data, name, max_bytes), None
    if isinstance(src, str):
        name = source or "<text>"
        if len(src) > max_bytes or (
            len(src) * 4 > max_bytes and len(src.encode("utf-8", "surrogatepass")) > max_bytes
        ):
            raise _fail(f"the input is over the limit of {max_bytes} bytes", name)
        if not src.strip():
            raise _fail("the input is empty", name)
        return name, src.removeprefix("\ufeff"), None
    if isinstance(src, list | tuple):
        return source or "<list>", None, list(src)
    if isinstance(src, Mapping):
        return source or "<object>", None, src
    raise _fail(
        f"cannot read a {type(src).__name__}; pass a path, bytes, text, a list or a dict",
        source or "<input>",
    )


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _nesting_error(text: str, source: str, max_depth: int, offset: int = 0) -> TranscriptError:
    depth = 0
    for match in _TOKEN.finditer(text):
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > max_depth:
                line, col = _line_col(text, match.start())
                return _fail(
                    f"JSON nested deeper than {max_depth} levels",
                    source,
                    f"line {line + offset}, column {col}",
                )
        elif char in "]}":
            depth -= 1
    return _fail("JSON nested too deeply to read", source)


class _NonFinite(ValueError):
    """A ``NaN`` / ``Infinity`` literal: Python reads it, strict JSON parsers do not."""


def _reject_constant(name: str) -> Any:
    raise _NonFinite(name)


#: The literals a located error may point at: a JSON string (skipped, so that text
#: inside one is never pointed at), ``NaN`` / ``Infinity``, and numbers.
_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"|-?Infinity|NaN|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')


def _literal_where(text: str, wanted: Callable[[str], bool], line_offset: int) -> str:
    """``line L, column C`` of the first literal outside strings that ``wanted`` accepts."""
    for match in _LITERAL.finditer(text):
        literal = match.group()
        if literal[0] != '"' and wanted(literal):
            line, col = _line_col(text, match.start())
            return f"line {line + line_offset}, column {col}"
    return ""


def _long_integer_error(text: str, source: str, line_offset: int) -> TranscriptError:
    """The error for an integer literal too long to read: Python converts at most
    ``sys.get_int_max_str_digits()`` digits (a defence against slow conversions)."""
    limit = sys.get_int_max_str_digits()
    digits = 0

    def too_long(literal: str) -> bool:
        nonlocal digits
        digits = len(literal.lstrip("-"))
        return digits > limit and literal.lstrip("-").isdigit()

    where = _literal_where(text, too_long, line_offset)
    shown = f"a number of {digits} digits" if where else "a number"
    return _fail(
        f"{shown}, over the limit of {limit} digits Python reads as an integer "
        "(write it as a string)",
        source,
        where,
    )


def _loads(text: str, source: str, max_depth: int, line_offset: int = 0) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise _nesting_error(text, source, max_depth, line_offset) from None
    except json.JSONDecodeError:
        raise
    except _NonFinite as exc:
        # Refused rather than carried: written back, it would break every strict reader.
        name = str(exc)
        raise _fail(
            f"{name} is not valid JSON (strict JSON has no NaN or Infinity; use null or a string)",
            source,
            _literal_where(text, lambda literal: literal == name, line_offset),
        ) from None
    except ValueError:  # the only other one: an integer with more digits than Python reads
        raise _long_integer_error(text, source, line_offset) from None


def _cut_line(n: int, line: str, complete: int) -> ConversionWarning:
    """The note on a JSON-lines file whose last line was cut off (a log still being
    written, or copied while it was)."""
    size = len(line.encode("utf-8", "surrogateescape"))
    return ConversionWarning(
        "dropped",
        f"line {n}, cut off mid-line: its {size} bytes end the file without a newline and "
        f"are not valid JSON; the {complete} complete line{'' if complete == 1 else 's'} "
        "before it were loaded",
    )


def _json_lines(
    lines: Sequence[str], source: str, max_depth: int
) -> tuple[list[Any], tuple[int, ...], tuple[ConversionWarning, ...]]:
    """The objects of the lines and their line numbers. A last line that ends the text
    without a newline and is not valid JSON was cut off: it is left out, with a note;
    any other bad line is an error naming it."""
    values: list[Any] = []
    numbers: list[int] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = _loads(line, source, max_depth, n - 1)
        except json.JSONDecodeError as exc:
            if n == len(lines) and values:
                return values, tuple(numbers), (_cut_line(n, line, len(values)),)
            raise _fail(
                f"invalid JSON on this line of a JSON-lines file: {exc.msg}",
                source,
                f"line {n}, column {exc.colno}",
            ) from None
        if not isinstance(value, dict):
            raise _fail(
                f"each line of a JSON-lines file must be an object, got {type(value).__name__}",
                source,
                f"line {n}",
            )
        values.append(value)
        numbers.append(n)
    return values, tuple(numbers), ()


def _parse_text(
    text: str, source: str, max_depth: int
) -> tuple[Any, tuple[int, ...] | None, tuple[ConversionWarning, ...]]:
    """The JSON value, or the JSON-lines values and their line numbers; and the notes on
    what was left out (a cut-off last line)."""
    try:
        return _loads(text, source, max_depth), None, ()
    except json.JSONDecodeError as exc:
        whole_error = exc
    lines = text.split("\n")
    filled = [n for n, line in enumerate(lines, 1) if line.strip()]
    jsonl = whole_error.msg == "Extra data"
    if not jsonl and len(filled) > 1:
        try:
            first = _loads(lines[filled[0] - 1], source, max_depth, filled[0] - 1)
            jsonl = isinstance(first, dict)
        except json.JSONDecodeError:
            jsonl = False
    if not jsonl:
        raise _fail(
            f"invalid JSON: {whole_error.msg}",
            source,
            f"line {whole_error.lineno}, column {whole_error.colno}",
        ) from None
    return _json_lines(lines, source, max_depth)


def _path_text(link: Any) -> str:
    keys: list[PathKey] = []
    while link is not None:
        key, link = link
        keys.append(key)
    out = ""
    for key in reversed(keys):
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "(top level)"


_SCALARS = (int, float, bool, type(None))


def _check_limits(
    value: Any, source: str, max_depth: int, max_string: int, prefix: str = ""
) -> None:
    """Reject nesting deeper than ``max_depth`` and strings longer than ``max_string``.

    Also rejects values that are not JSON (sets, objects, non-string keys) when the
    caller passes an already parsed value. One pass, no recursion.
    """
    if isinstance(value, str) and len(value) > max_string:
        raise _fail(f"a string over the limit of {max_string} characters", source, prefix)
    if not isinstance(value, Mapping | list | tuple):
        return
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]
    while stack:
        node, depth, link = stack.pop()
        if depth > max_depth:
            raise _fail(
                f"JSON nested deeper than {max_depth} levels", source, prefix + _path_text(link)
            )
        is_map = isinstance(node, Mapping)
        children: Any = node.items() if is_map else enumerate(node)
        for key, child in children:
            kind = type(child)
            if kind is str:
                if len(child) > max_string:
                    raise _fail(
                        f"a string of {len(child)} characters, over the limit of "
                        f"{max_string} (pass max_string= to raise it)",
                        source,
                        prefix + _path_text((key, link)),
                    )
            elif kind is dict or kind is list:
                stack.append((child, depth + 1, (key, link)))
            elif kind is float:
                if not -math.inf < child < math.inf:  # 1e400 reads as inf; NaN compares false
                    raise _fail(
                        f"the number {child} is not finite (a literal such as 1e400 is "
                        "too large for a float; strict JSON has no NaN or Infinity)",
                        source,
                        prefix + _path_text((key, link)),
                    )
            elif kind in _SCALARS:
                pass
            elif isinstance(child, str):
                if len(child) > max_string:
                    raise _fail(
                        f"a string over the limit of {max_string} characters",
                        source,
                        prefix + _path_text((key, link)),
                    )
            elif isinstance(child, Mapping | list | tuple):
                stack.append((child, depth + 1, (key, link)))
            elif not isinstance(child, int | float):
                raise _fail(
                    f"not a JSON value: {type(child).__name__}",
                    source,
                    prefix + _path_text((key, link)),
                )
            if is_map and type(key) is not str:
                raise _fail(
                    f"object keys must be strings, got {type(key).__name__}",
                    source,
                    prefix + _path_text(link),
                )


def _compactions_of(path: Path) -> tuple[RecordedCompaction, ...]:
    """The compactions the transcript file at ``path`` records."""
    return load_transcript(path).compactions


def _in_log_dir(log_dir: str | os.PathLike[str] | None, name: str) -> Path | None:
    """``log_dir`` joined with the last part of the label ``name`` (None without a
    ``log_dir``): the label chooses no folder."""
    return Path(log_dir) / PurePath(name).name if log_dir is not None else None


@gc_paused()
def load_transcript(
    src: str | os.PathLike[str] | bytes | Sequence[Any] | Mapping[str, Any],
    format: str | None = None,
    *,
    source: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_string: int = DEFAULT_MAX_STRING,
    log_dir: str | os.PathLike[str] | None = None,
) -> Transcript:
    """Read a transcript from a path, bytes, JSON text or a parsed JSON value.

    ``format`` forces a wire format (see ``compactlens.formats.FORMATS``);
    otherwise it is detected and :attr:`Transcript.detection` says which one was
    chosen and why. ``source`` names the input in errors: it is display text, never
    opened. Only a path, or for other input an explicit ``log_dir`` (the folder the log
    was read from, chosen by a local caller, never by uploaded input), lets a Claude Code
    compaction sub-agent log (``agent-acompact-*``) read the parent session file next to
    it for the history it replaced: input given in memory never causes a file read. Raises
    :class:`~compactlens.model.errors.TranscriptError` (a ``ValueError``) on any bad
    input: invalid JSON or JSON lines (with line and column), an unknown role or
    part type (with its path), wrong types, a file (or an ``.eval`` sample, once
    inflated) over ``max_bytes``, binary or non-UTF-8 data, nesting deeper than
    ``max_depth``, strings longer than ``max_string`` characters, an integer of more
    digits than Python reads or a float literal too large to be finite. A JSON-lines
    file whose last line was cut off mid-line (no newline, not valid JSON) loads its
    complete lines; :attr:`Transcript.warnings` names the cut line and its size.
    """
    fmt = get_format(format) if format is not None else None
    path = _as_path(src)
    name, text, value = _read(src if path is None else path, source, max_bytes)
    notes: tuple[ConversionWarning, ...] = ()
    if text is not None:
        doc, line_numbers, notes = _parse_text(text, name, max_depth)
    else:
        doc, line_numbers = value, None
    if line_numbers is None:
        _check_limits(doc, name, max_depth, max_string)
    else:
        for n, line_value in zip(line_numbers, doc, strict=True):
            _check_limits(line_value, name, max_depth, max_string, f"line {n}: ")
    container, items, hints = _container(doc, line_numbers, name)
    try:
        if fmt is not None:
            split = fmt.split_items(items, name)
            reason = f"{fmt.name}: chosen by the caller"
        else:
            detection, split = detect(items, name, hints)
            fmt = get_format(detection.format)
            reason = detection.reason
        system = _system_message(fmt, container, name)
        recorded = _recorded(fmt, items, split.messages, container, name, int(system is not None))
    except TranscriptError as exc:
        raise _relocated(exc, container) from None
    except Exception as exc:  # a bug in a format module must not escape as a traceback
        label = fmt.name if fmt is not None else "the detected format"
        raise _fail(
            f"unexpected {type(exc).__name__} while reading as {label}: {exc}", name
        ) from exc
    messages = split.messages if system is None else [system, *split.messages]
    if fmt.name == claude_code_format.NAME and not recorded:
        log_path = path if path is not None else _in_log_dir(log_dir, name)
        log_name = log_path.name if log_path is not None else name
        recorded = _subagent_compaction(messages, log_name, log_path, _compactions_of)
    if container.kind == "jsonl" or split.passthrough:
        container = dataclasses.replace(container, passthrough=tuple(split.passthrough))
    return Transcript(
        messages=tuple(messages),
        format=fmt.name,
        source=name,
        container=container,
        detection=reason,
        warnings=(*notes, *(_located_note(n, container) for n in split.notes)),
        compactions=recorded,
    )
