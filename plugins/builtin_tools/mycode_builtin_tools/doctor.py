"""``mycode doctor``: what the built-in tools will use on this machine, as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click


def report(workspace: Path, home: Path) -> dict[str, Any]:
    """ripgrep path and version, sandbox availability and whether it is active, paths."""
    from mycode_builtin_tools import sandbox
    from mycode_builtin_tools.ripgrep import rg_path, rg_version
    from mycode_core.config import ConfigError, load_settings
    from mycode_core.diagnostics import core_report

    problems: list[str] = []
    settings = None
    try:
        settings = load_settings(workspace, home)
        requested = sandbox.requested(settings)
        network = sandbox.network_allowed(settings)
        mode = settings.permission_mode
    except ConfigError as exc:
        problems.append(str(exc))
        requested, network, mode = False, False, "default"
    core, core_problems = core_report(settings, home)  # model, base URL, key, home (issue 14)
    problems += core_problems
    bwrap = sandbox.bwrap_path()
    return {
        **core,
        "workspace": str(workspace),
        "home": str(home),
        "permission_mode": mode,
        "ripgrep": {"path": rg_path(), "version": rg_version(), "fallback": rg_path() is None},
        "sandbox": {
            "available": bwrap is not None,
            "bwrap": bwrap,
            "requested": requested,
            "active": requested and bwrap is not None,
            "network": network if requested else True,
        },
        "problems": problems,
    }


def make_command() -> click.Command:
    """Build the ``doctor`` click command."""

    @click.command("doctor")
    @click.option(
        "--cwd",
        "cwd",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Workspace to check (default: current directory).",
    )
    def doctor(cwd: Path | None) -> None:
        """Show what the built-in tools use here: ripgrep, sandbox, workspace, home (JSON)."""
        from mycode_core.config import home_dir

        workspace = (cwd or Path.cwd()).resolve()
        click.echo(json.dumps(report(workspace, home_dir()), indent=2))

    return doctor
