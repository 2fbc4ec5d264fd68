"""Paths of a Host the service does not name and no account owns, though ALLOWED_HOSTS let it in: none (404)."""

urlpatterns: list = []
