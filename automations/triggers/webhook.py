"""Webhook: a URL that accepts any request and runs the automation in a worker (SPEC 4.2), and its web service URL.

Every webhook automation also answers at its web service URL, which runs
it while the caller waits (as Make's webhook with a Webhook response
module). Nothing to register anywhere: turning on and off only decides
whether deliveries run or are kept (hooks/).
"""

from automations.triggers.base import Trigger


class Webhook(Trigger):
    TYPE = "webhook"
    URLS = ("webhook", "web_service")


TRIGGER = Webhook()
