"""An ``.eval`` zip bomb (issue 27, finding 5): a member that under-declares its size is
refused at the size limit (``max_bytes``) after inflating no more than that, one bounded
chunk at a time; members compressed with methods that inflate without bounds are refused."""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import zipfile
import zlib

import pytest

from compactlens import load_transcript
from compactlens.model import TranscriptError

MIB = 1024 * 1024


def _zeros_deflated(mib: int) -> bytes:
    """A raw deflate stream of ``mib`` MiB of zeros (about 1 KB per MiB), built from one
    compressed MiB repeated (a full flush makes each block stand alone)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(MIB)) + c.flush(zlib.Z_FULL_FLUSH)
    return block * mib + c.flush()


def _zip_one_member(name: str, compressed: bytes, declared: int, crc: int | None = None) -> bytes:
    """A deflate zip archive of one member whose headers declare ``declared`` bytes (the
    local header and the central directory agree, so only the data tells the truth) and
    ``crc`` (by default that of ``declared`` zeros)."""
    raw = name.encode()
    method = zipfile.ZIP_DEFLATED
    crc = zlib.crc32(bytes(declared)) if crc is None else crc
    local = struct.pack(
        "<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0, crc, len(compressed), declared,
        len(raw), 0,
    )  # fmt: skip
    central = struct.pack(
        "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, method, 0, 0, crc, len(compressed),
        declared, len(raw), 0, 0, 0, 0, 0, 0,
    )  # fmt: skip
    body = local + raw + compressed
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(raw), len(body), 0)
    return body + central + raw + end


def test_the_zip_builder_makes_an_archive_zipfile_reads() -> None:
    text = bytes(100)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = _zip_one_member("samples/1_epoch_1.json", c.compress(text) + c.flush(), len(text))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.read("samples/1_epoch_1.json") == text


def test_an_eval_member_that_under_declares_its_size_stops_at_the_limit() -> None:
    bomb = _zip_one_member("samples/1_epoch_1.json", _zeros_deflated(1024), declared=1000)
    assert len(bomb) < 2 * MIB  # 1 GiB inflated
    limit = 16 * MIB
    tracemalloc.start()
    try:
        with pytest.raises(TranscriptError) as info:
            load_transcript(bomb, source="bomb.eval", max_bytes=limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * MIB, f"{peak / MIB:.0f} MiB allocated"
    message = info.value.message
    assert info.value.source == "bomb.eval"
    assert f"over the limit of {limit} bytes" in message and "max_bytes=" in message
    assert "samples/1_epoch_1.json inflates to more than" in message


def test_the_default_limit_holds_the_same_way() -> None:
    bomb = _zip_one_member("samples/1_epoch_1.json", _zeros_deflated(300), declared=10)
    with pytest.raises(TranscriptError, match="inflates to more than 209715200 bytes"):
        load_transcript(bomb)


def test_a_member_that_over_declares_is_damaged_and_one_that_declares_truly_loads() -> None:
    text = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = c.compress(text) + c.flush()
    crc = zlib.crc32(text)
    lying = _zip_one_member("samples/1_epoch_1.json", packed, len(text) + 5, crc)
    with pytest.raises(
        TranscriptError, match=f"declares {len(text) + 5} bytes but holds {len(text)}$"
    ):
        load_transcript(lying)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("samples/1_epoch_1.json", text)
    assert load_transcript(buffer.getvalue()).messages[0].text == "hi"


def test_bzip2_and_lzma_members_are_refused_by_name() -> None:
    # They inflate a whole compressed chunk at once (a few KB of bzip2 can be gigabytes).
    for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", method) as archive:
            archive.writestr("samples/1_epoch_1.json", '{"messages": []}')
        with pytest.raises(TranscriptError, match=f"zip method {method}; only stored and"):
            load_transcript(buffer.getvalue())
