"""The ``env`` table of Claude Code's settings files: variables every command of the session
sees, as in Claude Code.

From ``~/.claude/settings.json`` (once ``user_claude_settings = true`` opts in) and, in a
trusted workspace only, ``.claude/settings.json`` then ``.claude/settings.local.json`` (later
wins; an untrusted workspace's are ignored, and the core's trust notice names them). Applied to
mycode's environment when the session starts, so ``run_command`` (in the sandbox too, which
still removes secrets), subagents' commands and hook commands inherit them; put back when the
session ends.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")


def session_env(data: dict[str, Any], path: Path, notices: list[str]) -> dict[str, str]:
    """The variables of one settings file's ``env`` (a value that is not text, a number or a
    boolean, or a name that is not a variable name, is one notice and left out)."""
    table = data.get("env")
    if table is None:
        return {}
    if not isinstance(table, dict):
        notices.append(f"{path}: `env` must be an object of variables; ignored")
        return {}
    found = {}
    for name, value in table.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not _NAME.match(str(name)) or not isinstance(value, str | int | float):
            notices.append(f"{path}: env {name!r} is not a variable with a text value; ignored")
            continue
        found[str(name)] = str(value)
    return found


def apply(env: dict[str, str], saved: dict[str, str | None]) -> None:
    """Set ``env`` in ``os.environ``, remembering the old values in ``saved``."""
    for name, value in env.items():
        saved.setdefault(name, os.environ.get(name))
        os.environ[name] = value
