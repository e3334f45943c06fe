"""``UserPromptExpansion``: a slash command that expanded into a prompt (a plugin folder's or the
project's command, a skill), told to hooks as Claude Code tells them, before
``UserPromptSubmit``.

The hook input names the command as Claude Code does — a plugin folder's command or skill as
``plugin:name`` (what a matcher like ``^claude-security:claude-security$`` expects), anything else
by its name — with the words typed after it (``command_args``) and the expanded ``prompt``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def expansion_input(typed: str, expanded: str, folders: Iterable[Any]) -> dict[str, Any] | None:
    """The hook fields of ``typed`` (``/name args``) expanded into ``expanded``; ``None`` when
    the line was no slash command or was sent as written."""
    name, _, args = typed.strip().removeprefix("/").partition(" ")
    if not typed.startswith("/") or not name or expanded.strip() == typed.strip():
        return None
    qualified, source = name, "skill"  # Claude Code's commands are skills now
    for folder in folders if ":" not in name else ():
        commands = any(path.stem == name for path in folder.commands)
        if commands or any((skills / name).is_dir() for skills in folder.skill_dirs):
            qualified, source = f"{folder.name}:{name}", "plugin"
            break
    if ":" in name:
        source = "plugin"
    return {
        "expansion_type": "slash_command",
        "command_name": qualified,
        "command_args": args.strip(),
        "command_source": source,
        "prompt": expanded,
    }


def this_turn(prompt_so_far: str, seen: int) -> str:
    """The prompt this turn added to the run's ``context.prompt`` (turns are joined by a blank
    line), given its length at the previous turn."""
    return prompt_so_far[seen:].lstrip("\n") if seen <= len(prompt_so_far) else prompt_so_far
