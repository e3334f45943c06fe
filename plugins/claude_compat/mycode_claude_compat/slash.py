"""Plugin folders' ``commands/*.md`` as mycode slash commands (``register_slash_commands``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mycode_claude_compat.commands import CommandFile, expand, read_command


def _runner(command: CommandFile) -> Callable[[str, Any], str]:
    def run(args: str, context: Any) -> str:
        """Send the command's body, with its arguments filled in, as the user's turn."""
        return expand(command.body, args)

    return run


def register_commands(register: Callable[[Any], None], state: Any) -> None:
    """Register each command once; a name two folders share is registered as
    ``plugin:name`` for the second (Claude Code's namespaced form)."""
    try:
        from mycode_core import SlashCommand  # type: ignore[attr-defined]
    except ImportError:
        return
    taken: set[str] = set()
    for folder in state.loaded.folders:
        for path in folder.commands:
            command, problem = read_command(path)
            if problem:
                state.notice(f"plugin folder {folder.name}: {problem}")
            if command is None:
                continue
            name = command.name if command.name not in taken else f"{folder.name}:{command.name}"
            taken.add(name)
            description = command.description or f"({folder.name}) {command.body[:60]}"
            try:
                register(
                    SlashCommand(
                        name=name,
                        description=description,
                        argument_hint=command.argument_hint,
                        run=_runner(command),
                    )
                )
            except Exception as exc:  # noqa: BLE001 - one bad command costs only itself
                state.notice(f"plugin folder {folder.name}: command {name!r} not added: {exc}")
