"""Where ``bwrap`` may come from (SPEC §8, issue 23 M3): never from ``PATH``.

A sandboxed command can write the workspace (a ``.venv/bin/bwrap`` on ``PATH``), so the program
that builds the sandbox is taken only from a location nobody but root can change: a root-owned
regular file, not group- or other-writable, whose every folder up to ``/`` is root-owned and not
group- or other-writable — found in the standard folders (:data:`STANDARD_DIRS`), or named by
``[sandbox] bwrap = "/path"`` in the *user* config (checked the same way; a project layer cannot
set it).

``MYCODE_NO_BWRAP=1`` (a test switch, documented in the README's development section) makes
mycode behave as on a machine without bubblewrap: no ``bwrap`` is found at all. It can only
take the sandbox away, never choose another program.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

STANDARD_DIRS = ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin")
HIDE_ENV = "MYCODE_NO_BWRAP"


def hidden() -> bool:
    """Whether ``MYCODE_NO_BWRAP`` asks mycode to act as if bubblewrap were not installed."""
    return os.environ.get(HIDE_ENV, "").strip() not in ("", "0")


def _owner_problem(path: str, info: os.stat_result) -> str | None:
    if info.st_uid != 0:
        return f"{path} is owned by uid {info.st_uid}, not root"
    if not stat.S_ISLNK(info.st_mode) and info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by its group or by others"
    return None


def _chain_problem(path: str) -> str | None:
    """Why ``path`` (a file) or one of its folders could be changed by someone else."""
    current = path
    while True:
        parent = os.path.dirname(current)
        try:
            info = os.lstat(parent)
        except OSError as exc:
            return f"cannot check {parent}: {exc.strerror}"
        if (problem := _owner_problem(parent, info)) is not None:
            return problem
        if parent == current or parent == "/":
            return None
        current = parent


def problem_with(path: str) -> str | None:
    """``None`` when ``path`` is a ``bwrap`` mycode may run, else why not (one phrase)."""
    if not os.path.isabs(path):
        return f"{path} is not an absolute path"
    real = os.path.realpath(path)
    for candidate in dict.fromkeys((os.path.normpath(path), real)):
        try:
            info = os.lstat(candidate)
        except OSError as exc:
            return f"{candidate}: {exc.strerror}"
        if candidate == real and not stat.S_ISREG(info.st_mode):
            return f"{candidate} is not a regular file"
        if (problem := _owner_problem(candidate, info)) is not None:
            return problem
        if (problem := _chain_problem(candidate)) is not None:
            return problem
    if not os.access(real, os.X_OK):
        return f"{real} is not executable"
    return None


def find(configured: str | None) -> tuple[str | None, str | None]:
    """``(path, None)`` of the ``bwrap`` to use, or ``(None, why)`` naming a rejected path.

    :param configured: ``[sandbox] bwrap`` from the user config, if set (then only it counts).
    """
    if hidden():
        return None, None
    if configured:
        problem = problem_with(configured)
        if problem is None:
            return configured, None
        return None, f"[sandbox] bwrap = {configured!r} is not used: {problem}"
    for folder in STANDARD_DIRS:
        candidate = os.path.join(folder, "bwrap")
        if os.path.lexists(candidate) and problem_with(candidate) is None:
            return candidate, None
    on_path = shutil.which("bwrap")
    if on_path is not None:
        why = problem_with(str(Path(on_path).absolute())) or "it is not in a standard folder"
        return None, (
            f"bwrap on PATH ({on_path}) is not used: {why}; only a root-owned bwrap in "
            f"{', '.join(STANDARD_DIRS)} or [sandbox] bwrap in your own config is trusted"
        )
    return None, None
