"""The operator's settings are checked before a shared server starts (``make serve``):
each setting the app cannot read is named and the check exits 2; good or absent
settings pass. The check runs as the real module in a subprocess, in a directory of its
own (Streamlit reads ``.streamlit/secrets.toml`` from the working directory)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compactlens_inspector.serving.hosting import ENV_ALLOWED, SETTINGS
from compactlens_inspector.serving.loader import (
    DEFAULT_MAX_UPLOAD_MB,
    MAX_UPLOAD_ENV,
    upload_limit_mb,
)
from compactlens_inspector.serving.preflight import settings_problems
from compactlens_inspector.serving.shared_cache import CACHE_MB_SETTING

_OURS = (*SETTINGS, MAX_UPLOAD_ENV, CACHE_MB_SETTING)


def _preflight(cwd: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _OURS and k != "OPENAI_API_KEY"}
    env.update(settings)
    return subprocess.run(
        [sys.executable, "-m", "compactlens_inspector.serving.preflight"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_no_settings_and_good_settings_pass(tmp_path: Path) -> None:
    done = _preflight(tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    good = {
        ENV_ALLOWED: "https://api.openai.com/v1, http://127.0.0.1:8000/v1",
        MAX_UPLOAD_ENV: "12.5",
        CACHE_MB_SETTING: "256",
    }
    done = _preflight(tmp_path, **good)
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.slow
def test_every_unreadable_setting_is_named_and_the_server_does_not_start(
    tmp_path: Path,
) -> None:
    done = _preflight(
        tmp_path,
        COMPACTLENS_SUMMARY_RPM="0",
        **{MAX_UPLOAD_ENV: "-1", CACHE_MB_SETTING: "2G"},
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    for name, value in (
        ("COMPACTLENS_SUMMARY_RPM", "'0'"),
        (MAX_UPLOAD_ENV, "'-1'"),
        (CACHE_MB_SETTING, "'2G'"),
    ):
        assert any(name in line and value in line for line in lines), (name, lines)
    assert "not starting" in lines[-1]
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_secrets_are_read_as_the_server_reads_them(tmp_path: Path) -> None:
    secrets = tmp_path / ".streamlit" / "secrets.toml"
    secrets.parent.mkdir()
    secrets.write_text(f'{ENV_ALLOWED} = ["https://ok.example/v1", "ftp://files.example"]\n')
    done = _preflight(tmp_path)
    assert done.returncode == 2
    assert ENV_ALLOWED in done.stderr and "ftp://files.example" in done.stderr
    # A list is not copied into the environment: a variable of the same name wins.
    done = _preflight(tmp_path, **{ENV_ALLOWED: "https://api.openai.com/v1"})
    assert (done.returncode, done.stderr) == (0, "")
    # A top-level string is: Streamlit replaces the variable with it when it loads the
    # secrets (as a server does at start), so the file's value is the one checked.
    secrets.write_text(f'{CACHE_MB_SETTING} = "2G"\n', encoding="utf-8")
    done = _preflight(tmp_path, **{CACHE_MB_SETTING: "256"})
    assert done.returncode == 2 and "'2G'" in done.stderr


@pytest.mark.slow
def test_a_secrets_file_that_cannot_be_parsed_is_a_problem(tmp_path: Path) -> None:
    secrets = tmp_path / ".streamlit" / "secrets.toml"
    secrets.parent.mkdir()
    secrets.write_text(f"{ENV_ALLOWED} = [\n", encoding="utf-8")
    done = _preflight(tmp_path)
    assert done.returncode == 2
    assert "secrets" in done.stderr and str(secrets) in done.stderr
    assert "Traceback" not in done.stderr


def test_the_upload_limit_setting() -> None:
    assert upload_limit_mb({}) == DEFAULT_MAX_UPLOAD_MB
    assert upload_limit_mb({MAX_UPLOAD_ENV: " 0.5 "}) == 0.5
    for bad in ("0", "-1", "lots", "nan", "inf", "5MB"):
        with pytest.raises(ValueError, match=MAX_UPLOAD_ENV):
            upload_limit_mb({MAX_UPLOAD_ENV: bad})
    assert settings_problems({MAX_UPLOAD_ENV: "lots"}, {}) == [
        f"{MAX_UPLOAD_ENV} must be a number of MB above 0, not 'lots'"
    ]
    assert settings_problems({}, {}) == []
