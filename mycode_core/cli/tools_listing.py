"""``mycode tools``: the tools a run in this workspace would offer, with the plugin of each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def offered_rows(
    workspace: Path,
    notice: Callable[[str], None],
    mcp_config_files: list[str] | None = None,
    plugin_dirs: list[str] | None = None,
) -> list[dict[str, Any]]:
    """:func:`tool_row` of each offered tool; a name other plugins also registered carries
    ``shadowed`` (those plugins, SPEC §7 "Tool identity")."""
    registry = offered_registry(workspace, notice, mcp_config_files, plugin_dirs)
    rows = []
    for tool in registry.all():
        row = tool_row(tool)
        if registry.shadowed.get(tool.name):
            row["shadowed"] = list(registry.shadowed[tool.name])
        rows.append(row)
    return rows


def offered_registry(
    workspace: Path,
    notice: Callable[[str], None],
    mcp_config_files: list[str] | None = None,
    plugin_dirs: list[str] | None = None,
) -> Any:
    """The :class:`~mycode_core.records.ToolRegistry` a run in ``workspace`` would have.

    Loads settings and plugins as a run does (``mcp_config_files`` as ``--mcp-config``,
    ``plugin_dirs`` as ``--plugin-dir``),
    calls ``register_tools``, runs the start-up tasks (tools of MCP servers) and then the
    cleanup callbacks. Raises ``ConfigError`` / ``PluginLoadError`` / ``SetupError`` for a
    configuration problem.
    """
    from mycode_core.config import home_dir, load_settings
    from mycode_core.plugins import get_plugin_manager
    from mycode_core.records import RunContext
    from mycode_core.runtime.setup import collect_tools

    home = home_dir()
    layer = {"mcp_config_files": mcp_config_files or None, "plugin_dirs": plugin_dirs or None}
    settings = load_settings(workspace, home, layer)
    pm = get_plugin_manager(workspace=workspace)

    def emit(event: Any) -> None:
        if getattr(event, "type", "") == "notice":
            notice(str(getattr(event, "message", "")))

    context = RunContext(
        workspace=workspace,
        home=home,
        settings=settings,
        session_id="tools-listing",
        emit=emit,
        plugin_manager=pm,
    )
    try:
        collect_tools(pm, context, notice)
        for task in context.startup_tasks:
            try:
                task()
            except Exception as exc:  # noqa: BLE001 - one failing start-up costs its tools only
                notice(f"start-up task failed: {type(exc).__name__}: {exc}")
        return context.tools
    finally:
        for task in context.cleanup:
            try:
                task()
            except Exception:  # noqa: BLE001, S110 - shutting down: nothing more to do
                pass


def tool_row(tool: Any) -> dict[str, Any]:
    """SPEC §2 form of a tool: ``name``, ``plugin``, ``description``, ``read_only``,
    ``parameters`` (the JSON schema)."""
    return {
        "name": tool.name,
        "plugin": tool.plugin,
        "description": tool.description,
        "read_only": tool.read_only,
        "parameters": tool.input_schema,
    }


def schema_summary(schema: dict[str, Any]) -> str:
    """The parameters of a schema on one line: required plain, optional with ``?``
    (``path, offset?, limit?``)."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    if not isinstance(properties, dict):
        return ""
    return ", ".join(name if name in required else f"{name}?" for name in properties)


def render_table(rows: list[dict[str, Any]]) -> str:
    """A readable table: name, plugin, read-only, parameters."""
    header = ("NAME", "PLUGIN", "READ-ONLY", "PARAMETERS")
    lines = [
        (
            str(row["name"]),
            str(row["plugin"] or "-"),
            "yes" if row["read_only"] else "no",
            schema_summary(row["parameters"]) or "-",
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(3)]

    def fmt(cells: tuple[str, str, str, str]) -> str:
        return "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(cells[:3])) + (
            "  " + cells[3]
        )

    out = [fmt(header), *(fmt(line) for line in lines)]
    out.append(f"{len(rows)} tool(s)")
    for row in rows:
        if row.get("shadowed"):
            losers = ", ".join(row["shadowed"])
            out.append(f"{row['name']}: {row['plugin']}'s tool is used; it shadows {losers}'s")
    return "\n".join(line.rstrip() for line in out)
