-- POST one JSON-RPC message to /mcp, the same body each time (MCP_BODY); headers come with wrk's -H.
wrk.method = "POST"
wrk.body = os.getenv("MCP_BODY")
wrk.headers["Content-Type"] = "application/json"
