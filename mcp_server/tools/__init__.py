"""The MCP tools: one module per group, each exposing TOOLS, a tuple of Tool; this registry joins them.

A tool's function takes the signed-in user and its validated arguments and
returns a JSON value (the structured result), or an Encoded one it keeps. A ToolError is a result with
isError, which the agent reads and can correct itself from; anything else it
raises is a fault of ours (an MCP internal error).
"""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from jsonschema import Draft202012Validator

from automations.definition import json_path
from mcp_server.bearer import BUILDER_SCOPE, TOOLS_SCOPE


class ToolError(Exception):
    """A result the agent sees as a failed call: a message, and each error with its path when there are several."""

    def __init__(self, message: str, errors: list[dict] | None = None):
        super().__init__(message)
        self.message = message
        self.errors = errors or []


def result_text(value) -> str:
    """The JSON text of a tool's value, which its result carries beside the value for clients that read only text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class Encoded:
    """A tool's value with its JSON text, for an answer the tool keeps and gives again: the text is made once."""

    value: dict
    text: str

    @classmethod
    def of(cls, value: dict) -> "Encoded":
        return cls(value, result_text(value))


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict
    call: Callable
    read_only: bool
    destructive: bool = False
    idempotent: bool = False
    # Builder tools need both scopes: mcp:automation_builder does not imply mcp:tools (docs/mcp.md).
    scopes: tuple[str, ...] = (TOOLS_SCOPE,)
    validator: Draft202012Validator = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "validator", Draft202012Validator(self.input_schema))

    def argument_errors(self, arguments: dict) -> list[dict]:
        found = sorted(self.validator.iter_errors(arguments), key=lambda error: list(map(str, error.absolute_path)))
        return [{"path": json_path(error.absolute_path), "message": error.message} for error in found]


BUILDER_SCOPES = (TOOLS_SCOPE, BUILDER_SCOPE)


@cache
def registry() -> dict[str, Tool]:
    from mcp_server.tools import automations, builder, catalog, runs

    tools = [*catalog.TOOLS, *automations.TOOLS, *runs.TOOLS, *builder.TOOLS]
    return {tool.name: tool for tool in tools}
