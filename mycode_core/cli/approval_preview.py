"""What an approval question shows of the change a call would make, before the user answers:
the diff of an edit, the new content of a write (a diff when the file exists), so a change is
judged on what it is, not on its file name (as Claude Code and Codex show it)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

MAX_LINES = 40
"""At most this many lines of a preview; the rest is counted in one line."""


def approval_preview(call: Any) -> list[str]:
    """The lines to show for ``call`` (``-``/``+`` lines of a diff, or nothing to show)."""
    if call is None:
        return []
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    target = call.paths.get("path") or call.paths.get("file_path")
    if call.name == "edit_file":
        old, new = arguments.get("old_string"), arguments.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return _cut(_changed(old.splitlines(), new.splitlines()))
    if call.name == "write_file" and isinstance(arguments.get("content"), str):
        new_lines = arguments["content"].splitlines()
        try:
            before = Path(target).read_text("utf-8") if target is not None else None
        except (OSError, UnicodeDecodeError):
            before = None
        if before is None:  # a new file: all of it
            return _cut([f"+{line}" for line in new_lines])
        return _cut(_changed(before.splitlines(), new_lines))
    return []


def _changed(before: list[str], after: list[str]) -> list[str]:
    """The ``-``/``+`` and context lines of a unified diff, without its headers."""
    diff = difflib.unified_diff(before, after, lineterm="", n=2)
    return [line for line in diff if not line.startswith(("---", "+++"))]


def _cut(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_LINES:
        return lines
    return [*lines[:MAX_LINES], f"… {len(lines) - MAX_LINES} more lines"]
