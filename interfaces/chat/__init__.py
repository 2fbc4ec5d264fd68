"""The chat widget (/webchat/{key}, its embed script) and its conversations."""
