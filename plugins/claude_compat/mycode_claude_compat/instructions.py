"""Claude Code's project memory: ``CLAUDE.md``, ``.claude/CLAUDE.md`` and ``CLAUDE.local.md``
of each folder from the workspace root down to the current one, after the core's AGENTS.md,
with their ``@path`` imports read as Claude Code reads them (outside code, nested up to
:data:`MAX_DEPTH`, each file once). Every file, imports too, is a project file (SPEC §8): never
read through a symlink leading out (one notice, once a run), so a repository cannot pull
``~/.ssh`` into the prompt. :mod:`.nested` reads a sub-folder's ``CLAUDE.md`` with :func:`read`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mycode_core.events import NoticeEvent
from mycode_core.project_files import (
    ProjectFileRefused,
    allowed_dirs,
    instruction_files,
    read_project_text,
)

MAX_CHARS = 40_000
MAX_DEPTH = 5
CLAUDE_FILES = (("CLAUDE.md",), (".claude/CLAUDE.md",), ("CLAUDE.local.md",))
_IMPORT = re.compile(r"(?<![\w@`])@((?:~/|/|\.{1,2}/)?[\w.\-/]+)")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_FENCE = re.compile(r"^\s*(```|~~~)")

Read = Callable[[Path], str]  # raising as project_files.read_project_text does


def read(workspace: Path, path: Path, allowed: Iterable[Path]) -> str:
    """The text (its first :data:`MAX_CHARS`) of the instruction file ``path``, a project file
    (``allowed``: the user's ``readable_dirs``); raises as ``read_project_text`` does."""
    return read_project_text(workspace, path, allowed=allowed, limit=4 * MAX_CHARS)[:MAX_CHARS]


def sections(context: Any) -> list[Any]:
    """The project's CLAUDE.md files, root first, each followed by what it imports."""
    from mycode_core import ContextSection

    workspace, current = context.workspace, Path(os.getcwd())
    files = instruction_files(workspace, current, CLAUDE_FILES)
    # already in the instructions: not imported again (``@AGENTS.md`` is common)
    seen = {os.path.abspath(path) for path in [*instruction_files(workspace, current), *files]}
    allowed = allowed_dirs(context.settings)

    def read_file(path: Path) -> str:
        return read(workspace, path, allowed)

    def refused(message: str) -> None:
        said = context.store.setdefault("claude_compat.refused_instructions", set())
        if message not in said:  # once a run, though the prompt is built again
            said.add(message)
            context.emit(NoticeEvent(level="warning", message=message))

    def title(path: Path) -> str:
        return str(path.relative_to(workspace) if path.is_relative_to(workspace) else path)

    found = []
    for path in files:
        try:
            text = read_file(path)
        except ProjectFileRefused as exc:
            refused(str(exc))
            continue
        except OSError:
            continue
        heading = f"Project instructions ({title(path)})"
        found.append(ContextSection(title=heading, text=text, priority=20))
        for target, importer, content in imports_of(path, text, read_file, seen, refused):
            heading = f"Project instructions ({title(target)}, imported by {title(importer)})"
            found.append(ContextSection(title=heading, text=content, priority=20))
    return found


def import_paths(text: str, folder: Path | None = None) -> list[str]:
    """The ``@path`` imports of ``text``, in order, code left out; a bare word only when it
    names something in ``folder`` (the importing file's)."""
    found: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in _IMPORT.finditer(_INLINE_CODE.sub("", line)):
            path = match.group(1).rstrip(".")
            named = "/" in path or "." in path or folder and os.path.lexists(folder / path)
            if named and path not in found:
                found.append(path)
    return found


def imports_of(
    source: Path,
    text: str,
    read: Read,
    seen: set[str],
    refused: Callable[[str], None],
    depth: int = 1,
) -> list[tuple[Path, Path, str]]:
    """``(file, imported by, text)`` of every file ``source`` imports, nested ones after their
    importer; ``seen``: the absolute paths already in the instructions."""
    out: list[tuple[Path, Path, str]] = []
    for raw in import_paths(text, source.parent):
        target = Path(os.path.expanduser(raw)) if raw.startswith("~/") else Path(raw)
        target = Path(os.path.abspath(source.parent / target))
        if str(target) in seen:
            continue
        try:
            content = read(target)
        except ProjectFileRefused as exc:  # each spelling said: @../x and @/abs/x may be one
            refused(f"@{raw} in {source.name}: {exc}")
            continue
        except OSError:  # as in Claude Code: a missing (or unreadable) import is no error
            continue
        seen.add(str(target))
        out.append((target, source, content))
        if depth < MAX_DEPTH:
            out += imports_of(target, content, read, seen, refused, depth + 1)
    return out
