"""Routes of this app; the paths arrive with the issue that builds them."""

urlpatterns: list = []
