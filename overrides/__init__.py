"""Where the project overrides or reads a library's private parts: the one place to re-read when a pin changes.

A library with no public way to do what the service needs gets its override
here, as a vendored patch would be kept (STYLE.md 13): a private method
replaced (kombu's `_create_client`, Celery's `_open_schedule`, DOT's
`_create_refresh_token`), a private attribute set or read (httpx's `_pool`,
gunicorn's `must_close`), a module global swapped (Django's
`_get_new_csrf_string`), or a method's body copied (DOT's TokenView).

The rule for each module:
- it overrides one library's private API, and is named after what it
  overrides, never after the library alone;
- its docstring or comments say why there was no public way;
- WRITTEN_FOR names the versions it was written against, which must be the
  ones pyproject.toml pins and the ones installed;
- tests/test_overrides.py holds its guard, which fails when a pin changes
  without WRITTEN_FOR (so without the module being read again), and where
  cheap when the private name it relies on is gone.

The project's own logic stays in its packages and imports what it needs
from here; these modules import no package of the project.
"""
