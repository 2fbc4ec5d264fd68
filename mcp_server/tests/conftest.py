"""The OAuth server's fixtures (a user who may use MCP, a token of theirs), shared with these tests."""

from mcp_auth.tests.conftest import (
    agent,
    agent_user,
    approver,
    cursor_callback,
    mcp,
    modern_mcp,
    signed_in,
    token,
    tokens,
)

__all__ = ["agent", "agent_user", "approver", "cursor_callback", "mcp", "modern_mcp", "signed_in", "token", "tokens"]
