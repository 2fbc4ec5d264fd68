"""Celery's Redis transport with one Redis client per connection pool (settings: CELERY_BROKER_TRANSPORT).

kombu builds a new redis.Redis object for every message it publishes, and
redis-py fills a table of some 170 response callbacks in each constructor:
about a quarter of the CPU of publishing a task, which every batch of
accepted webhooks does (hooks/intake.py). A Redis object is only a handle on
a thread-safe connection pool, so one per pool is kept, as
overrides/django_cache.py does for the cache. The asynchronous clients a
worker consumes with are kombu's own.

kombu has no setting for this: Channel._create_client, private, is where
every synchronous client is made (conn_or_acquire calls it per publish).
"""

from kombu.transport import redis

WRITTEN_FOR = {"kombu": "5.7.0"}


class Channel(redis.Channel):
    _shared_client = None

    def _create_client(self, asynchronous=False):
        if asynchronous:
            return super()._create_client(asynchronous=True)
        client = self._shared_client
        if client is None or client.connection_pool is not self.pool:  # a reconnect replaces the pool
            client = self._shared_client = super()._create_client()
        return client


class Transport(redis.Transport):
    Channel = Channel
