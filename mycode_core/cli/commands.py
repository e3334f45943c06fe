"""Core subcommands: ``plugins``, ``sessions``, ``demo``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

CORE_COMMANDS = ("plugins", "sessions", "demo")


class _PluginConfigError(click.ClickException):
    """A plugin failed to load in strict mode: a configuration error (exit code 2)."""

    exit_code = 2


def add_core_commands(cli: click.Group) -> None:
    """Attach the core subcommands to ``cli``."""

    @cli.command(name="plugins")
    @click.option("--all", "include_all", is_flag=True, help="Include the built-in plugins.")
    @click.option("--hook", "hook_name", help="Only plugins implementing this hook.")
    @click.option(
        "--plugin-dir",
        "plugin_dirs",
        multiple=True,
        type=click.Path(file_okay=False),
        help="Also describe this Claude Code plugin folder (as a run with --plugin-dir would).",
    )
    @click.option("--cwd", type=click.Path(file_okay=False), help="Workspace (default: here).")
    def plugins_command(
        include_all: bool, hook_name: str | None, plugin_dirs: tuple[str, ...], cwd: str | None
    ) -> None:
        """List installed plugins as JSON: name, version, hooks."""
        from mycode_core.plugins import PluginLoadError, describe_plugins, get_plugin_manager

        try:
            pm = get_plugin_manager()
        except PluginLoadError as exc:
            raise _PluginConfigError(str(exc)) from None
        if hook_name is not None and not hasattr(pm.hook, hook_name):
            raise click.BadParameter(f"no hook named {hook_name!r}", param_hint="--hook")
        rows = describe_plugins(pm, include_builtins=include_all or hook_name is not None)
        if hook_name is not None:
            rows = [row for row in rows if hook_name in row["hooks"]]
        _add_plugin_details(pm, rows, plugin_dirs, cwd)
        click.echo(json.dumps(rows, indent=2))

    from mycode_core.cli.sessions_cmd import sessions_group

    cli.add_command(sessions_group())

    @cli.command(name="demo")
    @click.option("--keep", is_flag=True, help="Keep the temporary project folder.")
    def demo_command(keep: bool) -> None:
        """Watch mycode fix a bug in a small example project, offline."""
        from mycode_core.cli.demo import run_demo

        sys.exit(run_demo(keep=keep))


def _add_plugin_details(
    pm: Any, rows: list[dict[str, Any]], plugin_dirs: tuple[str, ...], cwd: str | None
) -> None:
    """Merge what ``plugin_details`` implementations report into their rows (issue 12)."""
    from mycode_core.config import ConfigError, home_dir, load_settings

    workspace = Path(cwd or os.getcwd()).resolve()
    home = home_dir()
    cli = {"plugin_dirs": [str(Path(p).expanduser().resolve()) for p in plugin_dirs] or None}
    try:
        settings = load_settings(workspace, home, cli)
        results = pm.hook.plugin_details(settings=settings, workspace=workspace, home=home)
    except (ConfigError, Exception) as exc:  # noqa: BLE001 - the listing still prints
        click.echo(f"mycode: plugin details unavailable: {exc}", err=True)
        return
    by_name = {row["name"]: row for row in rows}
    for result in results or ():
        for name, extra in (result or {}).items():
            if name in by_name and isinstance(extra, dict):
                by_name[name].update(extra)
