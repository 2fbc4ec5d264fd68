"""A local app that connects by OAuth (authorization code, PKCE, rotating refresh tokens), for tests on loopback.

It plays the other app of an oauth_v2 connection: its sign-in page, its token endpoint and one action.

- GET /oauth/authorize: by `mode`, "approve" sends the browser straight back with a code, "deny" with
  error=access_denied, "page" shows a page with Allow and Deny buttons (the browser test clicks one).
- POST /oauth/token: the client authenticates (client_secret in the body or HTTP Basic); an authorization code
  is good once, for the redirect_uri it was issued to, and with the PKCE verifier its challenge was made from;
  each refresh token is good once and is replaced by a new one (rotation). Access tokens live `expires_in`
  seconds, as the app says; `expire_access_tokens()` ends them now, as an app that revokes them would.
  `token_answer` set to (status, content type, bytes) answers every token request with that, for hostile answers.
- POST /api/leads: the action; 401 unless the Authorization is a live Bearer access token, else 201 with the
  lead's id and what was sent.
"""

import base64
import hashlib
import html
import json
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.local_apps import QuietHandler, serving

CLIENT_ID = "flowgate-client"
ACCOUNT = "acct-42"  # the account every token of this app opens
CLIENT_SECRET = "acorn-client-secret-5150"


class OAuthApp:
    """The app's state, shared by its handler's threads; what a test sets and reads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.mode = "approve"
        self.expires_in = 3600
        self.codes: dict[str, dict] = {}
        self.access_tokens: dict[str, bool] = {}  # token: still live
        self.refresh_tokens: dict[str, bool] = {}  # token: still good (False once spent)
        self.token_requests: list[dict] = []
        self.calls: list[dict] = []
        self.token_answer: tuple[int, str, bytes] | None = None
        self.base = ""

    def expire_access_tokens(self) -> None:
        with self.lock:
            self.access_tokens = dict.fromkeys(self.access_tokens, False)

    def revoke_refresh_tokens(self) -> None:
        with self.lock:
            self.refresh_tokens = dict.fromkeys(self.refresh_tokens, False)

    def approve(self, query: dict) -> str:
        """The redirect back to the client with a new code, as the Allow button gives."""
        code = secrets.token_urlsafe(16)
        with self.lock:
            self.codes[code] = {
                "redirect_uri": query.get("redirect_uri", ""),
                "challenge": query.get("code_challenge", ""),
                "method": query.get("code_challenge_method", ""),
            }
        return _back(query, {"code": code, "state": query.get("state", "")})

    def issue(self) -> dict:
        access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
        with self.lock:
            self.access_tokens[access] = True
            self.refresh_tokens[refresh] = True
        return {"access_token": access, "token_type": "Bearer", "expires_in": self.expires_in, "refresh_token": refresh}


def _back(query: dict, params: dict) -> str:
    redirect = query.get("redirect_uri", "")
    return redirect + ("&" if "?" in redirect else "?") + urlencode(params)


def handler_for(app: OAuthApp) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def _send(self, status: int, body: bytes, content_type: str = "application/json", **headers) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name.replace("_", "-"), value)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, document: dict) -> None:
            self._send(status, json.dumps(document).encode())

        def _form(self) -> dict:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            return {name: values[0] for name, values in parse_qs(raw, keep_blank_values=True).items()}

        def do_GET(self):
            parts = urlsplit(self.path)
            query = {name: values[0] for name, values in parse_qs(parts.query).items()}
            if parts.path == "/api/me":  # who the token's account is: the test call of a connection
                with app.lock:
                    live = app.access_tokens.get(self.headers.get("Authorization", "").removeprefix("Bearer "), False)
                return self._json(200, {"account": {"id": ACCOUNT}}) if live else self._json(401, {"error": "no"})
            if parts.path != "/oauth/authorize":
                return self._send(404, b"{}")
            if query.get("client_id") != CLIENT_ID or query.get("response_type") != "code":
                return self._send(400, b"unknown client", "text/plain")
            if app.mode == "deny":
                return self._send(302, b"", Location=_back(query, {"error": "access_denied", "state": query["state"]}))
            if app.mode == "approve":
                return self._send(302, b"", Location=app.approve(query))
            hidden = "".join(
                f'<input type="hidden" name="{html.escape(name)}" value="{html.escape(value)}">'
                for name, value in query.items()
            )
            page = (
                '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in to Acorn CRM</title></head>'
                "<body><main><h1>Allow Flowgate to use your Acorn CRM account?</h1>"
                f'<form method="post" action="/oauth/decide">{hidden}'
                '<button name="decision" value="allow">Allow</button> '
                '<button name="decision" value="deny">Deny</button></form></main></body></html>'
            )
            self._send(200, page.encode(), "text/html; charset=utf-8")

        def do_POST(self):
            path = urlsplit(self.path).path
            if path == "/oauth/decide":
                query = self._form()
                if query.pop("decision", "") == "allow":
                    return self._send(303, b"", Location=app.approve(query))
                return self._send(303, b"", Location=_back(query, {"error": "access_denied", "state": query["state"]}))
            if path == "/oauth/token":
                return self._token(self._form())
            if path == "/api/leads":
                return self._lead()
            self._send(404, b"{}")

        def _token(self, form: dict) -> None:
            client_id, secret = form.get("client_id"), form.get("client_secret")
            basic = self.headers.get("Authorization", "")
            if basic.startswith("Basic "):
                client_id, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
            with app.lock:
                app.token_requests.append({"grant_type": form.get("grant_type"), "form": form, "basic": bool(basic)})
            if app.token_answer is not None:
                status, content_type, body = app.token_answer
                return self._send(status, body, content_type)
            if client_id != CLIENT_ID or secret != CLIENT_SECRET:
                return self._json(401, {"error": "invalid_client", "error_description": "Unknown client."})
            grant = form.get("grant_type")
            if grant == "authorization_code":
                with app.lock:
                    issued = app.codes.pop(form.get("code", ""), None)
                if issued is None or issued["redirect_uri"] != form.get("redirect_uri"):
                    return self._json(400, {"error": "invalid_grant", "error_description": "Unknown code."})
                if issued["challenge"]:
                    digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
                    made = base64.urlsafe_b64encode(digest).decode().rstrip("=")
                    if issued["method"] != "S256" or made != issued["challenge"]:
                        return self._json(400, {"error": "invalid_grant", "error_description": "PKCE check failed."})
                return self._json(200, app.issue())
            if grant == "refresh_token":
                with app.lock:
                    good = app.refresh_tokens.get(form.get("refresh_token", ""))
                    if good:
                        app.refresh_tokens[form["refresh_token"]] = False  # spent: rotation
                if not good:
                    return self._json(400, {"error": "invalid_grant", "error_description": "Refresh token revoked."})
                return self._json(200, app.issue())
            self._json(400, {"error": "unsupported_grant_type"})

        def _lead(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            authorization = self.headers.get("Authorization", "")
            token = authorization.removeprefix("Bearer ")
            with app.lock:
                live = authorization.startswith("Bearer ") and app.access_tokens.get(token, False)
                app.calls.append({"token": token, "live": live, "body": body})
            if not live:
                return self._json(401, {"error": "invalid_token", "error_description": "The access token expired."})
            self._json(201, {"id": len(app.calls), "got": body})

    return Handler


@contextmanager
def running() -> Iterator[OAuthApp]:
    """The app on 127.0.0.1; its base URL is app.base."""
    app = OAuthApp()
    with serving(handler_for(app)) as base:
        app.base = base
        yield app


def auth_config(base: str, **overrides) -> dict:
    """The catalog entry's auth_config for the app at base: PKCE on, the secret in the entry."""
    return {
        "authorize_url": f"{base}/oauth/authorize",
        "token_url": f"{base}/oauth/token",
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "scopes": ["leads:write"],
        "pkce": True,
        **overrides,
    }


def catalog_entry(base: str, slug: str = "acorn-crm", **overrides) -> dict:
    """An app_doc's fields for the oauth_v2 app at base, with its one action, create_lead."""
    action = {
        "key": "create_lead",
        "name": "Create Lead",
        "description": "Adds a lead.",
        "endpoint": f"{base}/api/leads",
        "http_method": "POST",
        "request_template": {"email": "{{input.email}}"},
    }
    return {
        "name": "Acorn CRM",
        "auth_type": "oauth_v2",
        "auth_config": auth_config(base, **overrides),
        "actions": [action],
    }


def create_lead_step(connection_id: int) -> dict:
    """An app_action step that creates a lead in the app with the trigger's email, on that connection."""
    return {
        "id": "lead",
        "kind": "app_action",
        "app": "acorn-crm",
        "action": "create_lead",
        "connection": connection_id,
        "input": {"email": "{{trigger.body.email}}"},
    }
