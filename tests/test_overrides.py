"""Every module of overrides/ was written for the versions pyproject.toml pins and the ones installed.

Each guard fails when a pin changes and the module's WRITTEN_FOR does not:
bumping a library whose private parts are overridden means reading its
override again against the new version, then writing the new version in
WRITTEN_FOR. Where it is cheap, a guard also checks that the private name
the override relies on is still there, so a rename fails here rather than
in production.
"""

import importlib
import inspect
import pkgutil
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import httpcore
import httpx
from celery.beat import PersistentScheduler
from django.core.cache.backends.filebased import FileBasedCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.core.handlers.base import BaseHandler
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest
from django.middleware import csrf
from gunicorn.http.message import Message
from gunicorn.http.parser import Parser
from gunicorn.sock import BaseSocket
from kombu.transport import redis as kombu_redis
from oauth2_provider import views as toolkit
from oauth2_provider.oauth2_validators import OAuth2Validator
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn_worker import UvicornWorker

import overrides
from overrides import (
    celery_beat_schedule,
    django_cache,
    django_csrf,
    django_middleware_chain,
    django_request_host,
    gunicorn_keepalive,
    httpcore_pool,
    kombu_redis_client,
    oauth_refresh_tokens,
    oauth_token_view,
    uvicorn_protocol,
    uvicorn_worker_sockets,
    wsgi_request,
)

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def distribution(name: str) -> str:
    """A distribution's name normalized (PEP 503): Django is django, uvicorn_worker is uvicorn-worker."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    """Every `name==version` of pyproject.toml's dependencies and optional dependencies, extras dropped."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    extras = project["optional-dependencies"].values()
    requirements = [*project["dependencies"], *(requirement for extra in extras for requirement in extra)]
    found = {}
    for requirement in requirements:
        name, pinned, pin = requirement.partition("==")
        if pinned:
            found[distribution(name.split("[")[0])] = pin.strip()
    return found


def assert_written_for_the_pins(module) -> None:
    written = {distribution(name): written_for for name, written_for in module.WRITTEN_FOR.items()}
    pinned = pins()
    assert written == {name: pinned.get(name) for name in written}, (
        f"{module.__name__} was written for {written}; pyproject.toml pins another version: read it again"
    )
    assert written == {name: version(name) for name in written}, f"the installed versions are not {module.__name__}'s"


def test_every_override_declares_its_versions_and_has_its_guard_here():
    guards = [name for name in globals() if name.startswith("test_")]
    for module in pkgutil.iter_modules(overrides.__path__):
        assert isinstance(importlib.import_module(f"overrides.{module.name}").WRITTEN_FOR, dict), module.name
        assert any(guard.startswith(f"test_{module.name}_") for guard in guards), f"overrides/{module.name}: no guard"


def test_httpcore_pool_was_written_for_the_pinned_httpx_and_httpcore():
    """Re-read overrides/httpcore_pool.py against httpx's HTTPTransport (__init__, handle_request, close)."""
    assert_written_for_the_pins(httpcore_pool)
    assert "self._pool.handle_request(" in inspect.getsource(httpx.HTTPTransport.handle_request)
    assert "self._pool.close()" in inspect.getsource(httpx.HTTPTransport.close)
    assert "network_backend" in inspect.signature(httpcore.ConnectionPool).parameters


def test_kombu_redis_client_was_written_for_the_pinned_kombu():
    """Re-read overrides/kombu_redis_client.py against kombu's redis Channel (_create_client, conn_or_acquire)."""
    assert_written_for_the_pins(kombu_redis_client)
    assert "asynchronous" in inspect.signature(kombu_redis.Channel._create_client).parameters
    assert "self._create_client()" in inspect.getsource(kombu_redis.Channel.conn_or_acquire)


def test_celery_beat_schedule_was_written_for_the_pinned_celery():
    """Re-read overrides/celery_beat_schedule.py against celery.beat.PersistentScheduler (_open_schedule)."""
    assert_written_for_the_pins(celery_beat_schedule)
    assert "self._open_schedule()" in inspect.getsource(PersistentScheduler.setup_schedule)


def test_django_cache_was_written_for_the_pinned_django():
    """Re-read overrides/django_cache.py against django/core/cache/backends/redis.py and filebased.py."""
    assert_written_for_the_pins(django_cache)
    assert "self._class = RedisCacheClient" in inspect.getsource(RedisCache.__init__)
    assert "self._client = " in inspect.getsource(RedisCacheClient.__init__)
    assert "self._get_connection_pool(write)" in inspect.getsource(RedisCacheClient.get_client)
    assert callable(FileBasedCache._key_to_file)
    written = inspect.getsource(FileBasedCache._write_content)  # the entry's format FileCache reads and writes
    assert "pickle.dumps(expiry" in written and "zlib.compress(pickle.dumps(value" in written


def test_django_csrf_was_written_for_the_pinned_django():
    """Re-read overrides/django_csrf.py against django/middleware/csrf.py (_get_new_csrf_string and its callers)."""
    assert_written_for_the_pins(django_csrf)
    assert "_get_new_csrf_string()" in inspect.getsource(csrf._mask_cipher_secret)
    assert "_get_new_csrf_string()" in inspect.getsource(csrf._add_new_csrf_cookie)
    assert (len(csrf.CSRF_ALLOWED_CHARS), csrf.CSRF_SECRET_LENGTH) == (62, 32)


def test_wsgi_request_was_written_for_the_pinned_django():
    """Re-read overrides/wsgi_request.py against WSGIRequest and HttpRequest (_set_content_type_params, form data)."""
    assert_written_for_the_pins(wsgi_request)
    assert "self._set_content_type_params(environ)" in inspect.getsource(WSGIRequest.__init__)
    assert "self._mark_post_parse_error()" in inspect.getsource(HttpRequest._load_post_and_files)


def test_django_request_host_was_written_for_the_pinned_django():
    """Re-read overrides/django_request_host.py against HttpRequest's get_host and scheme."""
    assert_written_for_the_pins(django_request_host)
    assert "self._get_raw_host()" in inspect.getsource(HttpRequest.get_host)
    assert "self._get_scheme()" in inspect.getsource(HttpRequest.scheme.fget)


def test_django_middleware_chain_was_written_for_the_pinned_django():
    """Re-read overrides/django_middleware_chain.py against BaseHandler.load_middleware (where it reads the list)."""
    assert_written_for_the_pins(django_middleware_chain)
    assert "settings.MIDDLEWARE" in inspect.getsource(BaseHandler.load_middleware)
    assert list(inspect.signature(BaseHandler.load_middleware).parameters) == ["self", "is_async"]


def test_oauth_refresh_tokens_was_written_for_the_pinned_django_oauth_toolkit():
    """Re-read overrides/oauth_refresh_tokens.py against OAuth2Validator (_create_refresh_token, _save_bearer_token)."""
    assert_written_for_the_pins(oauth_refresh_tokens)
    parameters = list(inspect.signature(OAuth2Validator._create_refresh_token).parameters)
    assert parameters == ["self", "request", "refresh_token_code", "access_token", "previous_refresh_token"]
    assert "self._create_refresh_token(" in inspect.getsource(OAuth2Validator._save_bearer_token)


def test_oauth_token_view_was_written_for_the_pinned_django_oauth_toolkit():
    """Copy TokenView.authorization_flow_token_response to overrides/oauth_token_view.py again, less app_authorized."""
    assert_written_for_the_pins(oauth_token_view)
    copied = inspect.getsource(toolkit.TokenView.authorization_flow_token_response)
    assert "self.create_token_response(request)" in copied and "app_authorized.send(" in copied


def test_uvicorn_protocol_was_written_for_the_pinned_uvicorn_and_httptools():
    """Re-read overrides/uvicorn_protocol.py against uvicorn/protocols/http/httptools_impl.py."""
    assert_written_for_the_pins(uvicorn_protocol)
    assert "self.cycle = RequestResponseCycle(" in inspect.getsource(HttpToolsProtocol.on_headers_complete)
    cycle = inspect.getsource(RequestResponseCycle.__init__)
    for name in ("more_body", "keep_alive", "message_event", "response_started", "response_complete"):
        assert f"self.{name} = " in cycle, name


def test_uvicorn_worker_sockets_was_written_for_the_pinned_uvicorn_worker_and_gunicorn():
    """Re-read overrides/uvicorn_worker_sockets.py against UvicornWorker._serve and gunicorn's BaseSocket."""
    assert_written_for_the_pins(uvicorn_worker_sockets)
    assert "sockets=self.sockets" in inspect.getsource(UvicornWorker._serve)
    assert "self.sock = " in inspect.getsource(BaseSocket.__init__)


def test_gunicorn_keepalive_was_written_for_the_pinned_gunicorn():
    """Re-read overrides/gunicorn_keepalive.py against gunicorn/http/parser.py, message.py and body.py."""
    assert_written_for_the_pins(gunicorn_keepalive)
    assert gunicorn_keepalive.DRAIN_MAX_BYTES == 64 * 1024  # docs/webhooks.md says 64 KiB
    assert "self.must_close" in inspect.getsource(Message.should_close)
    assert '"failed"' in inspect.getsource(Parser.finish_body)
