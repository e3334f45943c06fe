"""Helpers of the install and marketplace tests: ``mycode plugins`` runs, the registry, and
marketplaces of our own in the shape of the public ones."""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

from cc_helpers import Env

from mycode_core.testing import CliResult, run_cli


def cli(env: Env, *args: str, extra_env: dict[str, str | None] | None = None) -> CliResult:
    """``mycode plugins ARGS`` in the test's workspace and home."""
    return run_cli(["plugins", *args], cwd=env.workspace, home=env.home, env=extra_env)


def registry(env: Env) -> dict[str, Any]:
    """The installed plugins' records (``plugins.toml``)."""
    return tomllib.loads((env.home / "plugins.toml").read_text())["plugins"]


def write_market(root: Path, entries: list[dict[str, Any]], **top: Any) -> Path:
    """A Claude Code marketplace named ``team`` in ``root`` listing ``entries``."""
    path = root / ".claude-plugin" / "marketplace.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"name": "team", "owner": {"name": "t"}, **top, "plugins": entries}
    path.write_text(json.dumps(data))
    return root


def cc_plugin(root: Path, name: str, commands: tuple[str, ...] = ("go",)) -> Path:
    """A Claude Code plugin folder with a manifest and ``commands/<command>.md``."""
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name}))
    for command in commands:
        (root / "commands").mkdir(exist_ok=True)
        (root / "commands" / f"{command}.md").write_text(f"Do {command} with $ARGUMENTS\n")
    return root


def set_entry(root: Path, which: str, **fields: Any) -> None:
    """Change the fields of the marketplace entry ``which``."""
    path = root / ".claude-plugin" / "marketplace.json"
    data = json.loads(path.read_text())
    for entry in data["plugins"]:
        if entry["name"] == which:
            entry.update(fields)
    path.write_text(json.dumps(data))


def counting_git(root: Path) -> tuple[dict[str, str | None], Path]:
    """A ``git`` first on PATH that logs the arguments of every ``clone`` to a file, then runs
    the real git: ``(environment for run_cli, the log)``."""
    real = shutil.which("git")
    assert real is not None
    log, folder = root / "clones.log", root / "counting-git"
    folder.mkdir()
    script = folder / "git"
    script.write_text(
        "#!/bin/sh\n"
        f'for arg in "$@"; do [ "$arg" = clone ] && echo "$*" >> "{log}"; done\n'
        f'exec "{real}" "$@"\n'
    )
    script.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"}, log


def clones_of(log: Path, location: str) -> int:
    """How many clones of ``location`` the log of :func:`counting_git` holds."""
    if not log.is_file():
        return 0
    return sum(1 for line in log.read_text().splitlines() if location in line.split())
