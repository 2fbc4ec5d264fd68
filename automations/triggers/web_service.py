"""Web service: only a URL that runs the automation while the caller waits and answers what it sets (SPEC 4.2).

For an automation that is an API endpoint and nothing else, as Zapier's
"Catch Hook" with a response or n8n's Webhook node set to respond with the
last node: no fire-and-forget webhook URL is issued for it.
"""

from automations.triggers.base import Trigger


class WebService(Trigger):
    TYPE = "web_service"
    URLS = ("web_service",)


TRIGGER = WebService()
