"""``mycode mcp``: list, show, add, remove and approve MCP servers.

Scopes written by ``add`` / ``remove``: ``user`` = ``$MYCODE_HOME/mcp.json``, ``project`` =
``<workspace>/.mcp.json`` (shared with the team, needs approval), ``local`` =
``$MYCODE_HOME/mcp-local.json`` (this workspace only, private). Files are edited atomically.
Only ``click`` is imported at module level: this module is loaded when the CLI is built.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from mycode_mcp_bridge import trust
from mycode_mcp_bridge.config import (
    ConfigProblem,
    ServerSpec,
    load_servers,
    local_file,
    parse_server,
    project_file,
    read_json,
    user_file,
    workspace_key,
)
from mycode_mcp_bridge.files import update_json

EDITABLE_SCOPES = ("user", "project", "local")


def _home() -> Path:
    from mycode_core.config import home_dir

    return home_dir()


def _workspace(cwd: str | None) -> Path:
    if cwd is None:
        root = click.get_current_context().find_root()
        inherited = root.params.get("cwd") if root.params else None
        cwd = str(inherited) if inherited else None
    path = Path(cwd or ".").expanduser().resolve()
    if not path.is_dir():
        raise click.UsageError(f"--cwd: not a directory: {path}")
    return path


def _settings(workspace: Path, home: Path) -> Any:
    from mycode_core.config import ConfigError, load_settings

    try:
        return load_settings(workspace, home)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


def _scope_path(scope: str, workspace: Path, home: Path) -> Path:
    return {"user": user_file(home), "project": project_file(workspace), "local": local_file(home)}[
        scope
    ]


def _table(data: dict[str, Any], scope: str, workspace: Path) -> dict[str, Any]:
    """The ``mcpServers`` table of a scope's file (created in ``data`` if missing)."""
    if scope == "local":
        projects = data.setdefault("projects", {})
        data = projects.setdefault(workspace_key(workspace), {})
    table = data.setdefault("mcpServers", {})
    if not isinstance(table, dict):
        raise click.UsageError("'mcpServers' in the config file is not an object; fix it by hand")
    return table


def _pairs(values: tuple[str, ...], sep: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, found, rest = value.partition(sep)
        if not found or not key.strip():
            raise click.UsageError(f"{what} must look like KEY{sep}VALUE, got {value!r}")
        out[key.strip()] = rest.strip() if sep == ":" else rest
    return out


cwd_option = click.option(
    "--cwd", "cwd", default=None, help="Workspace folder (default: the current directory)."
)


@click.group("mcp")
def mcp_cli() -> None:
    """Manage MCP servers (list, get, add, add-json, remove, approve)."""


@mcp_cli.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@cwd_option
def list_cmd(as_json: bool, cwd: str | None) -> None:
    """Start the configured servers and list their status and tools."""
    workspace, home = _workspace(cwd), _home()
    settings = _settings(workspace, home)
    loaded = load_servers(workspace, home, settings)
    specs = list(loaded.servers.values())
    runnable = [
        s for s in specs if trust.status(home, workspace, settings, s) in ("trusted", "approved")
    ]
    rows_by_name: dict[str, dict[str, Any]] = {}
    if runnable:
        from mycode_core.records import RunContext
        from mycode_mcp_bridge.bridge import Bridge
        from mycode_mcp_bridge.tools import Options

        context = RunContext(
            workspace=workspace, home=home, settings=settings, session_id="mcp-list"
        )
        bridge = Bridge(context, runnable, Options.from_section(trust.mcp_section(settings)))
        try:
            bridge.start()
            bridge.wait_and_register()
            rows_by_name = {row["name"]: row for row in bridge.status()}
        finally:
            bridge.shutdown()
    rows = []
    for spec in sorted(specs, key=lambda s: s.name):
        row = rows_by_name.get(spec.name)
        if row is None:
            status = trust.status(home, workspace, settings, spec)
            row = {
                "name": spec.name,
                "scope": spec.scope,
                "source": spec.source,
                "transport": spec.transport,
                "target": spec.describe(),
                "status": status,
                "reason": _not_started(spec, status, workspace, settings),
                "tools": [],
                "exposed": [],
                "hidden": [],
                "left_out": [],
            }
        rows.append(row)
    if as_json:
        click.echo(json.dumps({"servers": rows, "problems": loaded.problems}, indent=2))
        return
    for problem in loaded.problems:
        click.echo(f"config problem: {problem}", err=True)
    if not rows:
        click.echo(
            "No MCP servers configured. Add one with: mycode mcp add NAME -- COMMAND ARGS..."
        )
        return
    for line in status_lines(rows):
        click.echo(line)


def _not_started(spec: ServerSpec, status: str, workspace: Path, settings: Any) -> str:
    """Why a project server was not started, and how to change that."""
    rejected = None if spec.trusted else trust.rejected_by(workspace, settings, spec.name)
    if rejected:
        return f"disabled by disabledMcpjsonServers in {rejected}"
    if status == "denied":
        return f"refused for this workspace (allow it with: mycode mcp approve {spec.name})"
    return "project server not approved for this workspace"


def status_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The servers' status rows (:meth:`Bridge.status`) as the lines ``mcp list`` and ``/mcp``
    show: where each comes from, then its tools, or why it is not ready (its stderr's tail)."""
    lines = []
    for row in rows:
        lines.append(f"{row['name']}  [{row['scope']}: {row['source']}]  {row['target']}")
        status = row["status"]
        if status == "ready":
            took = f" in {row['started_in']:.2f} s" if row.get("started_in") else ""
            tools = ", ".join(row["tools"]) or "no tools"
            lines.append(f"  ready{took} · {len(row['tools'])} tool(s): {tools}")
            if row.get("hidden"):
                hidden = ", ".join(row["hidden"])
                lines.append(f"  not offered (enabled_tools/disabled_tools): {hidden}")
            if row.get("left_out"):
                gaps = "; ".join(f"{t['name']} ({t['reason']})" for t in row["left_out"])
                lines.append(f"  left out, cannot be used: {gaps}")
        else:
            lines.append(f"  {status}: {row.get('reason') or ''}".rstrip())
            tail = row.get("stderr_tail")
            if tail:
                lines += [f"    | {line}" for line in tail.splitlines()[-5:]]
    return lines


@mcp_cli.command(
    "add", context_settings={"ignore_unknown_options": True, "help_option_names": ["-h", "--help"]}
)
@click.argument("name")
@click.argument("target", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--scope",
    "-s",
    type=click.Choice(EDITABLE_SCOPES),
    default="local",
    show_default=True,
    help="user: all workspaces; project: .mcp.json (shared); local: this workspace, private.",
)
@click.option(
    "--transport",
    "-t",
    type=click.Choice(["stdio", "http", "sse"]),
    default="stdio",
    show_default=True,
)
@click.option(
    "--env", "-e", "env", multiple=True, help="KEY=VALUE for a stdio server (repeatable)."
)
@click.option(
    "--header", "-H", "headers", multiple=True, help="'Name: value' for http (repeatable)."
)
@click.option("--startup-timeout", type=float, default=None, help="Seconds to wait for start-up.")
@click.option("--timeout", type=float, default=None, help="Seconds to wait for one tool call.")
@click.option("--force", is_flag=True, help="Replace a server of the same name in that scope.")
@cwd_option
def add_cmd(
    name: str,
    target: tuple[str, ...],
    scope: str,
    transport: str,
    env: tuple[str, ...],
    headers: tuple[str, ...],
    startup_timeout: float | None,
    timeout: float | None,
    force: bool,
    cwd: str | None,
) -> None:
    """Add an MCP server.

    \b
      mycode mcp add NAME -- COMMAND ARGS...     a stdio server
      mycode mcp add NAME --transport http URL   an HTTP server
    """
    workspace, home = _workspace(cwd), _home()
    if not target:
        raise click.UsageError("give the server's command (after --) or, for http, its URL")
    entry: dict[str, Any]
    if transport == "stdio":
        entry = {"command": target[0], "args": list(target[1:])}
        if env:
            entry["env"] = _pairs(env, "=", "--env")
        if headers:
            raise click.UsageError("--header applies to http/sse servers")
    else:
        if len(target) != 1:
            raise click.UsageError(f"a {transport} server takes exactly one URL")
        entry = {"type": transport, "url": target[0]}
        if headers:
            entry["headers"] = _pairs(headers, ":", "--header")
        if env:
            raise click.UsageError("--env applies to stdio servers")
    if startup_timeout is not None:
        entry["startup_timeout"] = startup_timeout
    if timeout is not None:
        entry["timeout"] = timeout
    _write_entry(name, entry, scope, force, workspace, home)


@mcp_cli.command("add-json")
@click.argument("name")
@click.argument("entry_json", metavar="JSON")
@click.option("--scope", "-s", type=click.Choice(EDITABLE_SCOPES), default="local")
@click.option("--force", is_flag=True, help="Replace a server of the same name in that scope.")
@cwd_option
def add_json_cmd(name: str, entry_json: str, scope: str, force: bool, cwd: str | None) -> None:
    """Add an MCP server from its JSON entry, as written in .mcp.json."""
    workspace, home = _workspace(cwd), _home()
    try:
        entry = json.loads(entry_json)
    except ValueError as exc:
        raise click.UsageError(f"the server entry is not valid JSON: {exc}") from None
    if not isinstance(entry, dict):
        raise click.UsageError("the server entry must be a JSON object")
    _write_entry(name, entry, scope, force, workspace, home)


def _write_entry(
    name: str, entry: dict[str, Any], scope: str, force: bool, workspace: Path, home: Path
) -> None:
    """Check ``entry`` and write it under ``name`` to the scope's file, atomically."""
    path = _scope_path(scope, workspace, home)
    try:
        spec = parse_server(name, entry, scope, str(path))  # type: ignore[arg-type]
    except ConfigProblem as exc:
        raise click.UsageError(str(exc)) from None

    def change(data: dict[str, Any]) -> None:
        table = _table(data, scope, workspace)
        if name in table and not force:
            raise click.UsageError(
                f"a server named {name!r} already exists in {path} ({scope}); "
                "use --force to replace it"
            )
        table[name] = entry

    try:
        update_json(path, change)
    except ConfigProblem as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"Added MCP server {name!r} ({spec.transport}) to {scope} config: {path}")
    if scope == "project":
        click.echo("Project servers start only once approved (see `mycode mcp approve`).")


@mcp_cli.command("remove")
@click.argument("name")
@click.option("--scope", "-s", type=click.Choice(EDITABLE_SCOPES), default=None)
@cwd_option
def remove_cmd(name: str, scope: str | None, cwd: str | None) -> None:
    """Remove a server from a config file (the only scope that has it, or --scope)."""
    workspace, home = _workspace(cwd), _home()
    scopes = [scope] if scope else list(EDITABLE_SCOPES)
    found = []
    for candidate in scopes:
        path = _scope_path(candidate, workspace, home)
        try:
            data = read_json(path)
        except ConfigProblem as exc:
            raise click.UsageError(str(exc)) from None
        if name in _table(data, candidate, workspace):
            found.append(candidate)
    if not found:
        where = scope or "user, project or local"
        raise click.UsageError(
            f"no MCP server named {name!r} in the {where} config "
            "(servers from config.toml or --mcp-config are edited by hand)"
        )
    if len(found) > 1:
        raise click.UsageError(
            f"{name!r} is defined in several scopes ({', '.join(found)}); choose one with --scope"
        )
    path = _scope_path(found[0], workspace, home)

    def change(data: dict[str, Any]) -> None:
        _table(data, found[0], workspace).pop(name, None)
        if found[0] == "local":
            projects = data.get("projects") or {}
            key = workspace_key(workspace)
            if not (projects.get(key) or {}).get("mcpServers"):
                projects.pop(key, None)

    update_json(path, change)
    click.echo(f"Removed MCP server {name!r} from {found[0]} config: {path}")


@mcp_cli.command("get")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@cwd_option
def get_cmd(name: str, as_json: bool, cwd: str | None) -> None:
    """Show one server's entry, where it comes from and whether it may start (not started)."""
    workspace, home = _workspace(cwd), _home()
    settings = _settings(workspace, home)
    spec = load_servers(workspace, home, settings).servers.get(name)
    if spec is None:
        raise click.UsageError(f"no MCP server named {name!r} (see `mycode mcp list`)")
    status = trust.status(home, workspace, settings, spec)
    if as_json:
        keys = ("name", "scope", "source", "transport")
        data = {key: getattr(spec, key) for key in keys}
        click.echo(json.dumps({**data, "status": status, "entry": spec.raw}, indent=2))
        return
    click.echo(f"{spec.name}  [{spec.scope}: {spec.source}]  {spec.describe()}")
    for item in spec.passes():
        click.echo(f"  with {item}")
    reason = (
        "" if status in ("trusted", "approved") else _not_started(spec, status, workspace, settings)
    )
    click.echo(f"  {status}" + (f": {reason}" if reason else ""))


@mcp_cli.command("approve")
@click.argument("names", nargs=-1)
@click.option("--deny", is_flag=True, help="Remember a refusal instead.")
@click.option("--reset", is_flag=True, help="Forget every decision for this workspace.")
@cwd_option
def approve_cmd(names: tuple[str, ...], deny: bool, reset: bool, cwd: str | None) -> None:
    """Approve this workspace's project servers (all of them, or NAMES) so they may start."""
    workspace, home = _workspace(cwd), _home()
    if reset:
        trust.forget(home, workspace)
        click.echo(f"Forgot every MCP approval for {workspace}")
        return
    settings = _settings(workspace, home)
    loaded = load_servers(workspace, home, settings)
    project = {n: s for n, s in loaded.servers.items() if not s.trusted}
    unknown = [n for n in names if n not in project]
    if unknown:
        raise click.UsageError(f"no project MCP server named {', '.join(map(repr, unknown))}")
    chosen = [project[n] for n in names] if names else list(project.values())
    if not chosen:
        click.echo("This workspace has no project MCP servers.")
        return
    for spec in chosen:
        trust.remember(home, workspace, spec, trust.DENY if deny else trust.ALLOW)
        verb = "Denied" if deny else "Approved"
        click.echo(f"{verb} {spec.name!r}: {spec.describe()}")
        for item in spec.passes():
            click.echo(f"  with {item}")
        rejected = trust.rejected_by(workspace, settings, spec.name)
        if rejected and not deny:
            click.echo(f"  (it stays disabled: disabledMcpjsonServers in {rejected} names it)")


def mcp_group() -> click.Group:
    """The ``mcp`` command group (added by ``register_commands``)."""
    return mcp_cli


if __name__ == "__main__":  # pragma: no cover
    mcp_cli(sys.argv[1:])
