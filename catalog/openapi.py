"""The OpenAPI 3 description of the catalog feed, served at /catalog/v1/openapi.json."""

from django.conf import settings

_TEXT = {"text/plain": {"schema": {"type": "string"}}}
_OPERATION = {
    "type": "object",
    "required": ["name", "description"],
    "additionalProperties": False,
    "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
}
_RFC3339 = {"type": "string", "format": "date-time"}
_SUMMARY_PROPERTIES = {
    "slug": {"type": "string", "pattern": "^[a-z0-9]+(?:-[a-z0-9]+)*$"},
    "name": {"type": "string"},
    "description": {"type": "string"},
    "category": {"type": ["string", "null"]},
    "auth_type": {
        "type": "string",
        "description": "Seen: api_key, none, oauth_v2, managed_auth, token_mint; may grow.",
    },
    "app_domain": {"type": "string"},
    "logo_url": {"type": "string", "format": "uri"},
    "connect_url": {"type": "string", "format": "uri"},
    "last_updated": _RFC3339,
    "etag": {"type": "string", "pattern": '^".+"$'},
    "retired": {"type": "boolean"},
    "retired_at": _RFC3339,
    "tier": {"type": "string", "enum": ["A", "B", "C", "D"]},
    "sort_order": {"type": "integer", "minimum": 1},
    "trigger_count": {"type": "integer", "minimum": 0},
    "action_count": {"type": "integer", "minimum": 0},
    "last_op_modified": {"type": ["string", "null"], "format": "date-time"},
}
_SUMMARY_REQUIRED = [name for name in _SUMMARY_PROPERTIES if name != "retired_at"]


def _headers(*names: str) -> dict:
    known = {
        "ETag": {"schema": {"type": "string"}},
        "Cache-Control": {"schema": {"type": "string"}},
        "Retry-After": {"schema": {"type": "integer"}},
        "Allow": {"schema": {"type": "string"}},
        "Access-Control-Allow-Origin": {"schema": {"type": "string", "enum": ["*"]}},
        "RateLimit-Policy": {"schema": {"type": "string"}},
        "RateLimit": {"schema": {"type": "string"}},
    }
    return {name: known[name] for name in names}


def _responses(ok: dict, *, rate_limited: bool = True, not_found: bool = False) -> dict:
    result = {
        "200": ok,
        "304": {"description": "If-None-Match matched the current ETag; no body.", "headers": _headers("ETag")},
        "405": {"description": "Method other than GET or HEAD.", "headers": _headers("Allow"), "content": _TEXT},
        "503": {
            "description": "The feed cannot produce a body it trusts.",
            "headers": _headers("Retry-After"),
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        },
    }
    if rate_limited:
        result["429"] = {"description": "Rate limit passed.", "headers": _headers("Retry-After"), "content": _TEXT}
    if not_found:
        result["404"] = {"description": "Unknown or invalid slug, app not in the feed, or no logo."}
    return result


def _json(ref: str, description: str) -> dict:
    return {
        "description": description,
        "headers": _headers("ETag", "Cache-Control", "Access-Control-Allow-Origin", "RateLimit-Policy", "RateLimit"),
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
    }


def document() -> dict:
    slug = {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Flowgate public app catalog feed",
            "version": "1",
            "description": "Public, read-only, cacheable list of connectable apps with their triggers and actions.",
        },
        "servers": [{"url": f"{settings.BASE_URL}/catalog/v1"}],
        "paths": {
            "/apps": {"get": {"operationId": "listApps", "responses": _responses(_json("AppList", "Every app."))}},
            "/apps/{slug}": {
                "get": {
                    "operationId": "getApp",
                    "parameters": [slug],
                    "responses": _responses(_json("AppDetail", "One app with operations."), not_found=True),
                }
            },
            "/apps/{slug}/logo": {
                "get": {
                    "operationId": "getAppLogo",
                    "parameters": [slug],
                    "responses": _responses(
                        {"description": "The icon bytes.", "content": {"image/*": {}}}, not_found=True
                    ),
                }
            },
            "/bulk": {
                "get": {
                    "operationId": "getBulk",
                    "responses": _responses(_json("Bulk", "Every app with operations; rebuilt daily.")),
                }
            },
        },
        "components": {
            "schemas": {
                "AppSummary": {
                    "type": "object",
                    "required": _SUMMARY_REQUIRED,
                    "additionalProperties": False,
                    "properties": _SUMMARY_PROPERTIES,
                },
                "AppDetail": {
                    "type": "object",
                    "required": [*_SUMMARY_REQUIRED, "triggers", "actions"],
                    "additionalProperties": False,
                    "properties": {
                        **_SUMMARY_PROPERTIES,
                        "triggers": {"type": "array", "items": _OPERATION},
                        "actions": {"type": "array", "items": _OPERATION},
                    },
                },
                "AppList": _envelope("AppSummary"),
                "Bulk": _envelope("AppDetail"),
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
            }
        },
    }


def _envelope(item: str) -> dict:
    return {
        "type": "object",
        "required": ["generated_at", "count", "apps"],
        "additionalProperties": False,
        "properties": {
            "generated_at": _RFC3339,
            "count": {"type": "integer", "minimum": 1},
            "apps": {"type": "array", "minItems": 1, "items": {"$ref": f"#/components/schemas/{item}"}},
        },
    }
