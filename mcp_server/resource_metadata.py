"""The OAuth protected-resource metadata of MCP_URL (SPEC 4.4, RFC 9728): the root document and the /mcp path one."""

from django.conf import settings


def document(*, resource: str) -> dict:
    """The metadata of one resource identifier; the authorization server is BASE_URL's."""
    return {
        "resource": resource,
        "authorization_servers": [settings.BASE_URL],
        "scopes_supported": list(settings.MCP_SCOPES),
        "bearer_methods_supported": ["header"],
        "resource_name": "Flowgate MCP server",
        "resource_documentation": settings.BASE_URL + "/docs/mcp.md",
    }


def root_document() -> dict:
    """SPEC 4.4: `resource` is MCP_URL itself."""
    return document(resource=settings.MCP_URL)


def endpoint_document() -> dict:
    """RFC 9728 section 3.1: the document at /.well-known/oauth-protected-resource/mcp names MCP_URL/mcp."""
    return document(resource=settings.MCP_URL + "/mcp")
