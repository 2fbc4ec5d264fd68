"""overrides/kombu_redis_client.py: Celery's Redis transport publishing through one Redis client per connection pool."""

import pytest
from django.conf import settings

from config.celery import app
from overrides import kombu_redis_client

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL")


@pytest.fixture
def channel():
    with app.connection_for_write() as connection:
        yield connection.default_channel


def test_the_celery_app_publishes_through_the_transport(channel):
    assert isinstance(channel, kombu_redis_client.Channel)


def test_messages_are_published_through_one_client(channel):
    with channel.conn_or_acquire() as first, channel.conn_or_acquire() as second:
        assert first is second
        assert first.connection_pool is channel.pool


def test_a_replaced_pool_gets_a_client_of_its_own(channel):
    with channel.conn_or_acquire() as before:
        pass
    channel._disconnect_pools()  # what kombu does when the connection is lost
    with channel.conn_or_acquire() as after:
        assert after is not before
        assert after.connection_pool is channel.pool


def test_a_message_sent_through_the_shared_client_arrives():
    with app.connection_for_write() as connection, connection.SimpleQueue("flowgate-test-broker") as queue:
        queue.clear()
        queue.put({"hello": "world"})
        message = queue.get(timeout=5)
        message.ack()
        assert message.payload == {"hello": "world"}
