"""Without the ``notebook`` extra, the library still imports and works; asking for a
DataFrame or a panel says which extra to install."""

from __future__ import annotations

import subprocess
import sys

BLOCK = """
import sys
class Refuse:
    def __init__(self, names):
        self.names = names
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in self.names:
            raise ModuleNotFoundError(name=name)
sys.meta_path.insert(0, Refuse({names!r}))
"""


def _run(names: tuple[str, ...], body: str) -> list[str]:
    code = BLOCK.format(names=names) + body
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_without_pandas_to_pandas_names_the_extra() -> None:
    lines = _run(
        ("pandas",),
        "from compactlens import MessageIndex\n"
        "from compactlens.model import text_message\n"
        "ix = MessageIndex.build([text_message('user', 'hi')])\n"
        "print(ix.total_groups)\n"
        "print(ix._repr_html_().startswith('<div'))\n"
        "try:\n"
        "    ix.to_pandas()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n",
    )
    assert lines[:2] == ["1", "True"]
    assert "compactlens[notebook]" in lines[2]
    # The commands that work from a clone (the package is on no registry): make lab.
    assert "make lab" in lines[2] and "pip install -e '.[notebook]'" in lines[2]


def test_without_ipywidgets_tune_names_the_extra() -> None:
    lines = _run(
        ("ipywidgets",),
        "import compactlens.notebook as nb\n"
        "from compactlens import TruncationStrategy, tokens_exceed\n"
        "from compactlens.model import text_message\n"
        "try:\n"
        "    nb.tune([text_message('user', 'hi')], TruncationStrategy(tokens_exceed(9)), 9)\n"
        "except ImportError as exc:\n"
        "    print(exc)\n",
    )
    assert len(lines) == 1 and "compactlens[notebook]" in lines[0]
    assert "make lab" in lines[0]
