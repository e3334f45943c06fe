"""From configuration to a running :class:`~mycode_mcp_bridge.bridge.Bridge` for one run.

Reads every config source, applies trust (asking the user interactively, or skipping with one
notice in ``-p`` mode), then starts the servers in the background and queues the startup and
cleanup callables on the run context. Nothing here imports ``mcp``.
"""

from __future__ import annotations

from typing import Any

from mycode_core.events import NoticeEvent
from mycode_core.records import RunContext
from mycode_mcp_bridge import trust
from mycode_mcp_bridge.config import ServerSpec, load_servers

ALLOW_ONCE, ALLOW_ALWAYS, DENY = "allow", "allow always", "deny"


def _notice(context: RunContext, message: str, level: str = "warning") -> None:
    try:
        context.emit(NoticeEvent(level=level, message=message, source="mcp_bridge"))  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - a notice must never break the run
        pass


def _ask(context: RunContext, spec: ServerSpec) -> str | None:
    """Ask the user about one project server; ``None`` if asking is impossible."""
    if not context.interactive or not callable(context.ask):
        return None
    passes = "".join(f"\n  with {item}" for item in spec.passes())
    question = (
        f"The project's {spec.source} wants to start MCP server '{spec.name}': "
        f"{spec.describe()}{passes}\nAllow it?"
    )
    try:
        answer = context.ask(question, [ALLOW_ONCE, ALLOW_ALWAYS, DENY])
    except Exception:  # noqa: BLE001 - a failed prompt counts as "no answer"
        return None
    return str(answer).strip().lower() if answer is not None else None


def trusted_specs(context: RunContext, specs: list[ServerSpec]) -> list[ServerSpec]:
    """The servers allowed to start; asks or reports about unapproved project servers."""
    chosen: list[ServerSpec] = []
    skipped: list[str] = []
    for spec in specs:
        state = trust.status(context.home, context.workspace, context.settings, spec)
        if state in ("trusted", "approved"):
            chosen.append(spec)
            continue
        if state in ("denied", "rejected"):
            continue
        answer = _ask(context, spec)
        if answer is None:
            skipped.append(spec.name)
        elif answer.startswith(ALLOW_ONCE):
            if answer == ALLOW_ALWAYS:
                trust.remember(context.home, context.workspace, spec, trust.ALLOW)
            chosen.append(spec)
        else:
            trust.remember(context.home, context.workspace, spec, trust.DENY)
    if skipped:
        names = ", ".join(repr(n) for n in skipped)
        _notice(
            context,
            f"skipped project MCP server(s) {names}: not approved for this workspace. Approve "
            "them in an interactive session or with `mycode mcp approve`, or set "
            "`trust_project_servers = true` (or a list of names) under `[mcp]` in "
            "$MYCODE_HOME/config.toml or .mycode/config.local.toml.",
        )
    return chosen


def start_for_run(context: RunContext) -> Any:
    """Start this run's MCP servers in the background; returns the bridge (or ``None``)."""
    if context.session_store.get("mcp_bridge") is not None:
        return context.session_store["mcp_bridge"]  # already started for this session
    loaded = load_servers(context.workspace, context.home, context.settings)
    if loaded.fatal:  # a file the user named on the command line: a configuration error
        from mycode_core.api import SetupError

        raise SetupError(loaded.fatal[0])
    for problem in loaded.problems:
        _notice(context, f"MCP config: {problem}")
    specs = trusted_specs(context, list(loaded.servers.values()))
    for spec in specs:
        if spec.missing_vars:
            missing = ", ".join(spec.missing_vars)
            _notice(
                context, f"MCP server '{spec.name}': environment variable(s) not set: {missing}"
            )
    if not specs:
        return None
    from mycode_mcp_bridge.bridge import Bridge
    from mycode_mcp_bridge.tools import Options

    options = Options.from_section(trust.mcp_section(context.settings))
    bridge = Bridge(context, specs, options)
    bridge.start()
    context.startup_tasks.append(bridge.wait_and_register)
    context.cleanup.append(bridge.shutdown)
    context.session_store["mcp_bridge"] = bridge  # a subagent's hooks find it there too
    return bridge
