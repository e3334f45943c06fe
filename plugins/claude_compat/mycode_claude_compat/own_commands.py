"""Your own Claude Code slash commands, outside any plugin folder.

From the workspace: ``.claude/commands/`` and ``.mycode/commands/``; from you:
``$MYCODE_HOME/commands/`` and, with ``[claude_compat] user_claude_settings = true`` in your
config, ``~/.claude/commands/``. Each ``*.md`` is a command named by its file (``review.md`` is
``/review``), in subfolders too (``frontend/component.md`` is ``/component``, or
``/frontend:component`` when the name is taken). Yours come first, then the workspace's (one
of the same name as yours is left out, with a notice), then the plugin folders'; every installed
plugin's own commands (``/undo``...) come before all of them.

A project's command is a prompt, so it works in any workspace; its ``allowed-tools`` grant
nothing until the workspace is trusted, and its file is never read through a symlink leading out
of the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mycode_claude_compat.commands import CommandFile, markdown_files, parse_command
from mycode_core.project_files import ProjectFileRefused, read_project_text

PROJECT_FOLDERS = (".claude/commands", ".mycode/commands")


@dataclass
class OwnCommand:
    """One command file of the workspace or of the user."""

    command: CommandFile
    scope: str
    """``project`` or ``user``."""
    namespace: str
    """The subfolder it is in (``""`` at the top)."""
    grants: bool
    root: Path


def own_commands(
    workspace: Path, home: Path, user_claude: bool, trusted: bool, problems: list[str]
) -> list[OwnCommand]:
    """The user's commands, then the workspace's (see the module's doc)."""
    out: list[OwnCommand] = []
    user_folders = [home / "commands"]
    if user_claude:
        user_folders.append(Path.home() / ".claude" / "commands")
    for folder in user_folders:
        if not folder.is_dir():
            continue
        for path in markdown_files(folder):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                problems.append(f"command {path}: {exc}")
                continue
            out.append(_own(path, text, folder, "user", True, problems))
    for relative in PROJECT_FOLDERS:
        folder = workspace / relative
        if folder.is_symlink() or not folder.is_dir():
            continue
        for path in markdown_files(folder):
            try:
                text = read_project_text(workspace, path.relative_to(workspace))
            except (ProjectFileRefused, OSError) as exc:
                problems.append(f"command {path.relative_to(workspace)}: {exc}")
                continue
            out.append(_own(path, text, folder, "project", trusted, problems))
    return out


def _own(
    path: Path, text: str, folder: Path, scope: str, grants: bool, problems: list[str]
) -> OwnCommand:
    command, problem = parse_command(path, text)
    if problem:
        problems.append(problem)
    namespace = ":".join(path.parent.relative_to(folder).parts)
    return OwnCommand(command, scope, namespace, grants, folder)
