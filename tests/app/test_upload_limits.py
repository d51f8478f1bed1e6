"""Issue 27, findings 4, 9 and 10: what one upload and one session may cost a shared server.

* Finding 4: a file of many tiny lines (or an Inspect ``.eval`` that inflates to one) is
  refused before it is parsed, naming ``COMPACTLENS_MAX_MESSAGES``; an ``.eval`` member is
  inflated in bounded chunks; a transcript too large for the shared cache is parsed once
  per session, not on every rerun (counted by the cache's own ``misses``).
* Finding 9: the caches count a crafted transcript (its sampled messages tiny, the rest
  huge) within 2x of what tracemalloc sees it take.
* Finding 10: a session holds at most ``COMPACTLENS_SESSION_TRANSCRIPTS`` transcripts and
  ``COMPACTLENS_SESSION_MB`` of their bytes.
"""

from __future__ import annotations

import gc
import io
import json
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from apptest_helpers import coding_agent, go, no_exceptions, plain

from compactlens import TranscriptError
from compactlens_inspector.serving.loader import (
    LIMIT_SETTINGS,
    MAX_MESSAGES_ENV,
    SESSION_MB_ENV,
    SESSION_TRANSCRIPTS_ENV,
    UploadLimits,
    content_hash,
    limits_from_settings,
    parse_transcript,
    upload_limits,
)
from compactlens_inspector.serving.preflight import settings_problems
from compactlens_inspector.serving.shared_cache import SAMPLE, SharedCache
from compactlens_inspector.state import products
from compactlens_inspector.state.products import transcript_bytes


@pytest.fixture(autouse=True)
def _no_limit_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LIMIT_SETTINGS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fresh_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """Shared caches made again from ``COMPACTLENS_CACHE_MB`` (and dropped after the test)."""

    def make(budget_mb: str) -> None:
        monkeypatch.setenv("COMPACTLENS_CACHE_MB", budget_mb)
        products._shared.clear()

    yield make
    products._shared.clear()


def _errors(at: Any) -> str:
    return plain(" ".join(str(e.value) for e in at.error))


def _tiny_lines(count: int) -> bytes:
    return "\n".join('{"role":"user","content":"x"}' for _ in range(count)).encode()


# -- finding 4: messages and parse work per upload ---------------------------------------------


def test_many_tiny_lines_are_refused_before_parsing_naming_the_setting(app, monkeypatch):
    monkeypatch.setenv(MAX_MESSAGES_ENV, "1000")
    at = go(app().run(), "load")
    at.file_uploader(key="load_upload").set_value(
        ("tiny.jsonl", _tiny_lines(20_000), "application/octet-stream")
    ).run()
    no_exceptions(at)
    box = _errors(at)
    assert "tiny.jsonl" in box and "20,000 JSON lines" in box and MAX_MESSAGES_ENV in box
    assert "tiny.jsonl" not in at.selectbox(key="sidebar_source").options


def test_more_messages_than_the_limit_are_refused_naming_the_setting(app, monkeypatch):
    monkeypatch.setenv(MAX_MESSAGES_ENV, "1000")
    at = go(app().run(), "load")
    many = json.dumps([{"role": "user", "content": "x"} for _ in range(1500)]).encode()
    at.file_uploader(key="load_upload").set_value(("many.json", many, "application/json")).run()
    no_exceptions(at)
    box = _errors(at)
    assert "many.json" in box and "1,500 messages" in box and "limit is 1,000" in box
    assert MAX_MESSAGES_ENV in box


def test_the_parser_never_builds_what_the_limit_refuses() -> None:
    """A JSON array of 200,000 tiny objects at a limit of 1,000 messages: refused while
    counting (objects dropped as they are read), never parsed into messages."""
    data = json.dumps([{"role": "user", "content": "x"} for _ in range(200_000)]).encode()
    gc.collect()
    tracemalloc.start()
    try:
        with pytest.raises(TranscriptError, match=f"JSON objects.*{MAX_MESSAGES_ENV}"):
            parse_transcript(data, "many.json", UploadLimits(max_messages=1000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20  # parsed, the 200,000 messages take over 100 MB


def _eval_log(member: bytes, declared: int | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("samples/1_epoch_1.json", member)
    data = buffer.getvalue()
    if declared is None:
        return data
    # Under-declare the member's size in both headers (what a crafted file does).
    real = len(member).to_bytes(4, "little")
    return data.replace(real, declared.to_bytes(4, "little"))


@pytest.mark.parametrize("declared", [None, 1000])
def test_an_eval_member_is_inflated_only_up_to_the_limit(declared: int | None) -> None:
    """A 30 MB member (its true size declared, or 1 KB), at an upload limit of 1 MB:
    refused after inflating about the limit, never the whole member."""
    member = json.dumps({"messages": [{"role": "user", "content": " " * (30 * 2**20)}]}).encode()
    data = _eval_log(member, declared=declared)
    assert len(data) < 100_000
    gc.collect()
    tracemalloc.start()
    try:
        with pytest.raises(TranscriptError) as refused:
            parse_transcript(data, "bomb.eval", UploadLimits(max_upload_bytes=2**20))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if declared is None:
        assert "inflates to more than 1 MB" in str(refused.value)
        assert "COMPACTLENS_MAX_UPLOAD_MB" in str(refused.value)
    else:  # the zip module stops at the declared size: the checksum then fails
        assert "damaged zip archive" in str(refused.value)
    assert peak < 8 * 2**20


def test_an_eval_of_tiny_lines_is_refused_like_the_lines() -> None:
    data = _eval_log(_tiny_lines(50_000))
    assert len(data) < 50_000
    with pytest.raises(TranscriptError, match=f"50,000 JSON lines.*{MAX_MESSAGES_ENV}"):
        parse_transcript(data, "lines.eval", UploadLimits(max_messages=1000))


def test_a_transcript_too_large_for_the_cache_is_parsed_once_per_session(
    app, fresh_caches, monkeypatch
) -> None:
    """At a 1 MB budget the transcripts' share is 0.3 MB and the indexes' 0.1 MB: this
    transcript fits neither, and page after page it is parsed and indexed once."""
    fresh_caches("1")
    at = go(app().run(), "load")
    data = json.dumps({"messages": coding_agent(60)}).encode()
    assert transcript_bytes(parse_transcript(data, "big.json")) > 0.3 * 2**20
    at.file_uploader(key="load_upload").set_value(("big.json", data, "application/json")).run()
    no_exceptions(at)
    assert at.session_state["cl_active"] == content_hash(data)
    stats = products.shared_cache_stats()
    parses, indexes = stats["transcripts"]["misses"], stats["indexes"]["misses"]
    for page in ("transcript", "lab", "load", "transcript", "lab"):
        at = go(at, page)
        no_exceptions(at)
    stats = products.shared_cache_stats()
    assert stats["transcripts"]["misses"] == parses
    assert stats["indexes"]["misses"] == indexes
    assert stats["transcripts"]["entries"] <= 1  # the small sample at most: not big.json


# -- finding 9: the caches measure what they store ----------------------------------------------


def _traced(make: Callable[[], Any]) -> tuple[Any, int]:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        value = make()
        gc.collect()
        return value, tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def _crafted(count: int = 20 * SAMPLE, huge: int = 50_000) -> bytes:
    """Messages where every item the size estimate samples is tiny and the rest huge."""
    sampled = {int(i * count / SAMPLE) for i in range(SAMPLE)}
    messages = [
        {"role": "user", "content": "x" if i in sampled else "y" * huge} for i in range(count)
    ]
    return json.dumps({"messages": messages}).encode()


@pytest.mark.parametrize("wide", [False, True])
def test_a_crafted_transcript_is_counted_within_2x_of_what_it_takes(wide: bool) -> None:
    data = _crafted()
    if wide:  # one emoji in each huge string: 4 bytes per character, 4 times the file
        data = data.replace(b'"yyy', b'"\xf0\x9f\x98\x80yy')
    loaded, real = _traced(lambda: parse_transcript(data, "crafted.json"))
    cache: SharedCache[Any] = SharedCache(max_bytes=10**10, max_entries=4)
    cache.get("crafted", lambda: loaded, transcript_bytes)
    counted = cache.stats().bytes
    assert real / 2 <= counted <= real * 2, (counted, real)


def test_ordinary_transcripts_are_still_counted_near_what_they_take() -> None:
    for data in (
        json.dumps({"messages": coding_agent(160)}).encode(),
        _tiny_lines(5000),
    ):
        loaded, real = _traced(lambda data=data: parse_transcript(data, "t.jsonl"))
        assert real / 2 <= transcript_bytes(loaded) <= real * 3, (transcript_bytes(loaded), real)


# -- finding 10: transcripts and bytes per session ----------------------------------------------


def _upload(at: Any, name: str, data: bytes) -> Any:
    at.file_uploader(key="load_upload").set_value((name, data, "application/json")).run()
    no_exceptions(at)
    return at


def test_a_session_holds_at_most_so_many_transcripts(app, monkeypatch) -> None:
    monkeypatch.setenv(SESSION_TRANSCRIPTS_ENV, "3")
    at = go(app().run(), "load")  # the first sample is loaded: one transcript
    for n in range(2):
        doc = {"messages": [{"role": "user", "content": f"file {n}"}]}
        at = _upload(at, f"f{n}.json", json.dumps(doc).encode())
    assert _errors(at) == ""
    at = _upload(at, "one_more.json", json.dumps({"messages": coding_agent(1)}).encode())
    box = _errors(at)
    assert "one_more.json" in box and "holds 3 transcripts" in box
    assert SESSION_TRANSCRIPTS_ENV in box
    assert "one_more.json" not in at.selectbox(key="sidebar_source").options
    # The same file again is not one more.
    again = json.dumps({"messages": [{"role": "user", "content": "file 1"}]}).encode()
    at = _upload(at, "f1.json", again)
    assert _errors(at) == ""


def test_a_session_holds_at_most_so_many_bytes(app, monkeypatch) -> None:
    monkeypatch.setenv(SESSION_MB_ENV, "1")
    at = go(app().run(), "load")
    half = json.dumps({"messages": coding_agent(190)}).encode()
    assert 0.5 * 2**20 < len(half) < 0.7 * 2**20
    at = _upload(at, "first.json", half)
    assert _errors(at) == ""
    at = _upload(at, "second.json", json.dumps({"messages": coding_agent(191)}).encode())
    box = _errors(at)
    assert "second.json" in box and "limit is 1 MB per session" in box and SESSION_MB_ENV in box


def test_the_limit_settings_are_read_and_checked() -> None:
    assert upload_limits({}) == UploadLimits()
    limits = limits_from_settings(
        {MAX_MESSAGES_ENV: "200_000", SESSION_TRANSCRIPTS_ENV: " 3 ", SESSION_MB_ENV: "64"}
    )
    assert (limits.max_messages, limits.session_transcripts) == (200_000, 3)
    assert limits.session_bytes == 64 * 2**20
    for name in (MAX_MESSAGES_ENV, SESSION_TRANSCRIPTS_ENV, SESSION_MB_ENV):
        for bad in ("0", "-1", "lots", "1.5"):
            with pytest.raises(ValueError, match=name):
                limits_from_settings({name: bad})
            assert any(name in p for p in settings_problems({name: bad}, {}))
            assert any(name in p for p in settings_problems({}, {name: bad}))
            # A server started without the check uses the default for that setting.
            assert upload_limits({name: bad}) == UploadLimits()


def test_every_uploader_states_and_enforces_the_same_limit(app, monkeypatch) -> None:
    """One upload limit, one place: the Load and Runs uploaders both take it (the Runs one
    said Streamlit's "200MB per file" while Load said 50)."""
    monkeypatch.setenv("COMPACTLENS_MAX_UPLOAD_MB", "7")
    at = go(app().run(), "load")
    load = at.file_uploader(key="load_upload")
    at = go(at, "runs")
    runs = at.file_uploader(key="runs_upload")
    for uploader in (load, runs):
        assert uploader.proto.max_upload_size_mb == 7
        assert "Up to 7 MB per file" in uploader.proto.help
