"""Set values: name values built from trigger data and earlier steps, for later steps to use."""

KIND = "set_values"

SCHEMA = {
    "type": "object",
    "required": ["values"],
    "properties": {"values": {"type": "object", "minProperties": 1}},
}


def run(settings: dict, context) -> dict:
    return settings["values"]
