"""Slash commands from plugins (``register_slash_commands``): lookup and dispatch.

The interactive session and ``mycode -p "/name args"`` both go through :func:`dispatch`, so a
plugin's command behaves the same in both: a returned prompt runs as the user's turn, returned
output is shown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import pluggy

from mycode_core.cli.builtin_commands import RESERVED
from mycode_core.records import RunContext, SlashCommand, SlashResult
from mycode_core.runtime.hookcalls import OnError, call_hook, calling_plugin, implementation_codes

_COMMAND = re.compile(r"/([A-Za-z0-9][\w.:-]*)(?:\s+(.*))?", re.DOTALL)
"""``/name args``: a name of letters, digits and ``-_.:``, ended by any whitespace."""


def split_command(text: str) -> tuple[str, str] | None:
    """``("name", "args")`` for text that starts with ``/name``, else ``None`` (a path such
    as ``/etc/hosts``, a comment such as ``/* … */``, ``//``: not a command)."""
    found = _COMMAND.fullmatch(text.strip())
    return (found.group(1), (found.group(2) or "").strip()) if found else None


def names_a_path(text: str) -> bool:
    """Whether ``text`` starts with an existing absolute path (``/tmp is full``): a prompt
    when no command has that name, never an unknown command (README: a path is a prompt)."""
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    return os.path.isabs(first) and os.path.lexists(first)


def collect_slash_commands(
    pm: pluggy.PluginManager,
    context: RunContext,
    notice: Callable[[str], None],
    *,
    on_error: OnError | None = None,
) -> dict[str, SlashCommand]:
    """Every ``/name`` command plugins contribute, by name (the first registration wins).

    Aliases (``alias_of``) come last and yield without a word: one is kept only when no
    command and no built-in command of the session (:data:`.builtin_commands.RESERVED`)
    has its name, whatever order the plugins registered in.
    """
    commands: dict[str, SlashCommand] = {}
    aliases: list[SlashCommand] = []
    codes = implementation_codes(pm, "register_slash_commands")

    def register(command: SlashCommand) -> None:
        plugin = calling_plugin(codes)
        if command.plugin is None:
            command = command.model_copy(update={"plugin": plugin})
        if command.alias_of is not None:
            aliases.append(command)
            return
        existing = commands.get(command.name)
        if existing is not None:
            notice(
                f"slash command /{command.name} of plugin {plugin!r} ignored: "
                f"plugin {existing.plugin!r} registered it first"
            )
            return
        commands[command.name] = command

    call_hook(
        pm,
        "register_slash_commands",
        notice,
        side_effects=True,
        on_error=on_error,
        register=register,
        context=context,
    )
    for alias in aliases:
        if alias.name not in commands and alias.name not in RESERVED:
            commands[alias.name] = alias
    return commands


def help_entries(commands: dict[str, SlashCommand]) -> dict[str, str]:
    """What ``/help`` lists of ``commands``: name → argument hint and description, an alias
    on the line of the command it stands for (``/pdf … (also /skill:pdf)``), not two lines."""

    def target(command: SlashCommand) -> str | None:  # the same plugin's command, if kept
        other = commands.get(command.alias_of) if command.alias_of is not None else None
        return command.alias_of if other is not None and other.plugin == command.plugin else None

    folded = {target(command) for command in commands.values()}
    entries: dict[str, str] = {}
    also: dict[str, list[str]] = {}  # a line → the other names it stands for
    line_of: dict[str, str] = {}  # a command → the line its first alias holds
    for name, command in commands.items():
        shared = target(command)
        if name in folded or (shared is not None and shared in line_of):
            if shared is not None:  # a second alias (``/plugin:pdf``) joins the first's line
                also[line_of[shared]].append(name)
            continue
        entries[name] = command.description or f"(plugin {command.plugin})"
        if command.argument_hint:  # what to type after the name (``[pr-number]``)
            entries[name] = f"{command.argument_hint}  {entries[name]}"
        if shared is not None:
            line_of[shared], also[name] = name, [shared]
    for name, others in also.items():
        entries[name] += " (also " + ", ".join(f"/{other}" for other in others) + ")"
    return entries


def plugin_commands(
    runner: Any, notice: Callable[[str], None], *, again: bool = False
) -> dict[str, SlashCommand]:
    """The plugins' slash commands of a runner's session: collected once, then cached;
    ``again`` collects them anew (a name nobody had: a skill written since may have it). A
    notice of a collection is said once in the session, not again by the next one."""
    cached = getattr(runner, "_slash_commands", None)
    if cached is None or again:
        said: set[str] = getattr(runner, "_slash_notices", set())
        runner._slash_notices = said

        def once(message: str) -> None:
            if message not in said:
                said.add(message)
                notice(message)

        guard = getattr(runner, "guard", None)
        on_error = guard.on_error if guard is not None else None
        cached = collect_slash_commands(runner.pm, runner.context, once, on_error=on_error)
        runner._slash_commands = cached
    return dict(cached)


def unknown_command(runner: Any, name: str, notice: Callable[[str], None]) -> str:
    """The line for ``/name`` that no command has: the nearest names, then the plugins'."""
    from difflib import get_close_matches

    if name in RESERVED:  # reached only from -p
        return f"/{name} is a command of the interactive session (mycode without -p)."
    known = sorted(plugin_commands(runner, notice))
    near = get_close_matches(name, [*known, *RESERVED], n=1)
    hint = f" Did you mean /{near[0]}?" if near else ""
    listed = f" Plugin commands: {', '.join('/' + n for n in known)}." if known else ""
    return f"Unknown command /{name}.{hint}{listed}"


def dispatch(runner: Any, text: str, notice: Callable[[str], None]) -> SlashResult | None:
    """Run the plugin command ``text`` names; ``None`` when no plugin command has that name.

    A command that raises becomes ``SlashResult(output=...)`` naming the plugin.
    """
    parts = split_command(text)
    if parts is None:
        return None
    name, args = parts
    command = plugin_commands(runner, notice).get(name)
    if command is None:  # unknown: collected again once (a skill added during the session)
        command = plugin_commands(runner, notice, again=True).get(name)
    if command is None:
        return None
    try:
        answer = command.run(args, runner.context)
    except BaseException as exc:  # noqa: BLE001 - a broken command is a message, not a crash
        from mycode_core.errors import error_line
        from mycode_core.runtime.hookcalls import is_plugin_failure

        if not is_plugin_failure(exc):
            raise  # a real Ctrl-C, or a plugin refusing the run (SetupError)
        failed = f"/{name} (plugin {command.plugin}) failed: {error_line(exc)}"
        guard = getattr(runner, "guard", None)
        if guard is not None:  # strict plugins: a failing command is a plugin failure (exit 2)
            guard.count(f"plugin {command.plugin!r} failed in /{name}: {error_line(exc)}")
        return SlashResult(output=failed)
    if isinstance(answer, SlashResult):
        return answer
    if isinstance(answer, str):
        return SlashResult(prompt=answer)
    return SlashResult()
