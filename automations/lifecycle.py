"""What other apps do when an automation is turned on or off, reset or deleted.

automations imports none of the apps that build on it (STYLE.md 9); they
register here in their AppConfig.ready() instead, e.g. hooks replays kept
deliveries when an automation is turned on.
"""
from collections import defaultdict
from collections.abc import Callable

EVENTS = ("turned_on", "turned_off", "reset")
_listeners: dict[str, list[Callable]] = defaultdict(list)


def listen(event: str, listener: Callable) -> None:
    assert event in EVENTS, event
    if listener not in _listeners[event]:
        _listeners[event].append(listener)


def emit(event: str, automation) -> None:
    for listener in _listeners[event]:
        listener(automation)
