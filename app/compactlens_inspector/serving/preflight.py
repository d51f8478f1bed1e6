"""Check the operator's settings before a shared server starts (``make serve`` runs it).

The app itself never stops on a setting it cannot read: it locks the server's key away
from every endpoint (hosting settings) or uses the default (upload, message and session
limits, cache budget) and says so. That keeps a running server safe, but an operator who typed
``COMPACTLENS_CACHE_MB=2G`` would only find out from a log line. This check reads the
same settings the same way (environment first, then Streamlit secrets where the app
reads them too) and refuses to start the server, naming each setting it cannot read.

Usage: ``python -m compactlens_inspector.serving.preflight`` (exit 0: fine, 2: a setting is
wrong; each problem on its own line of stderr). No Streamlit beyond reading its secrets.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from compactlens_inspector.serving.hosting import SETTINGS, policy_from_settings
from compactlens_inspector.serving.loader import (
    LIMIT_SETTINGS,
    MAX_UPLOAD_ENV,
    limits_from_settings,
    upload_limit_mb,
)
from compactlens_inspector.serving.shared_cache import CACHE_MB_SETTING, cache_budget_mb

#: Every setting read here: the hosting policy's, the upload and session limits, the caches'.
ALL_SETTINGS = (*SETTINGS, *LIMIT_SETTINGS, CACHE_MB_SETTING)


def settings_problems(env: Mapping[str, str], secrets: Mapping[str, Any]) -> list[str]:
    """Every operator setting in ``env`` / ``secrets`` the app cannot read, one line each
    (the environment first, then the secrets, as Streamlit copies them at start)."""
    merged: dict[str, Any] = {
        name: env.get(name) or secrets.get(name)
        for name in ALL_SETTINGS
        if env.get(name) or secrets.get(name) is not None
    }
    limits: tuple[Callable[[], object], ...] = tuple(
        partial(limits_from_settings, {name: merged.get(name)})
        for name in LIMIT_SETTINGS
        if name != MAX_UPLOAD_ENV
    )
    checks: tuple[Callable[[], object], ...] = (
        lambda: policy_from_settings(env, secrets),
        lambda: upload_limit_mb({MAX_UPLOAD_ENV: str(merged.get(MAX_UPLOAD_ENV) or "")}),
        *limits,
        lambda: cache_budget_mb(merged),
    )
    problems = []
    for check in checks:
        try:
            check()
        except ValueError as exc:
            problems.append(str(exc))
    return problems


def streamlit_secrets() -> tuple[dict[str, Any], str]:
    """The operator's settings in Streamlit's secrets files, and why they cannot be read."""
    import streamlit as st

    try:
        return {name: st.secrets[name] for name in ALL_SETTINGS if name in st.secrets}, ""
    except Exception as exc:
        if getattr(exc, "error_id", None) == "no-secrets-found":  # no secrets file: fine
            return {}, ""
        return {}, f"the Streamlit secrets cannot be read: {exc}"  # e.g. TOML it cannot parse


def main() -> int:
    secrets, problem = streamlit_secrets()
    problems = ([problem] if problem else []) + settings_problems(os.environ, secrets)
    for line in problems:
        print(f"compactlens: {line}", file=sys.stderr)
    if problems:
        print("compactlens: not starting; see docs/deploy.md (Settings)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
