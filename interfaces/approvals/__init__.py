"""Approval queues: the link (/moderation) where people decide what approval steps ask, and its JSON API."""
