"""The broker connection names its host: kombu warned "No hostname was supplied" at each one on the embedded default."""

import logging

from config.celery import app


def test_the_broker_connection_gives_kombu_no_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="kombu"), app.connection_for_write() as connection:
        assert connection.info()["hostname"]
    assert [record.getMessage() for record in caplog.records] == []
