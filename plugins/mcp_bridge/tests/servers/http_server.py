"""An HTTP MCP server for the tests: ``python http_server.py PORT [sse]`` (default streamable)."""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations


def main() -> None:
    """Serve on 127.0.0.1:PORT at /mcp."""
    port = int(sys.argv[1])
    server = MCPServer("web", log_level="WARNING")

    @server.tool(description="The request headers the server saw.")
    def whoami(ctx: Context) -> str:
        headers = {k.lower(): v for k, v in (ctx.headers or {}).items()}
        return f"auth={headers.get('authorization', '-')} team={headers.get('x-team', '-')}"

    @server.tool(description="Add two numbers.", annotations=ToolAnnotations(read_only_hint=True))
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="End the server process in the middle of the call.")
    def die() -> str:
        os._exit(1)

    if sys.argv[2:] == ["sse"]:
        server.run("sse", host="127.0.0.1", port=port)
    else:
        server.run("streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
