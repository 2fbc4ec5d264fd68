"""Web service response: the status, headers and body a web service caller gets back."""
KIND = "respond"

SCHEMA = {
    "type": "object",
    "properties": {
        "status": {"type": "integer", "minimum": 200, "maximum": 599},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "body": {},
    },
}


def run(settings: dict, context) -> dict:
    """The first respond step of a run answers the caller; later ones are recorded but change nothing."""
    response = {"status": settings.get("status", 200), "headers": settings.get("headers", {}), "body": settings.get("body", "")}
    if context.response is None:
        context.response = response
    return response
