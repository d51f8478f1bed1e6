"""``python -m compactlens.cli``: the same as the ``compactlens`` command."""

from __future__ import annotations

from compactlens.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
