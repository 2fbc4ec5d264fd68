"""Django's Redis cache, made cheaper per call for the counters every feed request touches; the embedded file cache.

Two changes, same contract as Django's backend:
- Django builds a new redis.Redis object on every cache call, and redis-py
  fills a table of some 170 response callbacks in each constructor, most of
  the CPU of a rate-limit check (benchmarks/RESULTS.md). A Redis object is only
  a handle on a thread-safe connection pool, so one per pool is kept.
- Django's incr asks EXISTS and then INCRBY; a server-side script does both
  in one round trip (a missing key still raises ValueError and is not created).

And one addition, incr_with_expiry, for counters that must be created and
counted in one round trip (catalog.ratelimits).

FileCache, the embedded default's, counts as Redis does: see its docstring.

Django has no public way to change either backend so: the Redis backend
sets its client class in `__init__` (`_class`), and RedisCacheClient,
undocumented, makes its clients in get_client from `_client` and
`_get_connection_pool`; the file backend's entries are found by
`_key_to_file` in `_dir`, each an expiry pickled before its zlib-compressed
value, which FileCache reads and writes as Django does.
"""

import os
import pickle
import tempfile
import time
import zlib

from django.core.cache.backends.filebased import FileBasedCache
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient
from django.core.files import locks

WRITTEN_FOR = {"Django": "5.2.19"}

_INCR_IF_EXISTS = """
if redis.call('exists', KEYS[1]) == 1 then return redis.call('incrby', KEYS[1], ARGV[1]) end
return false
"""

_INCR_WITH_EXPIRY = """
local value = redis.call('incrby', KEYS[1], ARGV[1])
if redis.call('ttl', KEYS[1]) == -1 then redis.call('expire', KEYS[1], ARGV[2]) end
return value
"""


class _Client(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}
        self._scripts = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client

    def _run(self, source, key, *args):
        client = self.get_client(key, write=True)
        if source not in self._scripts:
            self._scripts[source] = client.register_script(source)  # EVALSHA, loading the script once
        return self._scripts[source](keys=[key], args=list(args), client=client)

    def incr(self, key, delta):
        value = self._run(_INCR_IF_EXISTS, key, delta)
        if value is None:
            raise ValueError(f"Key '{key}' not found.")
        return value

    def incr_with_expiry(self, key, delta, timeout):
        return self._run(_INCR_WITH_EXPIRY, key, delta, timeout)


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _Client

    def incr_with_expiry(self, key, delta, timeout, version=None):
        """Add delta to a counter, creating it at 0 with this timeout (seconds) if missing; one round trip."""
        key = self.make_and_validate_key(key, version=version)
        return self._cache.incr_with_expiry(key, delta, int(timeout))


class FileCache(FileBasedCache):
    """Django's file cache with an incr that keeps the counter's expiry and loses no count.

    Django's incr is a get and then a set under the default timeout (300 s), so
    a rate-limit counter of a longer window (sign-in's 15 minutes, the bulk
    feed's hour) was forgotten 300 s after its last count, and two processes
    counting at once could both write the same total. Here an incr holds a lock
    on the entry's file, writes the new total with the expiry the entry had to
    a new file and moves it in place, as set does, so readers never see half a
    file. A lock won on a file that was replaced meanwhile is dropped and taken
    again on the new one.
    """

    def incr(self, key, delta=1, version=None):
        path = self._key_to_file(key, version)
        while True:
            try:
                with open(path, "rb") as entry:
                    locks.lock(entry, locks.LOCK_EX)
                    try:
                        if os.fstat(entry.fileno()).st_ino != os.stat(path).st_ino:
                            continue
                        expiry = pickle.load(entry)
                        if expiry is not None and expiry < time.time():
                            raise ValueError(f"Key '{key}' not found.")
                        value = pickle.loads(zlib.decompress(entry.read())) + delta
                        self._replace(path, expiry, value)
                        return value
                    finally:
                        locks.unlock(entry)
            except (FileNotFoundError, EOFError):
                raise ValueError(f"Key '{key}' not found.") from None

    def _replace(self, path, expiry, value) -> None:
        descriptor, temporary = tempfile.mkstemp(dir=self._dir)
        try:
            with open(descriptor, "wb") as written:
                written.write(pickle.dumps(expiry, self.pickle_protocol))
                written.write(zlib.compress(pickle.dumps(value, self.pickle_protocol)))
            os.replace(temporary, path)
        except BaseException:
            os.remove(temporary)
            raise
