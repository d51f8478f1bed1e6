"""Output files are replaced atomically (issue 27, finding 12): a write that fails part way
leaves the target as it was, even when the output is the input, and leaves no temporary
file. The fault is real: a subprocess runs under a file size limit (``RLIMIT_FSIZE``), so
its write fails with ``EFBIG`` after the first bytes."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from compactlens import dump_transcript, load_transcript
from compactlens.model.files import atomic_text_file, write_atomically

REPO = Path(__file__).resolve().parents[2]
CODING = REPO / "sample_transcripts" / "coding_agent.json"  # 44 KB
#: Small enough that every output below fails part way through.
FILE_LIMIT = 8 * 1024


def _limited(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _run_limited(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python args...`` in ``cwd`` under a file size limit (Python ignores SIGXFSZ, so
    the write fails with EFBIG instead of killing the process)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _limited(FILE_LIMIT),
        check=False,
    )


LIBRARY_DUMP = (
    "from compactlens import load_transcript, dump_transcript\n"
    "t = load_transcript('in.json')\n"
    "dump_transcript(t, 'in.json', format='anthropic')\n"
)
LIBRARY_CONVERT = (
    "from compactlens.transcript import convert_file\n"
    "convert_file('in.json', 'anthropic', out='in.json')\n"
)


@pytest.mark.parametrize(
    "args",
    [
        [
            "-m",
            "compactlens",
            "compact",
            "in.json",
            "--strategy",
            "truncation",
            "--param",
            "trigger=always",
            "-o",
            "in.json",
        ],
        ["-m", "compactlens", "convert", "in.json", "--to", "anthropic", "-o", "in.json"],
        ["-c", LIBRARY_DUMP],
        ["-c", LIBRARY_CONVERT],
    ],
    ids=["cli-compact", "cli-convert", "dump_transcript", "convert_file"],
)
def test_a_failed_write_over_the_input_leaves_it_whole(tmp_path: Path, args: list[str]) -> None:
    original = CODING.read_bytes()
    (tmp_path / "in.json").write_bytes(original)
    done = _run_limited(args, tmp_path)
    assert done.returncode != 0
    if args[0] == "-m":  # the command line: one line naming the file and the failure
        assert done.returncode == 2
        assert "Traceback" not in done.stderr
        assert "in.json: cannot write output: File too large" in done.stderr
    else:
        assert "File too large" in done.stderr
    assert (tmp_path / "in.json").read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.json"]  # no temporary left
    json.loads(original)


def test_the_same_commands_without_a_limit_replace_the_input(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(CODING.read_bytes())
    path.chmod(0o640)
    command = ["convert", "in.json", "--to", "anthropic", "-o", "in.json"]
    subprocess.run(
        [sys.executable, "-m", "compactlens", *command],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    assert load_transcript(path).format == "anthropic"
    assert path.stat().st_mode & 0o777 == 0o640  # the target keeps its permissions
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.json"]


def test_an_error_inside_the_block_keeps_the_target(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("before\n")
    with pytest.raises(UnicodeEncodeError), atomic_text_file(target, encoding="ascii") as f:
        f.write("a" * 100_000)
        f.write("\u00e9")  # cannot be encoded: the write fails part way
        f.flush()
    assert target.read_text() == "before\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_new_file_follows_the_umask_and_a_link_is_written_through(tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        write_atomically(tmp_path / "new.json", "{}\n")
    finally:
        os.umask(previous)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o640
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomically(link, b"new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_device_is_written_directly(tmp_path: Path) -> None:
    write_atomically(os.devnull, "nothing\n")  # no temporary file in /dev, no rename
    assert Path(os.devnull).exists() and not Path(os.devnull).is_file()


def test_dump_transcript_writes_through_the_helper(tmp_path: Path) -> None:
    transcript = load_transcript(CODING)
    path = tmp_path / "out.json"
    text = dump_transcript(transcript, path)
    assert path.read_text(encoding="utf-8") == text
