"""The one-time trust question of an interactive session (SPEC §8)."""

from __future__ import annotations

from pathlib import Path

import click

from mycode_core.cli.signals import INTERRUPTED

PROJECT_FILES = (".mycode", ".mcp.json", ".claude")


def ask_once(workspace: Path, home: Path) -> int | None:
    """Ask whether to trust ``workspace`` if it has project settings and nobody answered yet.

    The answer is recorded under ``MYCODE_HOME`` either way, so the question comes only once.
    Ctrl-C or Ctrl-D at the question is no answer: nothing is recorded and the exit code to
    leave with is returned (130, 0); else ``None``.
    """
    from mycode_core import trust

    if trust.is_trusted(workspace, home) or trust.was_asked(workspace, home):
        return None
    if not any((workspace / name).exists() for name in PROJECT_FILES):
        return None
    from mycode_core.cli.prompts import wrapped

    click.echo(
        wrapped(
            f"{workspace} has its own mycode/Claude settings (.mycode/, .mcp.json or .claude/).\n"
            "Until you trust it, they may only make things stricter (no auto-approved commands, "
            "MCP servers or hooks from the project)."
        )
    )
    try:
        answer = _yes("Trust this folder? [y/N]: ")
    except (KeyboardInterrupt, EOFError) as exc:
        click.echo("", err=True)  # off the question's line
        click.echo("mycode: left at the question; the folder's trust was not recorded", err=True)
        return INTERRUPTED if isinstance(exc, KeyboardInterrupt) else 0
    try:
        trust.trust(workspace, home, trusted=answer)
    except trust.TrustStoreError as exc:
        click.echo(f"mycode: warning: could not record the answer: {exc.strerror}", err=True)
    return None


def _yes(question: str) -> bool:
    """A y/N answer read from the terminal (Enter: no); Ctrl-C and Ctrl-D propagate."""
    from mycode_core.cli.prompts import read_line

    while True:
        reply = read_line(question).strip().lower()
        if reply in ("", "n", "no"):
            return False
        if reply in ("y", "yes"):
            return True
