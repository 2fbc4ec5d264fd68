"""Web service: only a URL that runs the automation while the caller waits and answers what it sets (SPEC 4.2).

For an automation that is an API endpoint and nothing else, as Zapier's
"Catch Hook" with a response or n8n's Webhook node set to respond with the
last node: no fire-and-forget webhook URL is issued for it.
"""

TYPE = "web_service"
SCHEMA = {"type": "object", "properties": {}}
URLS = ("web_service",)


def activate(automation) -> None:
    pass


def deactivate(automation) -> None:
    pass


def delete(automation) -> None:
    pass
