"""The MCP methods this server answers, per protocol era, as results built from the official SDK's types.

Handshake era (2024-11-05 to 2025-11-25): initialize, ping, tools/list,
tools/call. 2026-07-28 era: server/discover, tools/list, tools/call; every
result carries resultType, list results ttlMs and cacheScope, and each is
stamped with the server's identity in _meta. Anything else is -32601.
"""

import functools
import logging

import mcp_types as types
from mcp_types import SERVER_INFO_META_KEY
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcp_server.bearer import TOOLS_SCOPE, Bearer
from mcp_server.tools import Encoded, ToolError, registry, result_text

logger = logging.getLogger(__name__)

SERVED_VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
# The tool list is the same for every user and changes only with a release: clients may keep it five minutes.
TOOLS_TTL_MS = 300_000
SERVER_INFO = types.Implementation(name="flowgate", title="Flowgate", version="1.0")
INSTRUCTIONS = (
    "Flowgate runs automations: a trigger (a webhook, a form, a chat message) and steps. Find apps with "
    "search_apps; list_automations gives the ids the other tools take; run_automation starts a webhook automation "
    "with a payload and get_run_status follows the run."
)


class RpcError(Exception):
    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class NeedsScopes(Exception):
    """The call needs scopes the token lacks: answered 403 with insufficient_scope, not as a JSON-RPC error."""

    def __init__(self, scopes: tuple[str, ...]):
        super().__init__(" ".join(scopes))
        self.scopes = scopes


def _dump(result: types.Result) -> dict:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def capabilities() -> types.ServerCapabilities:
    return types.ServerCapabilities(tools=types.ToolsCapability(list_changed=False))


def tool_list() -> list[types.Tool]:
    return [
        types.Tool(
            name=tool.name,
            title=tool.title,
            description=tool.description
            + ("" if tool.scopes == (TOOLS_SCOPE,) else f" Needs the scopes {' and '.join(tool.scopes)}."),
            input_schema=tool.input_schema,
            annotations=types.ToolAnnotations(
                title=tool.title,
                read_only_hint=tool.read_only,
                destructive_hint=None if tool.read_only else tool.destructive,
                idempotent_hint=tool.idempotent,
                open_world_hint=False,
            ),
        )
        for tool in registry().values()
    ]


def initialize(params: dict | None, bearer: Bearer) -> dict:
    """A client asking for a version this server speaks gets it; any other gets the newest handshake version."""
    try:
        request = types.InitializeRequestParams.model_validate(params or {})
    except ValidationError:
        raise RpcError(INVALID_PARAMS, "initialize needs protocolVersion, capabilities and clientInfo") from None
    version = request.protocol_version
    agreed = version if version in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    result = types.InitializeResult(
        protocol_version=agreed, capabilities=capabilities(), server_info=SERVER_INFO, instructions=INSTRUCTIONS
    )
    return _dump(result)


def ping(params: dict | None, bearer: Bearer) -> dict:
    return _dump(types.EmptyResult())


def discover(params: dict | None, bearer: Bearer) -> dict:
    result = types.DiscoverResult(
        supported_versions=list(SERVED_VERSIONS),
        capabilities=capabilities(),
        instructions=INSTRUCTIONS,
        ttl_ms=TOOLS_TTL_MS,
        cache_scope="public",
    )
    return _dump(result)


@functools.cache
def _listed_tools() -> dict:
    return _dump(types.ListToolsResult(tools=tool_list(), ttl_ms=TOOLS_TTL_MS, cache_scope="public"))


def list_tools(params: dict | None, bearer: Bearer) -> dict:
    """Built once per process: the list changes only with a release."""
    return dict(_listed_tools())


def _tool_result(value, *, is_error: bool = False) -> dict:
    """The value as structured content, and as JSON text for clients that read only text.

    The structured value joins the dumped result rather than passing through pydantic, which walked every
    leaf of it again (a tenth of a catalog search's time).
    """
    value, text = (value.value, value.text) if isinstance(value, Encoded) else (value, result_text(value))
    result = _dump(types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error))
    result["structuredContent"] = value if isinstance(value, dict) else {"result": value}
    return result


def call_tool(params: dict | None, bearer: Bearer) -> dict:
    """Unknown tools are protocol errors (-32602); bad arguments and refusals are results with isError."""
    try:
        request = types.CallToolRequestParams.model_validate(params or {})
    except ValidationError:
        raise RpcError(INVALID_PARAMS, "tools/call needs a tool name and an arguments object") from None
    tool = registry().get(request.name)
    if tool is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {request.name}")
    if not set(tool.scopes) <= bearer.scopes:
        raise NeedsScopes(tool.scopes)
    arguments = request.arguments or {}  # cleaned with the whole message (transport.parse)
    if errors := tool.argument_errors(arguments):
        mismatch = {"error": "the arguments do not match the tool's input schema", "errors": errors}
        return _tool_result(mismatch, is_error=True)
    try:
        value = tool.call(bearer.user, arguments)
    except ToolError as refused:
        answer = {"error": refused.message}
        if refused.errors:
            answer["errors"] = refused.errors
        return _tool_result(answer, is_error=True)
    except Exception:
        logger.exception("tool %s failed", tool.name)
        raise RpcError(INTERNAL_ERROR, "the tool failed on the server's side") from None
    return _tool_result(value)


HANDSHAKE_METHODS = {"initialize": initialize, "ping": ping, "tools/list": list_tools, "tools/call": call_tool}
MODERN_METHODS = {"server/discover": discover, "tools/list": list_tools, "tools/call": call_tool}


def answer(method: str, params: dict | None, bearer: Bearer, *, modern: bool) -> dict:
    """The result of one request, or RpcError / NeedsScopes."""
    handler = (MODERN_METHODS if modern else HANDSHAKE_METHODS).get(method)
    if handler is None:
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
    result = handler(params, bearer)
    if modern:
        result.setdefault("resultType", "complete")
        meta = result.setdefault("_meta", {})
        meta[SERVER_INFO_META_KEY] = SERVER_INFO.model_dump(mode="json", by_alias=True, exclude_none=True)
    return result
