"""mycode's built-in tools, workspace boundary and default permission policy.

Hooks: ``register_tools`` (the seven SPEC §3 tools), ``permission_verdict`` (the default
policy, ``trylast`` so any other plugin overrides it), ``tool_result_verdict`` (configuration
folders and ``.git`` a sandboxed command created below the workspace root taken back),
``session_end`` (the sandbox's ``/tmp`` of the session removed) and ``register_commands``
(``mycode doctor``).
Submodules are imported inside the hooks to keep start-up fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mycode_core import hookimpl

if TYPE_CHECKING:
    import click

    from mycode_core.records import PermissionVerdict, RunContext, Tool, ToolCall, ToolResult

__version__ = "0.1.0"


@hookimpl
def register_tools(register: Callable[[Tool], None], context: RunContext) -> None:
    """Register read_file, write_file, edit_file, glob, grep, run_command and todo_write."""
    from mycode_builtin_tools.sandbox import check_run
    from mycode_builtin_tools.tools import build_tools

    check_run(context)  # SPEC §8: sandbox = "on" without a sandbox is a configuration error
    for tool in build_tools():
        register(tool)


@hookimpl(trylast=True)
def permission_verdict(call: ToolCall, tool: Tool, context: RunContext) -> PermissionVerdict:
    """The default policy: workspace boundary, config rules, modes and command judgement."""
    from mycode_builtin_tools.permissions.policy import decide

    return decide(call, tool, context)


@hookimpl
def tool_result_verdict(
    call: ToolCall, tool: Tool | None, result: ToolResult, context: RunContext
) -> list[str] | None:
    """A ``.mycode/``, ``.claude/`` or ``.codex/`` a sandboxed command created at any depth
    (the root's the command itself takes back), and a ``.git`` below the root it created or
    changed, is taken back: what the change detection saw the call change says where, so
    nothing is walked."""
    if call.name != "run_command" or tool is None or tool.plugin != "builtin_tools":
        return None
    if result.metadata.get("sandboxed") is not True:
        return None
    with context.lock:
        seen = next((o for o in reversed(context.observations) if o.call_id == call.id), None)
    if seen is None or not seen.mutated:
        return None
    import uuid
    from pathlib import Path

    from mycode_builtin_tools.sandbox import take_back_created

    keep = Path(context.artifacts_dir) / "taken-back" / uuid.uuid4().hex[:10]
    changed = [rel for rel in seen.mutated if rel not in seen.created]
    root = Path(context.workspace).resolve()
    return take_back_created(root, seen.created, keep, changed) or None


@hookimpl
def session_end(reason: str, context: RunContext) -> None:
    """Remove the session's sandbox ``/tmp`` (what its commands left there)."""
    from mycode_builtin_tools.tools.run_command import drop_session_tmp

    drop_session_tmp(context.session_id)


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add ``mycode doctor``: ripgrep, sandbox, workspace and home, as JSON."""
    from mycode_builtin_tools.doctor import make_command

    cli.add_command(make_command())


@hookimpl
def register_settings(register: Callable[[str, type], None]) -> None:
    """Declare the ``[builtin_tools]`` config table so the core validates it."""
    from mycode_builtin_tools.settings import BuiltinToolsSettings

    register("builtin_tools", BuiltinToolsSettings)
