"""``@path`` imports of CLAUDE.md, read as Claude Code reads them (outside code, nested up to
:data:`MAX_DEPTH`, each file once); imports are project files like the rest (SPEC §8), so a
repository cannot pull ``~/.ssh`` into the prompt."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from mycode_core.project_files import ProjectFileRefused

MAX_DEPTH = 5
_IMPORT = re.compile(r"(?<![\w@`])@((?:~/|/|\.{1,2}/)?[\w.\-/]+)")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_FENCE = re.compile(r"^\s*(```|~~~)")

Read = Callable[[Path], str]  # raising as project_files.read_project_text does


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
