"""``list_mcp_resources`` and ``read_mcp_resource``: the resources MCP servers offer.

A server names files, documents or records by URI (its ``resources/list`` and resource
templates); a tool's result may link to one (``resource link: NAME <URI>``). These two tools
let the model find and read them, as Claude Code's and Codex's do. They are offered when a
running server has a resource or a template (asked at start-up, before the first request),
are read-only, and a ``file://`` URI outside the workspace asks first, like a path argument of
any MCP tool (:mod:`.outside`).
"""

from __future__ import annotations

from typing import Any

from mycode_core.records import CallApproval, RunContext, Tool, ToolResult
from mycode_mcp_bridge import outside
from mycode_mcp_bridge.results import to_tool_result
from mycode_mcp_bridge.tools import PLUGIN

LIST_TOOL, READ_TOOL = "list_mcp_resources", "read_mcp_resource"
MAX_LISTED = 200
"""Resources (and as many templates) listed per server at the most."""


def resource_tools(bridge: Any) -> list[Tool]:
    """The two tools, bound to ``bridge`` (a :class:`~mycode_mcp_bridge.bridge.Bridge`)."""

    def list_handler(arguments: dict[str, Any], context: RunContext) -> ToolResult:
        return _list(bridge, str(arguments.get("server") or ""), context)

    def read_handler(arguments: dict[str, Any], context: RunContext) -> ToolResult:
        return _read(bridge, str(arguments["server"]), str(arguments["uri"]), context)

    def read_approval(arguments: dict[str, Any], context: Any) -> CallApproval | None:
        uri, server = str(arguments.get("uri") or ""), str(arguments.get("server") or "")
        connection = bridge.connections.get(server)
        path = outside.file_uri_path(uri)
        if path is None or connection is None:
            return None
        judge = outside.approval_for(server, outside.trusts_paths(connection.spec))
        return judge({"path": path}, context)  # type: ignore[no-any-return]

    server_property = {"type": "string", "description": "The MCP server's name."}
    traits: dict[str, Any] = {
        "read_only": True,
        "concurrency_safe": True,
        "risk": "low",
        "plugin": PLUGIN,
    }
    return [
        Tool(
            name=LIST_TOOL,
            description=(
                "List the resources (files, documents, records) the MCP servers of this "
                "session offer, and their URI templates: server, name, URI, type. Read one "
                f"with {READ_TOOL}."
            ),
            input_schema={
                "type": "object",
                "properties": {"server": {**server_property, "description": "Only this server."}},
            },
            handler=list_handler,
            **traits,
        ),
        Tool(
            name=READ_TOOL,
            description=(
                "Read one resource of an MCP server by its URI (from "
                f"{LIST_TOOL}, a URI template filled in, or a resource link in a tool's result)."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "server": server_property,
                    "uri": {"type": "string", "description": "The resource's URI."},
                },
                "required": ["server", "uri"],
            },
            handler=read_handler,
            approval_for=read_approval,
            **traits,
        ),
    ]


def _offering(bridge: Any) -> list[str]:
    return sorted(
        name
        for name, connection in bridge.connections.items()
        if connection.state == "ready" and connection.offers("resources")
    )


def _unknown(bridge: Any, server: str) -> ToolResult | None:
    if server in _offering(bridge):
        return None
    known = ", ".join(sorted(bridge.with_resources)) or "none"
    return ToolResult.error(f"No MCP server {server!r} offers resources here (servers: {known}).")


async def _everything(session: Any) -> tuple[list[Any], list[Any], bool]:
    """Every page of ``resources/list`` and ``resources/templates/list`` (up to
    :data:`MAX_LISTED` each), and whether more were left out."""
    from mcp.shared.exceptions import MCPError

    from mycode_mcp_bridge.connection import all_pages

    resources, more = await all_pages(session.list_resources, "resources", MAX_LISTED)
    try:
        ask = session.list_resource_templates
        templates, more_templates = await all_pages(ask, "resource_templates", MAX_LISTED)
    except MCPError:  # a server may offer resources without templates
        templates, more_templates = [], False
    return resources, templates, more or more_templates


async def has_resources(session: Any) -> bool:
    """Whether the first page of resources, or of templates, names one."""
    from mcp.shared.exceptions import MCPError

    if (await session.list_resources()).resources:
        return True
    try:
        return bool((await session.list_resource_templates()).resource_templates)
    except MCPError:
        return False


def _line(server: str, item: Any, template: bool = False) -> str:
    uri = item.uri_template if template else item.uri
    line = f"{server}: {'template ' if template else ''}{item.title or item.name} <{uri}>"
    if item.mime_type:
        line += f" ({item.mime_type})"
    if item.description:
        line += f" — {' '.join(item.description.split())}"
    return line


def _list(bridge: Any, server: str, context: RunContext) -> ToolResult:
    from mycode_mcp_bridge.connection import ServerError

    if server and (problem := _unknown(bridge, server)) is not None:
        return problem
    lines: list[str] = []
    for name in [server] if server else _offering(bridge):
        try:
            resources, templates, more = bridge.request(name, _everything, context)
        except ServerError as exc:
            lines.append(f"{name}: its resources could not be listed ({exc.message})")
            continue
        lines += [_line(name, item) for item in resources]
        lines += [_line(name, item, template=True) for item in templates]
        if more:
            lines.append(f"{name}: … more than {MAX_LISTED} of them, the rest not listed")
    return ToolResult(content="\n".join(lines) or "The MCP servers here offer no resources.")


def _read(bridge: Any, server: str, uri: str, context: RunContext) -> ToolResult:
    from mycode_mcp_bridge.connection import ServerError

    if (problem := _unknown(bridge, server)) is not None:
        return problem
    try:
        result = bridge.request(server, lambda session: session.read_resource(uri), context)
    except ServerError as exc:
        return ToolResult.error(f"MCP server {server!r} could not read {uri}: {exc.message}")
    blocks = [{"type": "resource", "resource": item} for item in result.contents]
    if not blocks:
        return ToolResult(content=f"{uri} is empty.")
    return to_tool_result(
        {"content": blocks},
        context=context,
        label=READ_TOOL,
        max_chars=bridge.options.max_output_chars,
        server=server,
        tool="resources/read",
    )
