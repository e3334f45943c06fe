"""``mycode doctor``: what the built-in tools will use on this machine, as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click


def report(workspace: Path, home: Path, cli: dict[str, Any] | None = None) -> dict[str, Any]:
    """ripgrep, the command sandbox (available, active, mechanism), trust, and problems
    (``cli``: settings given as flags — model, base URL, API key — over the config's)."""
    from mycode_builtin_tools import sandbox
    from mycode_builtin_tools.ripgrep import rg_path, rg_version
    from mycode_core import trust
    from mycode_core.api import core_report
    from mycode_core.config import ConfigError, load_settings

    problems: list[str] = []
    settings: Any = None
    mode = "default"
    try:
        settings = load_settings(workspace, home, cli)
        mode = settings.permission_mode
    except ConfigError as exc:
        problems.append(str(exc))
    try:
        found = sandbox.status(settings, mode)
        cfg = sandbox.config(settings)
    except sandbox.SandboxConfigError as exc:
        problems.append(str(exc))
        found = sandbox.status(None, mode)
        cfg = sandbox.SandboxConfig()
    problems += cfg.ignored
    if found.problem:
        problems.append(found.problem)
    elif not found.active and found.mode != "off":
        problems.append(f"commands are not sandboxed in {mode!r} mode")
    state = trust.state(settings) if settings is not None else {"trusted": False, "ignored": []}
    core, core_problems = core_report(settings, home)  # model, base URL, key, home (issue 14)
    problems += core_problems
    if not core["model"]["name"]:  # issue 20: what a first run would offer
        from mycode_core.api import local_servers

        configured = getattr(settings, "base_url", None)
        servers = local_servers(configured=configured, api_key=getattr(settings, "api_key", None))
        core["local_servers"] = [server.as_json() for server in servers]
    return {
        **core,
        "workspace": str(workspace),
        "home": str(home),
        "permission_mode": mode,
        "ripgrep": {"path": rg_path(), "version": rg_version(), "fallback": rg_path() is None},
        "sandbox": {
            "available": found.available,
            "active": found.active,
            "mechanism": found.mechanism,
            "mode": found.mode,
            "bwrap": sandbox.bwrap_path(cfg.bwrap),
            "network": cfg.network if found.active else True,
            "writable": [str(p) for p in cfg.writable],
            "env_passthrough": cfg.env_passthrough,
        },
        "trust": {"trusted": state["trusted"], "ignored": state["ignored"]},
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
    @click.option("--model", default=None, help="Model to check (as a run's --model).")
    @click.option("--base-url", default=None, help="Server to check (as a run's --base-url).")
    @click.option("--api-key", default=None, help="API key for that server (as a run's).")
    def doctor(
        cwd: Path | None, model: str | None, base_url: str | None, api_key: str | None
    ) -> None:
        """Show what the built-in tools use here: ripgrep, sandbox, workspace, home (JSON).

        Exits 1 when it lists problems."""
        from mycode_core.config import home_dir

        workspace = (cwd or Path.cwd()).resolve()
        flags = {"model": model, "base_url": base_url, "api_key": api_key}
        found = report(workspace, home_dir(), {k: v for k, v in flags.items() if v is not None})
        click.echo(json.dumps(found, indent=2))
        if found["problems"]:
            raise SystemExit(1)  # SPEC §2: doctor exits 1 when it lists problems

    return doctor
