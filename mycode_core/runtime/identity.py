"""Tool identity (SPEC §7): which plugin's tool holds a name registered more than once.

A name registered by two plugins is a load error naming both. The tool of this repository's
plugins is kept unless ``[tools] replace = {NAME = "plugin"}`` chooses another; the losers are
kept as ``shadowed`` (``mycode tools`` shows them). Permission rules name tools, so they apply
to whichever tool ends up holding the name.
"""

from __future__ import annotations

from typing import Any

import pluggy

from mycode_core.records import DuplicateToolError, RunContext, Tool
from mycode_core.runtime.hookcalls import OnError

REPOSITORY_PACKAGES = frozenset(
    {
        "mycode_core",
        "mycode_batch",
        "mycode_builtin_tools",
        "mycode_claude_compat",
        "mycode_completion_gate",
        "mycode_context_engine",
        "mycode_mcp_bridge",
        "mycode_memory",
        "mycode_skills",
        "mycode_stagnation",
        "mycode_subagents",
    }
)
"""The import packages of this repository's plugins: their tools are the built-in ones."""


def is_repository_plugin(pm: pluggy.PluginManager, name: str | None) -> bool:
    """Whether plugin ``name`` is one of this repository's (by the package it lives in)."""
    plugin = pm.get_plugin(name) if name else None
    if plugin is None:
        return False
    module = getattr(plugin, "__name__", None) or type(plugin).__module__
    return str(module).split(".")[0] in REPOSITORY_PACKAGES


def replacements(settings: Any) -> dict[str, str]:
    """``[tools] replace``: tool name → the plugin chosen to hold it."""
    section = getattr(settings, "section", None)
    table = section("tools") if callable(section) else {}
    replace = table.get("replace") if isinstance(table, dict) else None
    return {str(k): str(v) for k, v in replace.items()} if isinstance(replace, dict) else {}


def settle(
    pm: pluggy.PluginManager, context: RunContext, pending: list[Tool], problem: OnError
) -> None:
    """Add ``pending`` (in registration order) to ``context.tools``, one tool per name."""
    by_name: dict[str, list[Tool]] = {}
    for tool in pending:
        same = by_name.setdefault(tool.name, [])
        same[:] = [t for t in same if t.plugin != tool.plugin]  # one plugin twice: the last
        same.append(tool)
    chosen = replacements(context.settings)
    for name, tools in by_name.items():
        winner = _winner(pm, name, tools, chosen.get(name), problem)
        context.tools.add(winner, replace=True)
        losers = [str(t.plugin) for t in tools if t is not winner]
        if losers:
            context.tools.shadowed[name] = losers


def _winner(
    pm: pluggy.PluginManager,
    name: str,
    tools: list[Tool],
    wanted: str | None,
    problem: OnError,
) -> Tool:
    plugins = [str(t.plugin) for t in tools]
    if wanted is not None and wanted in plugins:
        return tools[plugins.index(wanted)]
    if len(tools) == 1:
        if wanted is not None:
            message = f"[tools] replace: no plugin {wanted!r} registers tool {name!r}"
            problem(None, message, ValueError("unknown plugin in [tools] replace"))
        return tools[0]
    builtin = [t for t in tools if is_repository_plugin(pm, t.plugin)]
    winner = builtin[0] if builtin else tools[0]
    others = [p for p in plugins if p != winner.plugin]
    both = " and ".join(repr(p) for p in [str(winner.plugin), *others])
    message = (
        f"tool {name!r} registered by both {both}: {winner.plugin!r} keeps it "
        f'(choose with [tools] replace = {{{name} = "{others[0]}"}})'
    )
    problem(others[0], message, DuplicateToolError(message))
    return winner
