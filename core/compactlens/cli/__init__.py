"""The ``compactlens`` command line: inspect, compact, convert and report."""

from compactlens.cli.commands import main

__all__ = ["main"]
