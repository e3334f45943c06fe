"""``CLAUDE_ENV_FILE``: the shell file ``SessionStart`` hooks write ``export NAME=value`` lines
to; Claude Code sources it before every Bash call of the session.

mycode sources it once, when the ``SessionStart`` hooks are done (in the workspace, with
``set -a``, so plain assignments count too, and ``CLAUDE_PROJECT_DIR`` set as for hooks), and
puts what it set or unset into the process environment every later command inherits —
``run_command`` (sandboxed or not: the sandbox still removes secrets), a subagent's commands,
and hook commands; ``session_end`` puts the environment back."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

_SHELL_OWN = frozenset({"_", "SHLVL", "PWD", "OLDPWD", "CLAUDE_PROJECT_DIR"})
"""Set by the shell (or for it, as for hooks), not by the file."""
_TIMEOUT = 10.0


def _path(context: Any) -> Path:
    return Path(context.home) / "claude_compat" / "env" / f"{context.session_id}.sh"


def prepare(context: Any) -> Path:
    """An empty env file of this session, under ``MYCODE_HOME`` (never in the workspace)."""
    path = _path(context)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def _sourced(path: Path, workspace: Path) -> dict[str, str]:
    """The environment after sourcing ``path``; raises ``ValueError`` with the shell's error."""
    script = 'set -a; . "$1" >/dev/null </dev/null || exit 3; env -0'
    try:
        done = subprocess.run(  # noqa: S603 - the user's own hook output, as Claude Code runs it
            ["bash", "-c", script, "bash", str(path)],
            cwd=str(workspace),
            env={**os.environ, "CLAUDE_PROJECT_DIR": str(workspace)},
            capture_output=True,
            timeout=_TIMEOUT,
            start_new_session=True,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ValueError(str(exc)) from exc
    if done.returncode != 0:
        errors = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ValueError(errors[-1] if errors else f"exit code {done.returncode}")
    pairs = (item.partition("=") for item in done.stdout.decode("utf-8", "replace").split("\0"))
    return {name: value for name, sep, value in pairs if sep and name not in _SHELL_OWN}


def apply(path: Path, workspace: Path, saved: dict[str, str | None]) -> str | None:
    """Source ``path`` and apply its changes to ``os.environ``, remembering the old values in
    ``saved``; a problem as one line (nothing applied then), else ``None``."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        after = _sourced(path, workspace)
    except ValueError as exc:
        return f"CLAUDE_ENV_FILE could not be sourced, no variable of it applies: {exc}"
    before = {k: v for k, v in os.environ.items() if k not in _SHELL_OWN}
    for name in (before.keys() | after.keys()) - _SHELL_OWN:
        if before.get(name) != after.get(name):
            saved.setdefault(name, before.get(name))
            if name in after:
                os.environ[name] = after[name]
            else:
                os.environ.pop(name, None)
    return None


def finish(context: Any, saved: dict[str, str | None]) -> None:
    """At the session's end: the environment put back, the env file removed."""
    restore(saved)
    _path(context).unlink(missing_ok=True)


def restore(saved: dict[str, str | None]) -> None:
    """Put back what :func:`apply` changed."""
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    saved.clear()
