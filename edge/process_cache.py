"""Process-wide memories (the maintenance switch, remembered keys, feed bodies, rate-limit leases): one registry.

Each memory is a named ProcessCache with a size cap and an expiry per entry.
reset_all() empties every one of them and calls every callback registered
with on_reset() (threads that hold connections, for instance), so that a test
starts from a process that remembers nothing: conftest.py calls it around
every test. Memories are per process by design; what must hold across
processes lives in the database or the shared cache.
"""

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

_caches: dict[str, "ProcessCache"] = {}
_on_reset: list[Callable[[], None]] = []
_registry_lock = threading.Lock()


class ProcessCache:
    """At most max_size entries, each kept for its seconds (None: until evicted or reset).

    When full, the entry set longest ago goes first, expired or not: one
    dictionary operation per entry set, so a flood of new keys costs no
    sweep. Readers take no lock; writers hold one, so that threads never see
    an entry half replaced. clock is time.monotonic unless a test gives its
    own.
    """

    def __init__(
        self, name: str, *, max_size: int, seconds: float | None = None, clock: Callable[[], float] = time.monotonic
    ):
        if max_size < 1:
            raise ValueError("max_size must be at least 1")
        self.name = name
        self.max_size = max_size
        self.seconds = seconds
        self.clock = clock
        self._entries: dict[Hashable, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None, *, stale: bool = False) -> Any:
        """The value set for key while it has not expired, else default.

        stale: also an expired value, until the entry is evicted or the cache
        reset (a last good answer to fall back on when its source fails).
        """
        entry = self._entries.get(key)
        if entry is None or (not stale and entry[0] <= self.clock()):
            return default
        return entry[1]

    def set(self, key: Hashable, value: Any, *, seconds: float | None = None) -> None:
        """Remember value for seconds (this cache's default when None; never expiring when both are None)."""
        seconds = self.seconds if seconds is None else seconds
        expires = float("inf") if seconds is None else self.clock() + seconds
        with self._lock:
            self._entries.pop(key, None)  # set again, it moves to the end of the eviction order
            while len(self._entries) >= self.max_size:
                del self._entries[next(iter(self._entries))]
            self._entries[key] = (expires, value)

    def pop(self, key: Hashable) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def named(name: str, *, max_size: int, seconds: float | None = None) -> ProcessCache:
    """The process's cache of this name, created on first use and emptied by reset_all()."""
    with _registry_lock:
        cache = _caches.get(name)
        if cache is None:
            cache = _caches[name] = ProcessCache(name, max_size=max_size, seconds=seconds)
        return cache


def registered(name: str) -> ProcessCache:
    """The cache named so, made already by its module: for a test to give it a clock of its own."""
    with _registry_lock:
        return _caches[name]


def on_reset(callback: Callable[[], None]) -> Callable[[], None]:
    """Call callback in every reset_all(), after the caches are emptied; usable as a decorator."""
    with _registry_lock:
        if callback not in _on_reset:
            _on_reset.append(callback)
    return callback


def reset_all() -> None:
    """Empty every named cache, then call every on_reset callback in the order they were registered."""
    with _registry_lock:
        caches, callbacks = list(_caches.values()), list(_on_reset)
    for cache in caches:
        cache.clear()
    for callback in callbacks:
        callback()
