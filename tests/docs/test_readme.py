"""The README stays true: its make commands exist, its Python example runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def _readme(repo_root: Path) -> str:
    return (repo_root / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_the_two_make_commands(repo_root: Path) -> None:
    first_block = re.search(r"```bash\n(.*?)```", _readme(repo_root), re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert [c for c in commands if c] == ["make demo", "make test"]
    makefile = (repo_root / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo:", makefile, re.M)
    assert re.search(r"^test:", makefile, re.M)
    ci = (repo_root / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in ci


def test_every_make_command_in_the_readme_is_a_makefile_target(repo_root: Path) -> None:
    blocks = re.findall(r"```bash\n(.*?)```", _readme(repo_root), re.S)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
    targets = {c.split()[1] for c in commands if c.startswith("make ")}
    assert {"demo", "test", "lab"} <= targets
    makefile = (repo_root / "Makefile").read_text(encoding="utf-8")
    for target in targets:
        assert re.search(rf"^{target}:", makefile, re.M), f"make {target} has no target"
    # make lab opens JupyterLab on the examples, on this machine only.
    lab = re.search(r"^lab:.*?(?=^\S|\Z)", makefile, re.M | re.S)
    assert lab is not None
    assert "jupyter lab" in lab.group(0) and "--ServerApp.ip=127.0.0.1" in lab.group(0)
    assert "--ServerApp.root_dir=examples" in lab.group(0)


def test_readme_python_example_runs(repo_root: Path, tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", _readme(repo_root), re.S)
    assert blocks, "the README has a Python example"
    script = tmp_path / "example.py"
    script.write_text(blocks[0], encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0].split()
    assert first[0] == "compacted"
    assert int(first[1]) > int(first[3])
