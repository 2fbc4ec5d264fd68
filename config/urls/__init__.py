"""URLconfs, one per public host role (see edge/hosts.py)."""
