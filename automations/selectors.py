"""Reads on automations: finding one by the key of its web service URL."""
from automations import keys
from automations.models import Automation


def automation_for_web_service_key(key: str) -> Automation | None:
    """The automation whose web service URL ends in key, read afresh: a call needs its current definition."""
    wanted = keys.digest(key)
    automation = Automation.objects.filter(webservice_key_digest=wanted).first()
    if automation is None or not keys.matches(key, automation.webservice_key_digest):
        return None
    return automation
