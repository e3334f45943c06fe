"""Plugin subcommands: added through ``pm.hook.register_commands``, each tagged with its plugin.

The names (and the plugin of each) go to the command cache, so ``mycode --help`` can list them
without importing plugins, and a command whose plugin is gone later is a usage error naming
that plugin rather than a prompt for the agent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


class PluginCommandGroup(click.Group):
    """A group that records which plugin added each command while ``register_commands`` runs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command_plugins: dict[str, str | None] = {}
        """Command name -> entry-point name of the plugin that added it."""
        self.plugin_manager: Any = None
        """The manager whose plugins added commands (``None`` until they are added)."""
        self._codes: Any = None

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """Add a command; during plugin registration, remember the plugin adding it."""
        super().add_command(cmd, name)
        if self._codes is not None:
            from mycode_core.runtime.hookcalls import calling_plugin

            self.command_plugins[name or cmd.name or ""] = calling_plugin(self._codes)


def add_plugin_commands(
    group: PluginCommandGroup,
    pm: Any,
    notice: Callable[[str], None],
    on_error: Callable[[str | None, str, BaseException], None] | None = None,
) -> dict[str, str | None]:
    """Call ``register_commands`` through pluggy on ``group``; returns new command -> plugin.

    A plugin whose implementation raises costs one ``notice`` line; the others still add theirs.
    """
    from mycode_core.runtime.hookcalls import call_hook, implementation_codes

    before = set(group.command_plugins)
    group._codes = implementation_codes(pm, "register_commands")
    group.plugin_manager = pm
    try:
        call_hook(pm, "register_commands", notice, side_effects=True, on_error=on_error, cli=group)
    finally:
        group._codes = None
    return {name: plugin for name, plugin in group.command_plugins.items() if name not in before}


def save_command_cache(group: PluginCommandGroup, pm: Any) -> None:
    """Record ``group``'s plugin commands (with their plugins) in the command cache."""
    from mycode_core.cli import command_cache
    from mycode_core.cli.command_cache import CORE_COMMANDS
    from mycode_core.cli.plugin_rows import plugin_distribution

    distributions: dict[str, str | None] = {}
    for name, plugin in pm.list_name_plugin():
        found = plugin_distribution(pm, plugin)
        distributions[name] = found[0] if found is not None else None
    command_cache.save(
        [
            (name, command.get_short_help_str(), group.command_plugins.get(name))
            for name, command in sorted(group.commands.items())
            if name not in CORE_COMMANDS
        ],
        distributions=distributions,
        loaded_plugins=distributions,
    )


def missing_command(name: str, loaded_plugins: set[str]) -> str | None:
    """Why ``name`` — a command a plugin once registered — can't run now, or ``None``.

    ``None`` when no plugin ever registered ``name`` (as far as the cache knows) or its plugin
    is loaded now. Otherwise one line naming the plugin and how to install or enable it.
    """
    from mycode_core.cli import command_cache
    from mycode_core.cli.plugin_rows import entry_point_status

    known = command_cache.known_command(name)
    if known is None or known["plugin"] in loaded_plugins:
        return None
    plugin = str(known["plugin"])
    status, distribution = entry_point_status(plugin)
    distribution = distribution or known.get("distribution")
    what = f"plugin {plugin!r}" + (f" (distribution {distribution})" if distribution else "")
    head = f"`mycode {name}` is a command of {what}, which"
    if status == "not-installed":
        install = f"pip install {distribution}" if distribution else "install it"
        return f"{head} is not installed: {install}"
    if status == "disabled":
        return f"{head} is disabled: remove {plugin} from MYCODE_DISABLE_PLUGINS"
    if status == "not-selected":
        return f"{head} is not loaded: add {plugin} to MYCODE_LOAD_PLUGINS"
    return f"{head} failed to load: see `mycode plugins --check`"


def log_failure(what: str, exc: BaseException) -> str | None:
    """Append ``exc``'s traceback to ``$MYCODE_HOME/logs/plugin-errors.log``; returns its
    path (``None`` if it can't be written)."""
    import time
    import traceback

    from mycode_core.config import home_dir

    path = home_dir() / "logs" / "plugin-errors.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {what}\n")
            fh.write("".join(traceback.format_exception(exc)))
    except OSError:
        return None
    return str(path)
