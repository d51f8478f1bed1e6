"""One error family: compactlens raises only members of :class:`CompactlensError` (each
keeping the built-in base callers already catch), checked statically over core/ and by
provoking a representative error from each package."""

from __future__ import annotations

import ast
import builtins
import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import compactlens
from compactlens import (
    CheckpointCorruptError,
    CompactionCancelled,
    CompactlensError,
    ConfigError,
    DataError,
    EncodingUnavailableError,
    InputTypeError,
    MissingDependencyError,
    TranscriptError,
    UsageError,
)

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "core" / "compactlens"

BUILTIN_EXCEPTIONS = frozenset(
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type)
    and issubclass(getattr(builtins, name), BaseException)
)

#: Built-in exceptions core/ may raise anywhere, with the reason.
ALLOWED_ANYWHERE = {
    "SystemExit": "how a command line entry point hands back its exit status; not an error",
}

#: (file under core/compactlens, built-in) -> why that file may raise that built-in.
ALLOWED = {
    ("analysis/corpus_rows.py", "ValueError"): (
        "_coerce's signal that a cell of a resumed row cannot take its column's type; "
        "read_rows catches it and skips the row (only complete, valid rows count as done)"
    ),
    ("analysis/corpus_rows.py", "TypeError"): (
        "_coerce's signal for a text cell holding another kind, caught like the ValueError"
    ),
    ("analysis/corpus.py", "FileNotFoundError"): (
        "a report directory that does not exist: the OS's own error kind, as open() raises it"
    ),
    ("engine/index.py", "TypeError"): (
        "an import-time self-check that the index's dataclasses still match their builders; "
        "it fails the import for a developer and never reaches a caller at run time"
    ),
    ("engine/wire_index.py", "AttributeError"): (
        "__getattr__ of a lazily filled object: AttributeError is the protocol getattr and "
        "hasattr rely on"
    ),
    ("viz/__init__.py", "AttributeError"): (
        "the module's __getattr__ (PEP 562): AttributeError is the protocol for a missing name"
    ),
    ("model/messages.py", "KeyError"): (
        "__getitem__ of an empty mapping: KeyError is the Mapping protocol"
    ),
    ("session/checkpoints.py", "OSError"): (
        "a checkpoint that cannot be written re-raises the OSError with its errno and the "
        "path and key added; disk and permission failures stay OSError, as documented"
    ),
}

#: Exception classes defined in core/ outside the family, with the reason.
ALLOWED_CLASSES = {
    "CompactlensError": "the root of the family itself",
    "Terminated": (
        "cli/report.py's SIGTERM signal, a BaseException like KeyboardInterrupt so that no "
        "except Exception swallows it"
    ),
    "_NonFinite": "an internal signal raised and caught inside transcript reading",
}


def _raised_builtins(path: Path) -> list[tuple[int, str]]:
    """(line, name) of every ``raise <built-in exception>`` (called or not) in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in BUILTIN_EXCEPTIONS:
                found.append((node.lineno, exc.id))
    return found


def _core_raises() -> list[tuple[str, int, str]]:
    return [
        (path.relative_to(CORE).as_posix(), line, name)
        for path in sorted(CORE.rglob("*.py"))
        for line, name in _raised_builtins(path)
    ]


def test_core_raises_no_bare_builtin_exception() -> None:
    bad = [
        f"{rel}:{line}: raise {name}"
        for rel, line, name in _core_raises()
        if name not in ALLOWED_ANYWHERE and (rel, name) not in ALLOWED
    ]
    assert bad == [], "raise a member of compactlens.model.errors instead"


def test_every_allow_list_entry_is_still_needed() -> None:
    raises = _core_raises()
    used = {(rel, name) for rel, _line, name in raises}
    assert sorted(set(ALLOWED) - used) == []
    assert all(reason.strip() for reason in [*ALLOWED.values(), *ALLOWED_ANYWHERE.values()])


def test_every_exception_class_in_core_is_in_the_family() -> None:
    outside: list[str] = []
    for path in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef) or node.name in ALLOWED_CLASSES:
                continue
            bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
            if bases & BUILTIN_EXCEPTIONS and not bases - BUILTIN_EXCEPTIONS:
                outside.append(f"{path.relative_to(CORE)}: class {node.name}")
    assert outside == [], "derive from CompactlensError (and the built-in it keeps)"


@pytest.mark.parametrize(
    ("member", "builtin"),
    [
        (ConfigError, ValueError),
        (DataError, ValueError),
        (TranscriptError, ValueError),
        (InputTypeError, TypeError),
        (UsageError, RuntimeError),
        (MissingDependencyError, ImportError),
        (EncodingUnavailableError, RuntimeError),
        (CheckpointCorruptError, ValueError),
        (CompactionCancelled, Exception),
    ],
)
def test_each_member_keeps_its_builtin(member: type[Exception], builtin: type) -> None:
    assert issubclass(member, CompactlensError)
    assert issubclass(member, builtin)
    assert member.__name__ in compactlens.__all__


# --------------------------------------------------------------------------- provoked


def _bad_config() -> None:
    compactlens.strategy_from_config({"type": "no-such-strategy"})


def _bad_stage_param() -> None:
    compactlens.strategy_from_config({"type": "sliding_window", "keep_last_turns": -1})


def _bad_trigger() -> None:
    compactlens.Trigger.from_dict({"op": "exceed", "metric": "furlongs", "n": 3})


def _bad_transcript() -> None:
    compactlens.load_transcript(b"{not json")


def _bad_message_kind() -> None:
    from compactlens.formats import from_caller

    from_caller("not a list of messages")


def _bad_guards() -> None:
    from compactlens.engine import Guards

    Guards.from_dict({"pins": "all"})


def _unknown_encoding() -> None:
    compactlens.TiktokenTokenizer("no-such-encoding")


def _missing_encoding() -> None:
    from compactlens.model import tokens

    spec = tokens.ENCODINGS["cl100k_base"]
    missing = dataclasses.replace(spec, files=(("no_such_package_xyz", "x.tiktoken"),))
    tokens.ENCODINGS["cl100k_base"] = missing
    try:
        tokens.load_offline_ranks("cl100k_base")
    finally:
        tokens.ENCODINGS["cl100k_base"] = spec


def _session_used_out_of_order() -> None:
    from compactlens.summarizers import ExtractiveSummarizer

    session = compactlens.CompactionSession(
        target_tokens=100, summarizer=ExtractiveSummarizer(), triggers=[]
    )
    session.record_usage(10)


def _bad_checkpoint() -> None:
    from compactlens.session import Checkpoint

    Checkpoint.from_json({"version": -1})


def _bad_message_dict() -> None:
    from compactlens.model import message_from_dict

    message_from_dict({"role": "narrator", "content": []})


def _bad_price() -> None:
    from compactlens.analysis import ModelPrices

    ModelPrices.from_dict({"input": 1.0, "cached_input": 1.0, "surcharge": 2.0})


PROVOKED: dict[str, tuple[Callable[[], Any], type[Exception]]] = {
    "engine: unknown strategy type": (_bad_config, ConfigError),
    "engine: bad stage parameter": (_bad_stage_param, ConfigError),
    "engine: bad trigger": (_bad_trigger, ConfigError),
    "engine: bad guards": (_bad_guards, ConfigError),
    "transcript: unreadable bytes": (_bad_transcript, TranscriptError),
    "formats: not a list of messages": (_bad_message_kind, InputTypeError),
    "model: unknown encoding": (_unknown_encoding, ConfigError),
    "model: missing encoding": (_missing_encoding, EncodingUnavailableError),
    "model: bad message dict": (_bad_message_dict, DataError),
    "session: record_usage before prepare": (_session_used_out_of_order, UsageError),
    "session: malformed checkpoint": (_bad_checkpoint, DataError),
    "analysis: unknown price key": (_bad_price, ConfigError),
}


@pytest.mark.parametrize("case", sorted(PROVOKED))
def test_compactlens_error_catches_each_package(case: str) -> None:
    provoke, member = PROVOKED[case]
    with pytest.raises(CompactlensError) as caught:
        provoke()
    assert isinstance(caught.value, member)


def test_the_guide_lists_every_member() -> None:
    guide = (REPO / "docs" / "guide.md").read_text(encoding="utf-8")
    section = guide.split("## 10. Errors", 1)[1]
    rows = dict(re.findall(r"^\| `(\w+)` \| `(\w+)` \|", section, re.M))
    members = {
        name: obj
        for name in compactlens.__all__
        if isinstance(obj := getattr(compactlens, name), type)
        and issubclass(obj, CompactlensError)
        and obj is not CompactlensError
    }
    assert sorted(rows) == sorted(members)
    for name, builtin in rows.items():
        assert issubclass(members[name], getattr(builtins, builtin)), name
