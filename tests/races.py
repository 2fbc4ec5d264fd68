"""Calls that race each other in tests: each on a thread, so on a database connection, of its own."""

import threading

from django.db import connections


def at_once(*calls) -> list:
    """Start every call together (a barrier) and wait for all; what each returned, in the order they ended."""
    start, ended = threading.Barrier(len(calls), timeout=30), []

    def run(call):
        try:
            start.wait()
            ended.append(call())
        finally:
            connections.close_all()  # a thread's connection would outlive the test database

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return ended
