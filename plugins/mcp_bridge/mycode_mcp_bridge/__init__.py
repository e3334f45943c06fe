"""mycode-mcp-bridge: MCP servers as mycode tools.

Servers come from ``.mcp.json``, ``$MYCODE_HOME/mcp.json``, ``[mcp_servers.NAME]`` tables and
``--mcp-config``; their tools appear as ``mcp__<server>__<tool>``. See the README.

This module is imported at CLI start-up, so it imports nothing heavy: ``mcp`` is loaded on the
background thread, and only when servers are configured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mycode_core import hookimpl

if TYPE_CHECKING:
    import click

    from mycode_core.records import ContextSection, RunContext, SlashCommand, SlashResult, Tool

__version__ = "0.1.0"


@hookimpl
def register_tools(register: Callable[[Tool], None], context: RunContext) -> None:
    """Start the configured MCP servers in the background; their tools join at start-up.

    Returns at once. The tools are added to ``context.tools`` by a startup task, which the
    core runs before the first model request; a cleanup callable stops the servers.
    """
    from mycode_mcp_bridge.setup import start_for_run

    start_for_run(context)


@hookimpl
def build_context(context: RunContext) -> list[ContextSection] | None:
    """The running servers' own instructions, one heading per server (see :mod:`.instructions`)."""
    bridge = context.session_store.get("mcp_bridge")
    if bridge is None:
        return None
    from mycode_mcp_bridge.instructions import instruction_sections

    return instruction_sections(bridge)


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add ``mycode mcp`` (list, get, add, add-json, remove, approve)."""
    from mycode_mcp_bridge.cli import mcp_group

    cli.add_command(mcp_group())


@hookimpl
def register_slash_commands(register: Callable[[SlashCommand], None], context: RunContext) -> None:
    """``/mcp``: this session's MCP servers, their state and tools (why one is not ready); and
    each server's prompts as ``/mcp__<server>__<prompt> [args]``."""
    from mycode_core import SlashCommand

    register(
        SlashCommand(
            name="mcp",
            description="This session's MCP servers: state and tools",
            run=_mcp_status,
        )
    )
    bridge = context.session_store.get("mcp_bridge")
    if bridge is not None:  # its servers' prompts: /mcp__<server>__<prompt>
        from mycode_mcp_bridge.prompts import prompt_commands

        for command in prompt_commands(bridge, context):
            register(command)


def _mcp_status(arguments: str, context: RunContext) -> SlashResult:
    from mycode_core import SlashResult
    from mycode_mcp_bridge.cli import status_lines

    bridge = context.session_store.get("mcp_bridge")
    if bridge is None:
        return SlashResult(
            output="No MCP servers in this session. Add one with: mycode mcp add NAME -- COMMAND"
        )
    return SlashResult(output="\n".join(status_lines(bridge.status())))


@hookimpl
def register_settings(register: Callable[[str, type], None]) -> None:
    """Declare the ``[mcp]`` config table so the core validates it."""
    from mycode_mcp_bridge.settings import McpSettings

    register("mcp", McpSettings)
