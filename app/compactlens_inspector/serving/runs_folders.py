"""Which folders of recordings the Runs page may open on the server.

Opening a folder by its path reads the server's disk, so it is allowed only when the
operator turns it on (``COMPACTLENS_RUNS_FOLDERS=on``) *and* the app listens on loopback
only (127.0.0.1, ::1, localhost): a local user looking at their own agent's runs.
``make demo`` sets it; ``make serve`` (a shared server) does not. The bundled sample
folder is always allowed (it is ours), and uploading recordings (several ``.jsonl`` files
or a ``.zip``) always works. No Streamlit here: the page passes the server address.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from compactlens_inspector.serving.loader import REPO_ROOT, samples_dir

RUNS_FOLDERS_ENV = "COMPACTLENS_RUNS_FOLDERS"
LOOPBACK_NAMES = ("localhost",)


@dataclass(frozen=True, slots=True)
class FolderAccess:
    """Whether folders may be opened by path, and why (shown on the page)."""

    allowed: bool
    reason: str


def is_loopback(address: str | None) -> bool:
    """Whether ``address`` (``server.address``) listens on this machine only; an empty
    address listens on every interface."""
    if not address:
        return False
    if address.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def folder_access(address: str | None, env: Mapping[str, str] | None = None) -> FolderAccess:
    """May this server open folders by path (see the module)?"""
    env = os.environ if env is None else env
    setting = env.get(RUNS_FOLDERS_ENV, "").strip().lower()
    if setting != "on":
        return FolderAccess(
            False,
            f"Opening a folder on the server is off ({RUNS_FOLDERS_ENV} is not 'on'); "
            "upload the recordings instead (several .jsonl files or a .zip).",
        )
    if not is_loopback(address):
        return FolderAccess(
            False,
            f"{RUNS_FOLDERS_ENV} is on, but this server listens on {address or 'every address'}"
            ", not only on this machine; upload the recordings instead.",
        )
    return FolderAccess(True, "This server runs on this machine: open a folder by its path.")


def sample_runs_dir() -> Path:
    """The bundled sample folder of recordings: ``recordings`` in the samples folder, or
    the repository's ``sample_transcripts/recordings`` when that one has none."""
    chosen = samples_dir() / "recordings"
    return chosen if chosen.is_dir() else REPO_ROOT / "sample_transcripts" / "recordings"


def resolve_folder(text: str) -> Path:
    """The folder ``text`` names (``~`` expanded); a ValueError says what is wrong."""
    cleaned = text.strip()
    if not cleaned:
        raise ValueError("type the path of a folder of recordings")
    path = Path(cleaned).expanduser()
    if not path.exists():
        raise ValueError(f"{cleaned}: no such folder")
    if not path.is_dir():
        raise ValueError(f"{cleaned}: a file, not a folder (open its folder, or upload it)")
    return path.resolve()


__all__ = [
    "RUNS_FOLDERS_ENV",
    "FolderAccess",
    "folder_access",
    "is_loopback",
    "resolve_folder",
    "sample_runs_dir",
]
