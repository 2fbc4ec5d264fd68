"""Streamable HTTP on /mcp through HTTP: stateless POSTs in both eras, and every way a message is refused."""

import json

import pytest
from django.conf import settings
from mcp_types.jsonrpc import HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from mcp_auth.tests.conftest import modern_meta

pytestmark = pytest.mark.django_db

INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "test-client", "version": "1.0"},
}


def error_of(response) -> dict:
    return response.json()["error"]


# --- the handshake era ------------------------------------------------------


def test_initialize_agrees_on_the_clients_version_and_sets_no_session(mcp):
    response = mcp.request("initialize", INITIALIZE)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert "Mcp-Session-Id" not in response
    result = response.json()["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert result["serverInfo"]["name"] == "flowgate"


def test_initialize_with_a_version_it_does_not_speak_gets_its_newest(mcp):
    result = mcp.request("initialize", {**INITIALIZE, "protocolVersion": "1999-01-01"}).json()["result"]
    assert result["protocolVersion"] == LATEST_HANDSHAKE_VERSION


def test_initialize_without_its_params_is_invalid_params(mcp):
    response = mcp.request("initialize", {"protocolVersion": "2025-06-18"})
    assert response.status_code == 200
    assert error_of(response)["code"] == INVALID_PARAMS


def test_notifications_get_202_with_no_body(mcp):
    response = mcp.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert response.status_code == 202
    assert response.content == b""


def test_ping_answers_an_empty_result(mcp):
    response = mcp.request("ping")
    assert response.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_tools_list_describes_each_tool(mcp):
    tools = mcp.request("tools/list").json()["result"]["tools"]
    names = {tool["name"] for tool in tools}
    assert names == {
        "search_apps",
        "list_automations",
        "get_automation",
        "list_runs",
        "run_automation",
        "get_run_status",
        "turn_on_automation",
        "turn_off_automation",
        "create_automation",
        "update_automation",
        "list_connections",
    }
    for tool in tools:
        assert tool["title"] and tool["description"]
        assert tool["inputSchema"]["type"] == "object"
        assert "readOnlyHint" in tool["annotations"]
        if not tool["annotations"]["readOnlyHint"]:
            assert "destructiveHint" in tool["annotations"]


def test_any_process_answers_any_request_without_a_handshake(mcp):
    """Stateless: tools/list straight away, with no initialize before it."""
    assert mcp.request("tools/list").status_code == 200


def test_an_unknown_method_is_method_not_found(mcp):
    response = mcp.request("resources/list")
    assert response.status_code == 200
    assert error_of(response)["code"] == METHOD_NOT_FOUND


def test_server_discover_is_not_a_handshake_era_method(mcp):
    assert error_of(mcp.request("server/discover"))["code"] == METHOD_NOT_FOUND


@pytest.mark.parametrize("version", ["2099-01-01", "1.0", "", "2025-06-18, 2025-06-18"])
def test_an_unsupported_protocol_version_header_gets_400(mcp, version):
    response = mcp.request("tools/list", **{"MCP-Protocol-Version": version})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32022
    assert LATEST_MODERN_VERSION in error["data"]["supported"]
    assert LATEST_HANDSHAKE_VERSION in error["data"]["supported"]


# --- the 2026-07-28 era -----------------------------------------------------


def test_server_discover_lists_the_versions_and_caching(modern_mcp):
    response = modern_mcp.request("server/discover")
    assert response.status_code == 200
    result = response.json()["result"]
    assert LATEST_MODERN_VERSION in result["supportedVersions"]
    assert "2025-06-18" in result["supportedVersions"]
    assert result["resultType"] == "complete"
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert result["ttlMs"] > 0 and result["cacheScope"] in ("public", "private")


def test_every_modern_result_carries_result_type_and_list_results_their_caching(modern_mcp):
    listed = modern_mcp.request("tools/list").json()["result"]
    assert listed["resultType"] == "complete"
    assert listed["ttlMs"] > 0 and listed["cacheScope"] == "public"
    called = modern_mcp.call("list_automations")
    assert called["resultType"] == "complete"
    assert called["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "flowgate"


@pytest.mark.parametrize("method", ["initialize", "ping", "resources/list"])
def test_methods_outside_the_modern_era_are_method_not_found(modern_mcp, method):
    response = modern_mcp.request(method, {"name": "x"} if method == "initialize" else None)
    assert response.status_code == 404  # the SDK's status for -32601 in this era
    assert error_of(response)["code"] == METHOD_NOT_FOUND


def test_a_mcp_method_header_unlike_the_body_is_a_header_mismatch(modern_mcp):
    response = modern_mcp.request("tools/list", **{"Mcp-Method": "tools/call"})
    assert response.status_code == 400
    assert error_of(response)["code"] == HEADER_MISMATCH


def test_a_missing_mcp_method_header_is_a_header_mismatch(modern_mcp):
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": modern_meta()}}
    headers = modern_mcp.headers()
    response = modern_mcp.post(message, headers)
    assert response.status_code == 400
    assert error_of(response)["code"] == HEADER_MISMATCH
    assert response.json()["id"] == 7


def test_a_mcp_name_header_unlike_the_tool_called_is_a_header_mismatch(modern_mcp):
    response = modern_mcp.request(
        "tools/call", {"name": "list_automations", "arguments": {}}, **{"Mcp-Name": "search_apps"}
    )
    assert response.status_code == 400
    assert error_of(response)["code"] == HEADER_MISMATCH


def test_a_body_version_unlike_the_header_is_a_header_mismatch(modern_mcp):
    meta = {**modern_meta(), "io.modelcontextprotocol/protocolVersion": "2025-06-18"}
    response = modern_mcp.request("tools/list", {"_meta": meta})
    assert response.status_code == 400
    assert error_of(response)["code"] == HEADER_MISMATCH


def test_a_modern_request_without_its_envelope_is_invalid_params(modern_mcp):
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = modern_mcp.post(message, modern_mcp.headers("tools/list"))
    assert response.status_code == 400
    assert error_of(response)["code"] == INVALID_PARAMS


# --- refused whatever the era ----------------------------------------------


@pytest.mark.parametrize("method", ["get", "delete", "put", "patch"])
def test_only_post_is_served(client, mcp, method):
    response = getattr(client, method)("/mcp", headers=mcp.headers())
    assert response.status_code == 405
    assert "POST" in response["Allow"]


def test_a_get_without_a_token_is_asked_for_one_first(client):
    assert client.get("/mcp").status_code == 401


def test_batches_are_refused(mcp):
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    response = mcp.post(batch)
    assert response.status_code == 400
    assert error_of(response)["code"] == INVALID_REQUEST
    assert "atch" in error_of(response)["message"]


@pytest.mark.parametrize(
    "body",
    [b"", b"{", b"not json", b"\xff\xfe{}", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": NaN}'],
)
def test_a_body_that_is_not_json_is_a_parse_error(mcp, body):
    response = mcp.post(body)
    assert response.status_code == 400
    assert error_of(response)["code"] == PARSE_ERROR
    assert response.json()["id"] is None


@pytest.mark.parametrize(
    "message",
    [
        b'"just a string"',
        42,
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 3},
        {"jsonrpc": "2.0", "id": 1, "result": {}},  # a response: this server asks nothing of clients
    ],
)
def test_a_message_that_is_no_request_is_an_invalid_request(mcp, message):
    response = mcp.post(message)
    assert response.status_code == 400
    assert error_of(response)["code"] == INVALID_REQUEST


def test_a_foreign_origin_is_refused_before_anything_else(mcp):
    response = mcp.request("tools/list", Origin="http://attacker.example")
    assert response.status_code == 403
    assert "Access-Control-Allow-Origin" not in response


def test_a_listed_origin_is_served_with_cors(mcp, settings):
    settings.MCP_ALLOWED_ORIGINS = ["http://agent.example"]
    response = mcp.request("tools/list", Origin="http://agent.example")
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "http://agent.example"
    preflight = mcp.client.options("/mcp", headers={"Origin": "http://agent.example"})
    assert preflight.status_code == 204
    assert "Authorization" in preflight["Access-Control-Allow-Headers"]


def test_requests_without_an_origin_are_not_browsers_and_pass(mcp):
    assert mcp.request("tools/list").status_code == 200


def test_there_is_no_redirect_from_mcp_to_mcp_slash(client, mcp):
    response = client.post("/mcp/", data="{}", content_type="application/json", headers=mcp.headers())
    assert response.status_code == 404
    assert "Location" not in response


def test_huge_and_string_ids_are_echoed(mcp):
    for request_id in (10**300, "an id"):
        response = mcp.post({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        assert response.status_code == 200
        assert json.loads(response.content)["id"] == request_id


@pytest.mark.parametrize("field", ["id", "method"])
def test_no_answer_echoes_a_lone_surrogate_or_nul_that_a_strict_parser_refuses(mcp, field):
    message = {"jsonrpc": "2.0", "id": "an id", "method": "tools/list"}
    message[field] += "\ud800\x00"
    answer = mcp.post(message)
    assert b"\\ud800" not in answer.content and b"\\u0000" not in answer.content
    document = json.loads(answer.content)
    assert "\ufffd\ufffd" in (document["id"] if field == "id" else document["error"]["message"])


def test_answers_are_never_cached(mcp):
    assert mcp.request("tools/list")["Cache-Control"] == "no-store"


def test_the_mcp_url_defaults_to_its_own_origin_only():
    assert settings.MCP_ALLOWED_ORIGINS == [settings.MCP_URL]
