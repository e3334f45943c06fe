"""The ``CLAUDE.md`` of a sub-folder, read when the agent first works there, as Claude Code
reads them: :mod:`.instructions` puts the files from the workspace root down to the current
folder in the system prompt; a ``CLAUDE.md`` further down (``packages/api/CLAUDE.md`` of a
monorepo) is added to the result of the first tool call that reads or changes a file below its
folder, once a run.
Read as every instruction file is: never through a symlink leading out (one notice). Its
``@path`` imports are not followed, and folders of dependencies (``node_modules``, ``.venv``…)
are not looked in: a package's CLAUDE.md is not the project's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from mycode_claude_compat.instructions import read
from mycode_core.api import NOISE_DIRS
from mycode_core.project_files import ProjectFileRefused, allowed_dirs, folders_down_to

NAME = "CLAUDE.md"


def already_read(workspace: Path) -> set[str]:
    """The folders (workspace-relative, ``.`` the root) whose ``CLAUDE.md`` is in the system
    prompt (:mod:`.instructions`)."""
    folders = folders_down_to(workspace, Path(os.getcwd()))
    return {folder.relative_to(workspace).as_posix() for folder in folders}


def newly_applying(
    workspace: Path,
    files: list[str],
    seen: set[str],
    notice: Callable[[str], None],
    settings: Any = None,
) -> list[str]:
    """The ``CLAUDE.md`` of each folder above ``files`` not looked at before (then it is)."""
    lines = []
    for name in files:
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts:
            continue
        if any(part in NOISE_DIRS for part in relative.parts):  # a dependency's, not ours
            continue
        for depth in range(1, len(relative.parts)):
            folder = PurePosixPath(*relative.parts[:depth]).as_posix()
            if folder in seen:
                continue
            seen.add(folder)
            path = workspace / folder / NAME
            if not os.path.lexists(path):
                continue
            try:
                text = read(workspace, path, allowed_dirs(settings))  # the user's readable_dirs
            except ProjectFileRefused as exc:
                notice(str(exc))
                continue
            except OSError:
                continue
            if text.strip():
                lines.append(f"Instructions for {folder}/ ({folder}/{NAME}):\n{text}")
    return lines
