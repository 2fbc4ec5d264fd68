"""The MCP server at MCP_URL: the bearer check, the JSON-RPC transport, the protocol and its tools.

Its tokens are the OAuth server's (mcp_auth/), which owns the models and
the "MCP Tools" permission; this package has no models of its own.
"""
