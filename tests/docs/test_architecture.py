"""The package map of docs/design.md holds: layers import downward only, no import cycles,
and the inspector uses only the library's public names."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "core" / "compactlens"
APP = REPO / "app"

#: Lowest first: a package may import itself and the packages before it, never after.
LAYERS = (
    "model",
    "formats",
    "summarizers",
    "engine",
    "transcript",
    "compact",
    "session",
    "analysis",
    "viz",
    "integrations",
    "notebook",
    "cli",
)
#: The library's public modules: the top level and each package's curated __init__.
PUBLIC = ("compactlens", *(f"compactlens.{name}" for name in LAYERS))


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, *, top_level_only: bool = False) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every ``compactlens`` import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    out: list[tuple[int, str, list[str]]] = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] == "compactlens":
                out.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "compactlens":
                    out.append((node.lineno, alias.name, []))
    return out


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


def _core_files() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def test_every_core_module_sits_in_a_layer() -> None:
    loose = [
        p.relative_to(CORE).as_posix()
        for p in _core_files()
        if _layer(f"compactlens.{_module_name(p, CORE)}") is None
        and p.name not in ("__init__.py", "__main__.py")
    ]
    assert loose == [], "modules outside the package map"


def test_packages_import_downward_only() -> None:
    upward: list[str] = []
    for path in _core_files():
        here = _layer(f"compactlens.{_module_name(path, CORE)}")
        if here is None:
            continue  # the top-level API and ``python -m compactlens`` may import anything
        for line, module, _names in _imports(path):
            there = _layer(module)
            if module == "compactlens" or (there is not None and there > here):
                upward.append(f"{path.relative_to(CORE)}:{line} imports {module}")
    assert upward == []


def test_no_import_cycles_between_modules() -> None:
    graph: dict[str, set[str]] = {}
    for path in _core_files():
        name = f"compactlens.{_module_name(path, CORE)}".rstrip(".")
        graph[name] = {m for _line, m, _n in _imports(path, top_level_only=True)}
    graph = {k: {m for m in v if m in graph and m != k} for k, v in graph.items()}
    # A package's __init__ re-exporting its own modules is not a cycle of ideas; drop the
    # edges from a package to its own children so only real back-and-forth remains.
    graph = {k: {m for m in v if not m.startswith(k + ".")} for k, v in graph.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == []


@pytest.mark.parametrize("path", sorted(APP.rglob("*.py")), ids=lambda p: p.name)
def test_the_app_uses_only_public_names(path: Path) -> None:
    bad: list[str] = []
    for line, module, names in _imports(path):
        if module not in PUBLIC:
            bad.append(f"line {line}: {module} is not a public module")
            continue
        exported = set(getattr(importlib.import_module(module), "__all__", ()))
        for name in names:
            if name.startswith("_") or name not in exported:
                bad.append(f"line {line}: {module}.{name} is not public")
    assert bad == []


# -- the inspector: app/compactlens_inspector in rooms (docs/design.md, "The inspector") ------

INSPECTOR = APP / "compactlens_inspector"
#: The inspector's packages, lowest first: a package may import itself and the packages
#: before it, never one after it.
APP_LAYERS = ("style", "serving", "lab", "views", "exports", "state", "components", "pages")
#: The packages that compute: plain functions and values, no Streamlit (the Streamlit
#: layer is ``state``, ``components``, ``pages`` and the entry script).
STREAMLIT_FREE = ("style", "serving", "lab", "views", "exports")
#: Streamlit imported inside a function of a Streamlit-free package, and why.
STREAMLIT_INSIDE_A_FUNCTION = {
    "serving/preflight.py": "reads Streamlit's secrets files as the app does, before it starts",
}
MAX_TOP_LEVEL_MODULES = 10
MAX_APP_MODULE_LINES = 600


def _app_files() -> list[Path]:
    return sorted(INSPECTOR.rglob("*.py"))


def _app_package(path: Path) -> str | None:
    parts = path.relative_to(INSPECTOR).parts
    return parts[0] if len(parts) > 1 else None


def _inspector_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every ``compactlens_inspector`` import in a file, in functions
    too; ``from compactlens_inspector.x import y`` names ``x.y`` when that is a module."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] == "compactlens_inspector":
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    where = APP / sub.replace(".", "/")
                    found = where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()
                    out.append((node.lineno, sub if found else node.module))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "compactlens_inspector":
                    out.append((node.lineno, alias.name))
    return out


def _imports_streamlit(path: Path, *, top_level_only: bool) -> list[int]:
    """The lines of a file that import Streamlit (at the top only, or anywhere)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    lines: list[int] = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        if any(name.split(".")[0] == "streamlit" for name in names):
            lines.append(node.lineno)
    return lines


def test_the_inspector_top_level_holds_at_most_ten_modules() -> None:
    top = sorted(p.name for p in INSPECTOR.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_every_inspector_module_sits_in_a_package() -> None:
    loose = [
        p.relative_to(INSPECTOR).as_posix()
        for p in _app_files()
        if _app_package(p) not in APP_LAYERS and p != INSPECTOR / "__init__.py"
    ]
    assert loose == [], "inspector modules outside the package map"


@pytest.mark.parametrize("path", sorted(APP.rglob("*.py")), ids=lambda p: p.name)
def test_every_app_module_fits_in_600_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_APP_MODULE_LINES, f"{path.relative_to(APP)}: {lines} lines"


def test_inspector_packages_import_downward_only() -> None:
    upward: list[str] = []
    for path in _app_files():
        here = _app_package(path)
        if here is None:
            continue  # the package's own __init__
        for line, module in _inspector_imports(path):
            parts = module.split(".")
            there = parts[1] if len(parts) > 1 else None
            if there not in APP_LAYERS or APP_LAYERS.index(there) > APP_LAYERS.index(here):
                upward.append(f"{path.relative_to(INSPECTOR)}:{line} imports {module}")
    assert upward == []


def test_no_import_cycles_between_inspector_modules() -> None:
    graph: dict[str, set[str]] = {}
    for path in _app_files():
        name = f"compactlens_inspector.{_module_name(path, INSPECTOR)}".rstrip(".")
        graph[name] = {m for _line, m in _inspector_imports(path)}
    # Edges to known modules only; a package's __init__ re-exporting its children is not
    # a cycle of ideas.
    graph = {
        k: {m for m in v if m in graph and m != k and not m.startswith(k + ".")}
        for k, v in graph.items()
    }
    cycles: list[list[str]] = []
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        seen[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if seen.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in seen:
                visit(nxt)
        stack.pop()
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node)
    assert cycles == []


def test_the_computing_packages_never_import_streamlit() -> None:
    found: list[str] = []
    for path in _app_files():
        if _app_package(path) not in STREAMLIT_FREE:
            continue
        rel = path.relative_to(INSPECTOR).as_posix()
        top_only = rel in STREAMLIT_INSIDE_A_FUNCTION
        found += [f"{rel}:{line}" for line in _imports_streamlit(path, top_level_only=top_only)]
    assert found == []


def test_importing_the_computing_packages_loads_no_streamlit() -> None:
    modules = [
        f"compactlens_inspector.{_module_name(p, INSPECTOR)}"
        for p in _app_files()
        if _app_package(p) in STREAMLIT_FREE
    ]
    code = f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
    code += "print(sorted(m for m in sys.modules if m.split('.')[0] == 'streamlit'))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
