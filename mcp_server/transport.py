"""Streamable HTTP, stateless: one POSTed JSON-RPC message in, one JSON answer (or 202) out, in both eras.

No session ids and no server-to-client stream, so any process serves any
request. The era is chosen by the MCP-Protocol-Version header, as the
official SDK's session manager does: absent or a handshake-era version is
the handshake era; a 2026-07-28 version is the new era, whose envelope
(params._meta) and Mcp-Method / Mcp-Name headers are checked against the
body by the SDK's own classifier (mcp.shared.inbound); any other version is
refused with 400 and -32022 naming the versions served.

HTTP statuses of JSON-RPC errors: in the new era the SDK's table
(ERROR_CODE_HTTP_STATUS: 400 for parse, envelope, params, header and version
errors, 404 for an unknown method); in the handshake era 400 for a body that
is no single JSON-RPC message, 200 with the error otherwise, as that era's
transport answers.
"""

from collections.abc import Mapping

from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
)
from mcp_types import JSONRPCNotification, JSONRPCRequest, UnsupportedProtocolVersionErrorData
from mcp_types.jsonrpc import INVALID_REQUEST, PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from automations import jsonsafe
from edge.replies import Reply, json_reply
from mcp_server import protocol
from mcp_server.bearer import TOOLS_SCOPE, Bearer


def _error(request_id, code: int, message: str, data=None, *, status: int) -> Reply:
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json_reply(status, {"jsonrpc": "2.0", "id": request_id, "error": error})


def _handshake_status(code: int) -> int:
    return 400 if code in (PARSE_ERROR, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION) else 200


def _modern_status(code: int) -> int:
    return ERROR_CODE_HTTP_STATUS.get(code, 200)


def parse(body: bytes):
    """The JSON value of the body, or None: strict UTF-8, no NaN or Infinity, nested at most 200 levels. NUL and
    lone surrogates become U+FFFD everywhere in it, so that no answer echoes one (an id, a method's name) that a
    strict client's parser refuses (RFC 8259 8.2)."""
    try:
        return jsonsafe.clean(jsonsafe.loads(body.decode("utf-8")))
    except ValueError:  # UnicodeDecodeError is one
        return None


def unsupported_version(requested: str) -> Reply:
    data = UnsupportedProtocolVersionErrorData(supported=list(protocol.SERVED_VERSIONS), requested=requested)
    return _error(
        None, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data.model_dump(mode="json"), status=400
    )


def handle(*, body: bytes, headers: Mapping[str, str], bearer: Bearer) -> Reply:
    """Answer one POSTed message. headers: lower-case names. Every message needs mcp:tools (docs/mcp.md).

    Raises protocol.NeedsScopes when the token lacks a scope: answered 403 with insufficient_scope by the view.
    """
    if TOOLS_SCOPE not in bearer.scopes:
        raise protocol.NeedsScopes((TOOLS_SCOPE,))
    decoded = parse(body)
    if decoded is None:
        return _error(None, PARSE_ERROR, "Parse error", status=400)
    if isinstance(decoded, list):
        batch = "Batches are not supported: send one JSON-RPC message per POST"
        return _error(None, INVALID_REQUEST, batch, status=400)
    if not isinstance(decoded, dict):
        return _error(None, INVALID_REQUEST, "The body must be one JSON-RPC request or notification", status=400)
    version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
    if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS and version not in MODERN_PROTOCOL_VERSIONS:
        return unsupported_version(version)
    modern = version in MODERN_PROTOCOL_VERSIONS
    status_of = _modern_status if modern else _handshake_status
    if "id" not in decoded:  # JSON-RPC 2.0: a notification is a request without an id member
        try:
            JSONRPCNotification.model_validate(decoded)
        except ValidationError:
            return _error(None, INVALID_REQUEST, "Not a JSON-RPC notification", status=400)
        return Reply(202)  # nothing to act on: no session, no server-side state (notifications/initialized too)
    try:
        request = JSONRPCRequest.model_validate(decoded)
    except ValidationError:
        return _error(None, INVALID_REQUEST, "Not a JSON-RPC request", status=400)
    if modern:
        verdict = classify_inbound_request(decoded, headers=headers)
        if isinstance(verdict, InboundLadderRejection):
            return _error(request.id, verdict.code, verdict.message, verdict.data, status=status_of(verdict.code))
    try:
        result = protocol.answer(request.method, request.params, bearer, modern=modern)
    except protocol.RpcError as failed:
        return _error(request.id, failed.code, failed.message, failed.data, status=status_of(failed.code))
    return json_reply(200, {"jsonrpc": "2.0", "id": request.id, "result": result})
