"""Claude Code commands as mycode slash commands (``register_slash_commands``): each plugin
folder's ``commands/*.md``, and your own (:mod:`.own_commands`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mycode_claude_compat.commands import CommandFile, expand, read_command
from mycode_claude_compat.grants import as_rules
from mycode_claude_compat.plugin_folder import data_dir
from mycode_core.api import InlineCommandRefused, run_inline_commands

_PLUGIN_VARS = re.compile(r"\$\{CLAUDE_PLUGIN_(ROOT|DATA)\}|\$CLAUDE_PLUGIN_(ROOT|DATA)\b")


def _runner(
    command: CommandFile, root: Path, state: Any, grants: bool, data: Path | None = None
) -> Callable[[str, Any], str]:
    paths = {"ROOT": str(root), "DATA": str(data) if data is not None else None}

    def with_root(text: str) -> str:
        return _PLUGIN_VARS.sub(lambda m: paths[m.group(1) or m.group(2)] or m.group(0), text)

    def run(args: str, context: Any) -> Any:
        """Send the command's body, with its arguments filled in, as the user's turn.

        ``${CLAUDE_PLUGIN_ROOT}`` is the plugin's folder (as in Claude Code), and that folder
        becomes readable for the run, so ``@${CLAUDE_PLUGIN_ROOT}/templates/x.md`` and a
        ``read_file`` of the plugin's own files work (the user named the folder);
        ``${CLAUDE_PLUGIN_DATA}`` is a plugin's data folder (:func:`.plugin_folder.open_data_dirs`
        made it readable, and writable for commands). Its shell
        commands run first (``api.run_inline_commands``); a refused one sends nothing. The command's
        ``allowed-tools`` are granted for its turn (:mod:`.grants`)."""
        roots = getattr(context, "readable_roots", None)
        if isinstance(roots, list) and root not in roots:
            roots.append(root)
        prompt = expand(with_root(command.body), args, command.arguments)
        allowed = [with_root(entry) for entry in command.allowed_tools] if grants else []
        rules = as_rules(allowed)
        try:
            prompt = run_inline_commands(prompt, context, rules)
        except InlineCommandRefused as exc:
            from mycode_core import SlashResult

            return SlashResult(output=f"/{command.name} was not run: {exc}")
        state.command_grants.expect(prompt, rules)
        return prompt

    return run


def register_commands(register: Callable[[Any], None], state: Any) -> None:
    """Register each plugin folder's command as Claude Code's namespaced ``/plugin:name``
    (what the plugins' own help tells users to type: ``/hookify:list``) and ``/name`` as its
    alias (``alias_of``), which yields — to the session's own commands (``/help`` is always
    the built-in, as in Claude Code), to every other plugin's command and to your own, and to
    the same name of a folder read before."""
    try:
        from mycode_core import SlashCommand  # type: ignore[attr-defined]
    except ImportError:
        return
    for folder in state.loaded.folders:
        for path in folder.commands:
            command, problem = read_command(path)
            if problem:
                state.notice(f"plugin folder {folder.name}: {problem}")
            if command is None:
                continue
            qualified = f"{folder.name}:{command.name}"
            description = command.description or f"({folder.name}) {command.body[:60]}"
            data = data_dir(state.context.home, folder.name)
            run = _runner(command, folder.root.resolve(), state, folder.grants, data)
            for name, alias_of in ((qualified, None), (command.name, qualified)):
                try:
                    register(
                        SlashCommand(
                            name=name,
                            description=description,
                            argument_hint=command.argument_hint,
                            run=run,
                            alias_of=alias_of,
                        )
                    )
                except Exception as exc:  # noqa: BLE001 - one bad command costs only itself
                    state.notice(f"plugin folder {folder.name}: command {name!r} not added: {exc}")


def register_own(register: Callable[[Any], None], state: Any) -> None:
    """The workspace's and the user's own commands (``.claude/commands/``...)."""
    try:
        from mycode_core import SlashCommand  # type: ignore[attr-defined]
    except ImportError:
        return
    from mycode_claude_compat.loading import user_claude
    from mycode_claude_compat.own_commands import own_commands

    context = state.context
    problems: list[str] = []
    found = own_commands(
        context.workspace, context.home, user_claude(context.settings), state.loaded.trusted,
        problems,
    )  # fmt: skip
    for problem in problems:
        state.notice(problem)
    taken: set[str] = set()
    for own in found:
        command = own.command
        name = command.name
        if name in taken and own.namespace:
            name = f"{own.namespace}:{name}"
        if name in taken:
            if own.scope == "project":
                state.notice(f"the workspace's command /{name} is left out: yours has that name")
            continue
        taken.add(name)
        label = f"{own.scope}:{own.namespace}" if own.namespace else own.scope
        description = command.description or command.body[:60]
        register(
            SlashCommand(
                name=name,
                description=f"{description} ({label})",
                argument_hint=command.argument_hint,
                run=_runner(command, own.root.resolve(), state, own.grants),
            )
        )
