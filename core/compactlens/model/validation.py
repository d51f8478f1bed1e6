"""Shared checks of caller-supplied values: one integer validator for the whole library."""

from __future__ import annotations

from compactlens.model.errors import ConfigError


def check_int(name: str, value: object, *, minimum: int = 1) -> int:
    """``value`` if it is an int (not a bool) of at least ``minimum``, else ``ValueError``.

    The message names ``name``: "n must be a positive integer, got 0" for ``minimum=1``,
    "n must be an integer >= 0, got -1" otherwise.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        wanted = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ConfigError(f"{name} must be {wanted}, got {value!r}")
    return value


__all__ = ["check_int"]
