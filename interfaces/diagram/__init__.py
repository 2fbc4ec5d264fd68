"""The automation diagram (/automation?id=): an automation drawn for its owner."""
