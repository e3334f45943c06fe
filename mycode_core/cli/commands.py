"""Core subcommands: ``plugins``, ``sessions``, ``demo``."""

from __future__ import annotations

import json
import sys

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
    def plugins_command(include_all: bool, hook_name: str | None) -> None:
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
        click.echo(json.dumps(rows, indent=2))

    from mycode_core.cli.sessions_cmd import sessions_group

    cli.add_command(sessions_group())

    @cli.command(name="demo")
    @click.option("--keep", is_flag=True, help="Keep the temporary project folder.")
    def demo_command(keep: bool) -> None:
        """Watch mycode fix a bug in a small example project, offline."""
        from mycode_core.cli.demo import run_demo

        sys.exit(run_demo(keep=keep))
