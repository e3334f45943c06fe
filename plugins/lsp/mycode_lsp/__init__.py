"""mycode-lsp: language servers as the ``lsp`` tool, and their diagnostics after each edit.

Servers come from ``[lsp.servers.NAME]`` in the config and from other plugins through the hook
``register_lsp_servers`` (the Claude Code plugin folders' ``lspServers`` among them). They run
only in a trusted workspace — a language server reads, and some build, the project's code — and
start on first use. This module imports nothing heavy; see the README.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mycode_core import hookimpl

if TYPE_CHECKING:
    from mycode_core.records import RunContext, Tool, ToolCall, ToolResult

__version__ = "0.1.0"


@hookimpl
def add_hookspecs(pluginmanager: Any) -> None:
    """Add ``register_lsp_servers`` (see :mod:`mycode_lsp.hookspecs`)."""
    from mycode_lsp import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def register_settings(register: Callable[[str, type], None]) -> None:
    """Declare the ``[lsp]`` config table so the core validates it."""
    from mycode_lsp.settings import LspSettings

    register("lsp", LspSettings)


@hookimpl
def register_tools(register: Callable[[Tool], None], context: RunContext) -> None:
    """The ``lsp`` tool, when language servers are configured and the workspace is trusted
    (with none, nothing more is imported: a run without servers pays for nothing)."""
    entries = server_entries(context)
    if entries:
        from mycode_lsp.run import start_for_run

        start_for_run(register, context, entries)


def server_entries(context: RunContext) -> list[tuple[str, Any, str]]:
    """``(name, entry, source)`` of every configured server: ``[lsp.servers]`` first, then what
    plugins contribute through ``register_lsp_servers`` (a failing contributor is one entry
    ``("", exception, "register_lsp_servers")``, reported by the run)."""
    section = context.settings.section("lsp")
    servers = section.get("servers") if isinstance(section, dict) else section.servers
    found = [(str(name), entry, "config") for name, entry in (servers or {}).items()]
    if context.plugin_manager is not None:

        def add(name: str, entry: Any, plugin: str | None = None) -> None:
            found.append((str(name), entry, f"plugin:{plugin}" if plugin else "plugin"))

        try:
            context.hook.register_lsp_servers(register=add, context=context)
        except Exception as exc:  # noqa: BLE001 - a broken contributor must not stop the run
            found.append(("", exc, "register_lsp_servers"))
    return found


@hookimpl
def transform_tool_result(
    call: ToolCall, tool: Tool | None, result: ToolResult, context: RunContext
) -> ToolResult | None:
    """After a tool wrote a file a language server serves: its errors and warnings (and the
    first time a call names a file of a server that is not installed: one notice)."""
    from mycode_lsp.session import session_of

    if session_of(context) is None:  # no servers in this session (nor in a subagent's)
        return None
    from mycode_lsp.run import tell_missing, with_diagnostics

    tell_missing(call, tool, context)
    return with_diagnostics(call, tool, result, context)
