"""List the functions of a source tree longer than a limit (issue 24: a function fits on a
screen, 120 lines at most, except the index scan in core/compactlens/engine/index.py).

A function's length is ``end_lineno - lineno + 1`` of its ``def`` (decorators not
counted, nested functions counted in their parent and on their own). Exit code 1 when
one is found outside the allowed list, so the script can gate a check.

    .venv/bin/python scripts/long_functions.py                  # core/, 120 lines
    .venv/bin/python scripts/long_functions.py app --limit 80
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: (path relative to the repository, function name) allowed over the limit.
ALLOWED = frozenset({("core/compactlens/engine/index.py", "_scan")})


def long_functions(root: Path, limit: int) -> list[tuple[Path, int, str, int]]:
    """(file, line, name, length) of every function in ``root`` over ``limit`` lines."""
    found: list[tuple[Path, int, str, int]] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append((path, node.lineno, node.name, length))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=str(REPO / "core"), help="default: core/")
    parser.add_argument("--limit", type=int, default=120, help="lines (default: 120)")
    args = parser.parse_args(argv)
    failed = False
    for path, line, name, length in long_functions(Path(args.root), args.limit):
        where = path.resolve()
        rel = where.relative_to(REPO).as_posix() if where.is_relative_to(REPO) else str(path)
        allowed = (rel, name) in ALLOWED
        failed = failed or not allowed
        print(f"{rel}:{line} {name} {length} lines" + (" (allowed)" if allowed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
