"""The one-time trust question of an interactive session (SPEC §8)."""

from __future__ import annotations

from pathlib import Path

import click

PROJECT_FILES = (".mycode", ".mcp.json", ".claude")


def ask_once(workspace: Path, home: Path) -> None:
    """Ask whether to trust ``workspace`` if it has project settings and nobody answered yet.

    The answer is recorded under ``MYCODE_HOME`` either way, so the question comes only once.
    """
    from mycode_core import trust

    if trust.is_trusted(workspace, home) or trust.was_asked(workspace, home):
        return
    if not any((workspace / name).exists() for name in PROJECT_FILES):
        return
    click.echo(
        f"{workspace} has its own mycode/Claude settings (.mycode/, .mcp.json or .claude/).\n"
        "Until you trust it, they may only make things stricter (no auto-approved commands, "
        "MCP servers or hooks from the project)."
    )
    try:
        answer = click.confirm("Trust this folder?", default=False)
    except (click.Abort, EOFError):
        answer = False
    try:
        trust.trust(workspace, home, trusted=answer)
    except trust.TrustStoreError as exc:
        click.echo(f"mycode: warning: could not record the answer: {exc.strerror}", err=True)
