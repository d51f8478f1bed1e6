"""The lock files `make` installs from pin every requirement of pyproject.toml with a
version its specifier allows (a stale lock would test other versions than it claims)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)")


def _pins(name: str) -> dict[str, set[str]]:
    pins: dict[str, set[str]] = {}
    for line in (REPO / "requirements" / name).read_text(encoding="utf-8").splitlines():
        found = PIN.match(line)
        if found:
            pins.setdefault(canonicalize_name(found[1]), set()).add(found[2])
    return pins


def _requirements(extras: tuple[str, ...] | None) -> list[Requirement]:
    chosen = PROJECT["optional-dependencies"]
    names = tuple(chosen) if extras is None else extras
    texts = list(PROJECT.get("dependencies", [])) + [r for e in names for r in chosen[e]]
    return [Requirement(t) for t in texts]


@pytest.mark.parametrize(
    ("lock", "extras"),
    [("app.lock", ("app", "openai")), ("notebook.lock", ("notebook",)), ("dev.lock", None)],
)
def test_the_lock_pins_every_requirement_within_its_specifier(
    lock: str, extras: tuple[str, ...] | None
) -> None:
    pins = _pins(lock)
    problems = []
    for req in _requirements(extras):
        versions = pins.get(canonicalize_name(req.name))
        if not versions:
            problems.append(f"{req.name} is not in requirements/{lock}")
        elif not any(req.specifier.contains(v, prereleases=True) for v in versions):
            problems.append(f"requirements/{lock} pins {req.name} {versions}, not {req.specifier}")
    assert not problems, "run `make lock`: " + "; ".join(problems)


def test_the_makefile_installs_from_the_locks() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "-r requirements/app.lock" in makefile
    assert "-r requirements/dev.lock" in makefile
    assert "-r requirements/notebook.lock" in makefile
