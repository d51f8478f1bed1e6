"""The inspector's shared caches: bounded by estimated bytes and by entries, least
recently used first out, one computation per key, estimates near the real allocation."""

from __future__ import annotations

import gc
import json
import threading
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from apptest_helpers import coding_agent
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens_inspector.lab.config import SummarizerSettings, nice_budget, preset
from compactlens_inspector.lab.runs import build_index, make_summarizer, run_config
from compactlens_inspector.serving.loader import parse_transcript
from compactlens_inspector.serving.shared_cache import (
    DEFAULT_CACHE_MB,
    CacheView,
    SharedCache,
    SharedCaches,
    approx_bytes,
    cache_budget_mb,
)

# A sequence of (key, size) stores, keys from a small set so some repeat.
_STORES = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 400)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(stores=_STORES, max_bytes=st.integers(0, 1000), max_entries=st.integers(1, 8))
def test_a_cache_never_holds_more_than_its_bounds(
    stores: list[tuple[int, int]], max_bytes: int, max_entries: int
) -> None:
    cache: SharedCache[int] = SharedCache(max_bytes, max_entries)
    sizes: dict[int, int] = {}
    for key, size in stores:
        value = cache.get(key, lambda size=size: size, size=lambda v: v)
        sizes[key] = value  # the cached value, or the new one (kept if it fits)
        stats = cache.stats()
        assert stats.bytes <= max_bytes and stats.entries <= max_entries
        # The newest store is kept whenever it fits the budget on its own.
        if size <= max_bytes:
            assert cache.get(key, lambda: -1, size=lambda v: 0) == value
    held = cache.stats()
    kept = [k for k in range(13) if cache.get(k, lambda: -1, size=lambda v: 10**9) != -1]
    assert held.bytes == sum(sizes[k] for k in kept)


def test_least_recently_used_goes_first() -> None:
    cache: SharedCache[str] = SharedCache(max_bytes=300, max_entries=10)
    for key in "abc":
        cache.get(key, lambda key=key: key, size=lambda v: 100)
    cache.get("a", lambda: "new a", size=lambda v: 100)  # a hit: "a" is now the newest
    cache.get("d", lambda: "d", size=lambda v: 100)  # over 300 bytes: the oldest, "b", goes
    made: list[str] = []

    def make(key: str) -> Callable[[], str]:
        return lambda: made.append(key) or key

    for key in "acd":
        cache.get(key, make(key), size=lambda v: 100)
    assert made == []
    cache.get("b", make("b"), size=lambda v: 100)
    assert made == ["b"]


def test_an_entry_over_the_budget_is_returned_not_kept() -> None:
    cache: SharedCache[str] = SharedCache(max_bytes=50, max_entries=4)
    cache.get("small", lambda: "s", size=lambda v: 40)
    assert cache.get("big", lambda: "B", size=lambda v: 51) == "B"
    assert cache.stats().entries == 1 and cache.stats().bytes == 40
    assert cache.get("big", lambda: "again", size=lambda v: 51) == "again"


def test_a_failed_computation_is_not_cached() -> None:
    cache: SharedCache[int] = SharedCache(max_bytes=100, max_entries=4)

    def fail() -> int:
        raise RuntimeError("limit reached")

    with pytest.raises(RuntimeError, match="limit reached"):
        cache.get("k", fail)
    assert cache.get("k", lambda: 7, size=lambda v: 1) == 7


def test_one_computation_per_key_across_threads() -> None:
    cache: SharedCache[int] = SharedCache(max_bytes=10**6, max_entries=4)
    calls: list[int] = []
    started = threading.Event()
    release = threading.Event()

    def slow() -> int:
        calls.append(1)
        started.set()
        release.wait(timeout=30)
        return 42

    results: list[int] = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get("k", slow, size=lambda v: 8)))
        for _ in range(6)
    ]
    threads[0].start()
    assert started.wait(timeout=30)
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join(timeout=30)
    assert results == [42] * 6 and calls == [1]


def test_approx_bytes_skips_shared_objects_and_counts_the_rest() -> None:
    shared = ["x" * 10_000 for _ in range(100)]
    own = ["y" * 10_000 for _ in range(100)]
    mixed = [*shared, *own]
    alone = approx_bytes(mixed)
    without_shared = approx_bytes(mixed, shared=shared)
    assert 1_500_000 < alone < 2_700_000  # 200 strings of 10 kB, sampled
    assert 700_000 < without_shared < 1_400_000


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


@pytest.mark.slow
def test_estimates_are_near_what_python_allocated() -> None:
    """Transcript, index and runs of a 640-message transcript: the estimate is within a
    factor of 3 of the memory tracemalloc saw allocated (and kept) for each."""
    data = json.dumps({"messages": coding_agent(160)}).encode()
    loaded, loaded_bytes = _traced(lambda: parse_transcript(data, "t.json"))
    index, index_bytes = _traced(lambda: build_index(loaded.messages, "estimate", "compactlens"))
    pairs = [
        (approx_bytes(loaded), loaded_bytes),
        (approx_bytes(index, shared=(loaded, *loaded.messages)), index_bytes),
    ]
    for name in ("reference", "truncation", "tool_collapse"):
        config = preset(name, nice_budget(index.total_tokens))
        summarizer = make_summarizer(SummarizerSettings())
        outcome, run_bytes = _traced(lambda c=config, s=summarizer: run_config(index, c, s))
        shared = (index, *index.messages, *index.lines.messages())  # as the app does
        pairs.append((approx_bytes(outcome, shared=shared), run_bytes))
    for estimate, real in pairs:
        assert real / 3 <= estimate <= real * 3, (estimate, real)


def test_a_value_that_grows_is_measured_again_and_the_budget_holds() -> None:
    cache: SharedCache[list[str]] = SharedCache(max_bytes=1000, max_entries=10)

    def size(v: list[str]) -> int:
        return 100 + 100 * len(v)

    def get() -> list[str]:
        return cache.get("grows", list, size, stamp=len)

    grows = get()
    cache.get("other", lambda: ["o"], size=lambda v: 300)
    assert cache.stats().bytes == 400
    grows.extend("abc")
    assert cache.stats().bytes == 400  # not measured until it is asked for again
    assert get() is grows and cache.stats().bytes == 700
    grows.extend("defg")  # 800 bytes: with "other" over 1,000, the least recent goes
    assert get() is grows
    assert cache.stats().bytes == 800 and cache.peek("other") is None
    # Without a stamp nothing is measured again.
    grows.append("h")
    assert cache.get("grows", list, size) is grows and cache.stats().bytes == 800


def test_an_index_that_keeps_its_collapsed_lines_is_measured_again() -> None:
    """The app's index cache: plans add collapsed lines to the index (``ix.lines``), and
    the next lookup counts them against the budget."""
    data = json.dumps({"messages": coding_agent(160)}).encode()
    loaded = parse_transcript(data, "t.json")
    cache: SharedCache[Any] = SharedCache(max_bytes=10**9, max_entries=4)

    def size(ix: Any) -> int:
        return approx_bytes(ix, shared=(loaded, ix.tokenizer, *loaded.messages))

    def get() -> Any:
        return cache.get(
            "ix",
            lambda: build_index(loaded.messages, "estimate", "compactlens"),
            size,
            stamp=lambda ix: ix.lines.chars,
        )

    index = get()
    before = cache.stats().bytes
    config = preset("reference", nice_budget(index.total_tokens))
    run_config(index, config, make_summarizer(SummarizerSettings()))
    assert index.lines.chars > 0  # the reference pipeline collapsed tool-call groups
    assert get() is index
    assert cache.stats().bytes > before + index.lines.chars // 2


def test_the_budget_setting() -> None:
    assert cache_budget_mb({}) == DEFAULT_CACHE_MB
    assert cache_budget_mb({"COMPACTLENS_CACHE_MB": " 64 "}) == 64
    for bad in ("0", "-5", "lots", "1.5"):
        with pytest.raises(ValueError, match="COMPACTLENS_CACHE_MB"):
            cache_budget_mb({"COMPACTLENS_CACHE_MB": bad})
    caches = SharedCaches.sized(64)
    total = sum(s["budget"] for s in caches.stats().values())
    assert 0.99 * 64 * 2**20 <= total <= 64 * 2**20


def test_views_share_one_budget_and_act_as_mappings() -> None:
    cache: SharedCache[str] = SharedCache(max_bytes=10**6, max_entries=3)
    a, b = CacheView(cache, "a"), CacheView(cache, "b")
    a["x"] = "ax"
    b["x"] = "bx"
    assert a["x"] == "ax" and b.get("x") == "bx" and "y" not in a
    assert sorted(a) == ["x"] and len(b) == 1
    a["y"], a["z"] = "ay", "az"  # a fourth entry in all: the oldest ("a", "x") goes
    assert "x" not in a and b["x"] == "bx" and len(a) == 2
    del a["y"]
    assert list(a) == ["z"]
    with pytest.raises(KeyError):
        del a["y"]


def test_pages_under_apptest_freeze_nothing(app: Callable[..., Any]) -> None:
    """The collector is frozen only in a real server (Streamlit's Runtime); a test
    process keeps every object collectable."""
    before, thresholds = gc.get_freeze_count(), gc.get_threshold()
    at = app(sample="coding_agent").run()
    assert not at.exception
    assert gc.get_freeze_count() == before == 0
    assert gc.get_threshold() == thresholds
