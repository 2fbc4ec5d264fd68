"""URLconfs, one per public host role (see config/hosts.py)."""
