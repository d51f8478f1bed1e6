"""Process-wide caches bounded by bytes as well as by entries (no Streamlit here).

The inspector shares parsed transcripts, indexes, runs and analyses between every
session of a server, keyed by content. Bounding them by entries alone does not bound
memory: a run of a 3,000-message transcript takes about 1.5 MB, one of 50,000 messages
some 25 MB, so 256 runs could be 40 MB or 6 GB. Each cache here has a byte budget; an
entry's size is estimated when it is stored (:func:`approx_bytes`), and the least
recently used entries are dropped until the cache fits. One computation per key runs at
a time, so eight people opening the same sample parse it once. A value larger than its
cache's whole share is not kept there; a session that passes its own
:class:`SessionCopies` keeps it there instead (one transcript's values at a time, counted),
so a large transcript is not parsed and indexed again on every rerun.

The budgets come from ``COMPACTLENS_CACHE_MB`` (default 512, split between the caches
as :data:`SHARES` says); see ``docs/deploy.md``.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, TypeVar

V = TypeVar("V")

#: The environment variable (or Streamlit secret) with the shared caches' budget in MB.
CACHE_MB_SETTING = "COMPACTLENS_CACHE_MB"
DEFAULT_CACHE_MB = 512
#: Each cache's share of the budget, and its entry bound (kept from before the budgets).
SHARES: Mapping[str, tuple[float, int]] = {
    "transcripts": (0.3, 12),
    "indexes": (0.1, 24),
    "runs": (0.35, 256),
    "analyses": (0.15, 64),
    "summaries": (0.1, 100_000),
}
#: Items measured in a long sequence or mapping (the rest is scaled from them).
SAMPLE = 24

_LEAVES = (str, bytes, bytearray, int, float, complex, bool, type(None), range)
_SKIP = (type, ModuleType, threading.Lock().__class__)


def approx_bytes(value: object, *, shared: Iterable[object] = ()) -> int:
    """Estimated bytes of ``value`` and what it references, not counting ``shared`` objects
    (and what they reference) that live elsewhere, such as the transcript's messages a
    run keeps.

    ``sys.getsizeof`` over the object graph; a list, tuple, set or dict of more than
    :data:`SAMPLE` items is measured on evenly spaced items and scaled, so the cost stays
    small (a few ms) at any size. Classes, modules and functions are not counted.
    """
    seen: set[int] = {id(o) for o in shared}
    return _size(value, seen)


def _size(value: object, seen: set[int]) -> int:
    if id(value) in seen or isinstance(value, _SKIP) or callable(value):
        return 0
    seen.add(id(value))
    own = sys.getsizeof(value, 64)
    if isinstance(value, _LEAVES):
        return own
    if isinstance(value, dict):
        items: list[Any] = list(value.items())
        return own + _many([x for kv in items for x in kv], seen, 2 * len(items))
    if isinstance(value, (list, tuple, set, frozenset)):
        return own + _many(list(value), seen, len(value))
    return own + _many(_fields(value), seen, 0)


def _many(items: list[Any], seen: set[int], count: int) -> int:
    """The items' sizes, measured on a sample when there are many."""
    if len(items) <= SAMPLE:
        return sum(_size(x, seen) for x in items)
    step = len(items) / SAMPLE
    picked = [items[int(i * step)] for i in range(SAMPLE)]
    measured = sum(_size(x, seen) for x in picked)
    return int(measured * max(count, len(items)) / SAMPLE)


def _fields(value: object) -> list[Any]:
    out: list[Any] = []
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict):
        out.extend(attrs.values())
    for cls in type(value).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if isinstance(name, str) and hasattr(value, name):
                out.append(getattr(value, name))
    return out


class CacheView(MutableMapping[str, V]):
    """One namespace of a :class:`SharedCache` as a mapping (keys ``(name, key)``), so
    several mappings (one summary cache per summarizer) share one byte budget."""

    def __init__(self, cache: SharedCache[V], name: str) -> None:
        self._cache = cache
        self._name = name

    def __getitem__(self, key: str) -> V:
        found = self._cache.peek((self._name, key))
        if found is None:
            raise KeyError(key)
        return found

    def __setitem__(self, key: str, value: V) -> None:
        self._cache.put((self._name, key), value)

    def __delitem__(self, key: str) -> None:
        if self._cache.peek((self._name, key)) is None:
            raise KeyError(key)
        self._cache.discard((self._name, key))

    def __iter__(self) -> Iterator[str]:
        return iter([k[1] for k in self._cache.keys_under(self._name) if isinstance(k, tuple)])

    def __len__(self) -> int:
        return len(self._cache.keys_under(self._name))


@dataclass(frozen=True, slots=True)
class CacheStats:
    """What a cache holds now (for the multi-user benchmark and the deploy docs)."""

    entries: int
    bytes: int
    budget: int
    max_entries: int
    evictions: int
    #: Values computed (``make`` called): a key asked for again and again that is never
    #: kept shows here.
    misses: int = 0


class SharedCache(Generic[V]):
    """A thread-safe LRU cache bounded by ``max_entries`` and ``max_bytes`` (estimated).

    An entry larger than the whole budget is still returned but not kept. A value whose
    computation raises is not stored (the exception goes to the caller). A value that
    grows after it is stored (an index keeps the collapsed lines its plans built) is
    measured again when its ``stamp`` changes, and the cache evicts to fit again.
    """

    def __init__(self, max_bytes: int, max_entries: int) -> None:
        if max_bytes < 0 or max_entries < 1:
            raise ValueError("a cache needs max_bytes >= 0 and max_entries >= 1")
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._stamps: dict[Hashable, Hashable] = {}
        self._making: dict[Hashable, threading.Lock] = {}
        self._bytes = 0
        self._evictions = 0
        self._misses = 0

    def get(
        self,
        key: Hashable,
        make: Callable[[], V],
        size: Callable[[V], int] = approx_bytes,
        stamp: Callable[[V], Hashable] | None = None,
        spill: SessionCopies | None = None,
    ) -> V:
        """The value for ``key``, made (once, even when asked from several threads) if absent.

        With ``stamp``, a cached value whose stamp changed since it was measured (it grew)
        is measured again with ``size``. With ``spill``, a value too large for the whole
        cache (when made, or after it grew) is kept there, and found there next time."""
        if spill is not None:
            held = spill.get(key)
            if held is not None:
                return held  # type: ignore[no-any-return]
        found = self._lookup(key)
        if found is not None:
            grown = self._remeasure(key, found[0], size, stamp)
            if spill is not None and grown > self.max_bytes:
                spill.keep(key, found[0], grown)
            return found[0]
        with self._lock:
            making = self._making.setdefault(key, threading.Lock())
        with making:
            found = self._lookup(key)
            if found is not None:
                return found[0]
            try:
                with self._lock:
                    self._misses += 1
                value = make()
                nbytes = size(value)
                kept = self._store(key, value, nbytes, stamp(value) if stamp else None)
                if not kept and spill is not None:
                    spill.keep(key, value, nbytes)
            finally:
                with self._lock:
                    self._making.pop(key, None)
        return value

    def _remeasure(
        self,
        key: Hashable,
        value: V,
        size: Callable[[V], int],
        stamp: Callable[[V], Hashable] | None,
    ) -> int:
        """Measure ``value`` again if its stamp changed; its new size (0: not measured)."""
        if stamp is None:
            return 0
        now = stamp(value)
        with self._lock:
            if self._stamps.get(key, now) == now:
                return 0
            self._stamps[key] = now  # one thread measures it
        nbytes = size(value)
        with self._lock:
            found = self._entries.get(key)
            if found is None or found[0] is not value:
                return 0
            self._bytes += nbytes - found[1]
            self._entries[key] = (value, nbytes)
            self._evict()
        return nbytes

    def peek(self, key: Hashable) -> V | None:
        """The value for ``key`` if it is cached (it becomes the most recently used)."""
        found = self._lookup(key)
        return None if found is None else found[0]

    def put(self, key: Hashable, value: V, size: Callable[[V], int] = approx_bytes) -> None:
        """Store ``value`` (replacing the key's old value), then evict to fit."""
        self.discard(key)
        self._store(key, value, size(value))

    def discard(self, key: Hashable) -> None:
        with self._lock:
            found = self._entries.pop(key, None)
            self._stamps.pop(key, None)
            if found is not None:
                self._bytes -= found[1]

    def keys_under(self, prefix: Hashable) -> list[Hashable]:
        """The keys ``(prefix, ...)`` held now (for a :class:`CacheView`)."""
        with self._lock:
            return [k for k in self._entries if isinstance(k, tuple) and k[:1] == (prefix,)]

    def _lookup(self, key: Hashable) -> tuple[V, int] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def _store(self, key: Hashable, value: V, nbytes: int, stamp: Hashable = None) -> bool:
        """Keep ``value`` (then evict to fit); False when it is larger than the whole cache."""
        with self._lock:
            if nbytes > self.max_bytes:
                self._evictions += 1
                return False
            self._entries[key] = (value, nbytes)
            if stamp is not None:
                self._stamps[key] = stamp
            self._bytes += nbytes
            self._evict()
            return True

    def _evict(self) -> None:
        """Drop least recently used entries until the cache fits (the lock is held)."""
        while self._entries and (
            self._bytes > self.max_bytes or len(self._entries) > self.max_entries
        ):
            old, (_, dropped) = self._entries.popitem(last=False)
            self._stamps.pop(old, None)
            self._bytes -= dropped
            self._evictions += 1

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                entries=len(self._entries),
                bytes=self._bytes,
                budget=self.max_bytes,
                max_entries=self.max_entries,
                evictions=self._evictions,
                misses=self._misses,
            )


class SessionCopies:
    """One session's own copies of values too large for their shared cache, for one group
    of keys at a time (the first item of a tuple key: a transcript's content hash), so a
    session holds at most one large transcript's parse and indexes, counted in ``bytes``.

    Keeping a value of another group drops the values of the previous one. Not
    thread-safe: one session's script runs one rerun at a time."""

    def __init__(self) -> None:
        self._values: dict[Hashable, tuple[Any, int]] = {}

    @staticmethod
    def _group(key: Hashable) -> Hashable:
        return key[0] if isinstance(key, tuple) and key else key

    def get(self, key: Hashable) -> Any:
        found = self._values.get(key)
        return None if found is None else found[0]

    def keep(self, key: Hashable, value: Any, nbytes: int) -> None:
        group = self._group(key)
        for old in [k for k in self._values if self._group(k) != group]:
            del self._values[old]
        self._values[key] = (value, nbytes)

    def drop(self, group: Hashable) -> None:
        """Forget the values of ``group`` (a transcript the session removed)."""
        for old in [k for k in self._values if self._group(k) == group]:
            del self._values[old]

    @property
    def entries(self) -> int:
        return len(self._values)

    @property
    def bytes(self) -> int:
        return sum(n for _, n in self._values.values())


def cache_budget_mb(settings: Mapping[str, Any]) -> int:
    """``COMPACTLENS_CACHE_MB`` from ``settings`` (environment first, then secrets), or
    the default. Raises ValueError naming the setting when it is not a positive number."""
    raw = settings.get(CACHE_MB_SETTING)
    if raw is None or str(raw).strip() == "":
        return DEFAULT_CACHE_MB
    text = str(raw).strip()
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{CACHE_MB_SETTING} must be a whole number of MB >= 1, not {text!r}")
    return int(text)


@dataclass(frozen=True, slots=True)
class SharedCaches:
    """The inspector's shared caches, sized from one budget (MB)."""

    transcripts: SharedCache[Any]
    indexes: SharedCache[Any]
    runs: SharedCache[Any]
    analyses: SharedCache[Any]
    summaries: SharedCache[Any]

    @classmethod
    def sized(cls, budget_mb: int) -> SharedCaches:
        total = budget_mb * 2**20
        made = {
            name: SharedCache[Any](int(total * share), entries)
            for name, (share, entries) in SHARES.items()
        }
        return cls(**made)

    def stats(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for name in SHARES:
            s = getattr(self, name).stats()
            out[name] = {
                "entries": s.entries,
                "bytes": s.bytes,
                "budget": s.budget,
                "max_entries": s.max_entries,
                "evictions": s.evictions,
                "misses": s.misses,
            }
        return out


#: The collector's thresholds in a server (Python's default is 700, 10, 10).
SERVER_GC_THRESHOLDS = (50_000, 20, 10)


def settle_collector() -> None:
    """Tune the cyclic garbage collector for a server holding large caches: collect once,
    hide every object alive now from it (``gc.freeze``: what Streamlit, plotly, pandas
    and the library loaded, which lives as long as the process), and collect the young
    generation every 50,000 new objects instead of every 700.

    With the defaults, a page run of the lab allocates enough to start a full collection
    every few runs, and a full collection walks every cached transcript, index and run:
    in the multi-user benchmark (8 sessions, 128 MB of caches) 40-80 full collections
    per 3-4 minutes took 0.7-1.2 s each, holding up every session. Frozen objects are
    still freed by reference counting; only reference cycles among them are never
    collected (at most those of the page run in progress, once per process). Call it
    once per server process, never in tests.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*SERVER_GC_THRESHOLDS)
