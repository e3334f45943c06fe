"""Core subcommands: ``plugins``, ``tools``, ``sessions``, ``demo``.

Imports beyond click happen inside the commands: this module is loaded by ``mycode --help``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from mycode_core.cli.options import mcp_config_option, mcp_config_values, plugin_dir_option


class PluginConfigError(click.ClickException):
    """A plugin failed to load in strict mode: a configuration error (exit code 2), shown as
    one ``mycode: error:`` line like the run's."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"mycode: error: {self.format_message()}", err=True)


class PluginsGroup(click.Group):
    """``mycode plugins``: the listing, plus the subcommands plugins add to it.

    A plugin adds ``mycode plugins VERB`` from its ``register_commands(cli)`` hook with
    ``cli.commands["plugins"].add_command(...)``. ``plugins`` is a core command (run without
    importing plugins), so an unknown VERB loads the plugins once and looks again.
    """

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The subcommand ``cmd_name``, loading plugin subcommands when it is not a core one."""
        found = super().get_command(ctx, cmd_name)
        if found is None and self._add_plugin_commands(ctx):
            found = super().get_command(ctx, cmd_name)
        return found

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every subcommand, the plugins' included (``mycode plugins --help`` lists them)."""
        self._add_plugin_commands(ctx)
        return super().list_commands(ctx)

    @staticmethod
    def _add_plugin_commands(ctx: click.Context) -> bool:
        """Load the plugins' commands once; ``False`` when they were loaded already."""
        root = ctx.find_root().command
        from mycode_core.cli.plugin_commands import PluginCommandGroup, add_plugin_commands

        if not isinstance(root, PluginCommandGroup) or root.plugin_manager is not None:
            return False
        from mycode_core.plugins import PluginLoadError, get_plugin_manager

        try:
            pm = get_plugin_manager()
        except PluginLoadError as exc:
            raise PluginConfigError(str(exc)) from None

        def notice(message: str) -> None:
            click.echo(f"mycode: {message}", err=True)

        add_plugin_commands(root, pm, notice)
        return True


def add_core_commands(cli: click.Group) -> None:
    """Attach the core subcommands to ``cli``."""
    from mycode_core.cli.trust_command import make_command as make_trust_command

    cli.add_command(make_trust_command())

    @cli.group(name="plugins", cls=PluginsGroup, invoke_without_command=True)
    @click.option("--all", "include_all", is_flag=True, help="Include the built-in plugins.")
    @click.option("--hook", "hook_name", help="Only plugins implementing this hook.")
    @click.option(
        "--check",
        is_flag=True,
        help="Also show what failed and why (with tracebacks) and what each plugin "
        "contributes; exit 1 if anything failed.",
    )
    @plugin_dir_option("Also describe this plugin folder (as a run with --plugin-dir would).")
    @click.option("--cwd", type=click.Path(file_okay=False), help="Workspace (default: here).")
    @click.option(
        "--json", "as_json", is_flag=True, help="JSON output (the default, as `tools --json`)."
    )
    @click.pass_context
    def plugins_command(
        ctx: click.Context,
        include_all: bool,
        hook_name: str | None,
        check: bool,
        plugin_dirs: tuple[str, ...],
        cwd: str | None,
        as_json: bool,
    ) -> None:
        """List installed plugins as JSON: name, distribution, version, hooks."""
        from pathlib import Path

        from mycode_core.cli.plugin_rows import describe_plugins
        from mycode_core.plugins import PluginLoadError, get_plugin_manager

        if ctx.invoked_subcommand is not None:
            return

        if check:
            _check_plugins(include_all, hook_name, plugin_dirs, cwd)
            return
        try:
            pm = get_plugin_manager(workspace=Path(cwd or os.getcwd()).resolve())
        except PluginLoadError as exc:
            raise PluginConfigError(str(exc)) from None
        if hook_name is not None and not hasattr(pm.hook, hook_name):
            raise click.BadParameter(f"no hook named {hook_name!r}", param_hint="--hook")
        rows = describe_plugins(pm, include_builtins=include_all or hook_name is not None)
        if hook_name is not None:
            rows = [row for row in rows if hook_name in row["hooks"]]
        _add_plugin_details(pm, rows, plugin_dirs, cwd)
        if hook_name is None:
            rows += failed_plugin_rows(pm)
        click.echo(json.dumps(rows, indent=2))

    from mycode_core.cli.sessions_cmd import sessions_group

    cli.add_command(sessions_group())

    @cli.command(name="tools")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.option(
        "--cwd",
        type=click.Path(file_okay=False, exists=True),
        help="Workspace (default: current directory).",
    )
    @mcp_config_option("MCP servers: a file or inline JSON (.mcp.json shape), as for a run.")
    @plugin_dir_option()
    def tools_command(
        as_json: bool, cwd: str | None, mcp_config: tuple[str, ...], plugin_dirs: tuple[str, ...]
    ) -> None:
        """List the tools a run would offer, with the plugin of each."""
        from mycode_core.cli.tools_listing import offered_rows, render_table
        from mycode_core.config import ConfigError
        from mycode_core.errors import SetupError
        from mycode_core.plugins import PluginLoadError

        def notice(message: str) -> None:
            click.echo(f"mycode: {message}", err=True)

        from pathlib import Path

        workspace = Path(cwd or os.getcwd()).resolve()
        try:
            files = mcp_config_values(mcp_config)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        try:
            folders = [str(Path(path).expanduser().resolve()) for path in plugin_dirs]
            rows = offered_rows(workspace, notice, files, folders)
        except (ConfigError, PluginLoadError, SetupError) as exc:
            raise PluginConfigError(str(exc)) from None
        click.echo(json.dumps(rows, indent=2) if as_json else render_table(rows))

    @cli.command(name="demo")
    @click.option("--keep", is_flag=True, help="Keep the temporary project folder.")
    def demo_command(keep: bool) -> None:
        """Watch mycode fix a bug in a small example project, offline."""
        from mycode_core.cli.demo import run_demo

        sys.exit(run_demo(keep=keep))


def failed_plugin_rows(pm: Any) -> list[dict[str, Any]]:
    """``mycode plugins`` rows of the plugins that failed to load: ``loaded: false`` and the
    error (one line; the traceback is in ``plugins --check``)."""
    from mycode_core.cli.plugin_rows import failed_row
    from mycode_core.plugins import load_report

    return [
        {**failed_row(error), "error": error.message, "error_type": error.error_type}
        for error in load_report(pm).errors
    ]


def _check_plugins(
    include_all: bool, hook_name: str | None, plugin_dirs: tuple[str, ...], cwd: str | None
) -> None:
    from pathlib import Path

    from mycode_core.cli.plugin_check import check_plugins, slow_imports

    def details(pm: Any, rows: list[dict[str, Any]]) -> None:
        _add_plugin_details(pm, rows, plugin_dirs, cwd)

    try:
        rows, problems = check_plugins(
            include_builtins=include_all,
            hook_name=hook_name,
            extend=details,
            workspace=Path(cwd or os.getcwd()).resolve(),
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--hook") from None
    click.echo(json.dumps(rows, indent=2))
    for line in problems:
        click.echo(f"mycode: {line}", err=True)
    for line in slow_imports(rows):
        click.echo(f"mycode: note: {line}", err=True)
    if problems:
        click.echo(
            f"mycode: {len(problems)} plugin problem(s); tracebacks are in the JSON above",
            err=True,
        )
        sys.exit(1)


def _add_plugin_details(
    pm: Any, rows: list[dict[str, Any]], plugin_dirs: tuple[str, ...], cwd: str | None
) -> None:
    """Merge what ``plugin_details`` implementations report into their rows (issue 12)."""
    from pathlib import Path

    from mycode_core.config import ConfigError, home_dir, load_settings

    workspace = Path(cwd or os.getcwd()).resolve()
    home = home_dir()
    cli = {"plugin_dirs": [str(Path(p).expanduser().resolve()) for p in plugin_dirs] or None}
    from mycode_core.runtime.hookcalls import call_hook

    try:
        settings = load_settings(workspace, home, cli)
    except ConfigError as exc:  # the listing still prints
        click.echo(f"mycode: plugin details unavailable: {exc}", err=True)
        return
    results = call_hook(  # a failing plugin is one line naming it; the others' details stay
        pm,
        "plugin_details",
        lambda message: click.echo(f"mycode: {message}", err=True),
        settings=settings,
        workspace=workspace,
        home=home,
    )
    by_name = {row["name"]: row for row in rows}
    folder_rows: list[dict[str, Any]] = []
    for result in results:
        for name, extra in (result if isinstance(result, dict) else {}).items():
            if name == "folder_plugins" and isinstance(extra, list):
                folder_rows += [row for row in extra if isinstance(row, dict)]
            elif name in by_name and isinstance(extra, dict):
                by_name[name].update(extra)
    rows += folder_rows
